/** Install snippets for the pixel. */
export type SnippetType = 'jsSnippet' | 'tagManager'

export const snippetTypes: readonly SnippetType[] = ['jsSnippet', 'tagManager']

export interface SnippetOptions {
  /** Public base URL of the collector, e.g. `https://t.example.com`. */
  host: string
  trackingKey: string
}

const stub = 'window.vid=window.vid||function(){(window.vid.q=window.vid.q||[]).push(arguments)};'

/** JSON that is safe inside an HTML script element (no `</script>`, no `<!--`). */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c')

function initCall(options: SnippetOptions): string {
  return `vid('init',${scriptJson({ key: options.trackingKey, host: options.host })});`
}

/**
 * The HTML to paste into a site: a queue stub, the init call and the async script tag. The
 * tag-manager variant injects the script from code, since tag managers rewrite script tags and
 * strip `data-*` attributes; it relies on neither `document.currentScript` nor attributes.
 * @example renderSnippet('jsSnippet', { host: 'https://t.example.com', trackingKey: 'pk_...' })
 */
export function renderSnippet(type: SnippetType, options: SnippetOptions): string {
  const host = options.host.replace(/\/+$/, '')
  const safe = { ...options, host }
  const src = scriptJson(`${host}/p.js`)
  if (type === 'jsSnippet') {
    return `<script>${stub}${initCall(safe)}</script>\n<script async src=${src}></script>`
  }
  return `<script>(function(){${stub}${initCall(safe)}var s=document.createElement('script');s.async=true;s.src=${src};var f=document.getElementsByTagName('script')[0];f&&f.parentNode?f.parentNode.insertBefore(s,f):document.head.appendChild(s);})();</script>`
}
