/** Install snippets for the pixel, served by the API's installation-script route. */
export type SnippetType = 'jsSnippet' | 'tagManager'

export const snippetTypes: readonly SnippetType[] = ['jsSnippet', 'tagManager']

export interface SnippetOptions {
  /** Public base URL of the collector, e.g. `https://t.example.com`. */
  host: string
  trackingKey: string
}

// ES5 only: Google Tag Manager's Custom HTML tag rejects newer syntax in older containers.
const stub = 'window.vid=window.vid||function(){(window.vid.q=window.vid.q||[]).push(arguments)};'

/** JSON that is safe inside an HTML script element (no `</script>`, no `<!--`). */
const scriptJson = (value: unknown) =>
  JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029')

/** Text that is safe inside a double-quoted HTML attribute. */
const attribute = (value: string) =>
  value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

function initCall(options: SnippetOptions): string {
  return `vid('init',${scriptJson({ key: options.trackingKey, host: options.host })});`
}

/** `<noscript>` fallback: a 1x1 GIF hit; the page URL travels in the Referer header. */
function noscript(options: SnippetOptions): string {
  const src = attribute(`${options.host}/i.gif?k=${encodeURIComponent(options.trackingKey)}`)
  return `<noscript><img src="${src}" alt="" width="1" height="1" style="display:none" referrerpolicy="no-referrer-when-downgrade"></noscript>`
}

/**
 * The HTML to paste into a site. `jsSnippet`: a queue stub with the init call, an async script
 * tag and a `<noscript>` pixel. `tagManager`: one script that injects the tracker from code, for
 * a Google Tag Manager Custom HTML tag: tag managers rewrite script tags and strip `data-*`
 * attributes, so it relies on neither `document.currentScript` nor attributes.
 * Calls to `vid(...)` made before the tracker loads are queued by the stub and replayed.
 * @example renderSnippet('jsSnippet', { host: 'https://t.example.com', trackingKey: 'pk_...' })
 */
export function renderSnippet(type: SnippetType, options: SnippetOptions): string {
  const safe = { ...options, host: options.host.replace(/\/+$/, '') }
  const src = scriptJson(`${safe.host}/p.js`)
  if (type === 'jsSnippet') {
    return `<script>${stub}${initCall(safe)}</script>\n<script async src=${src}></script>\n${noscript(safe)}`
  }
  if (type === 'tagManager') {
    return `<script>(function(){${stub}${initCall(safe)}var s=document.createElement('script');s.async=true;s.src=${src};var f=document.getElementsByTagName('script')[0];f&&f.parentNode?f.parentNode.insertBefore(s,f):document.head.appendChild(s);})();</script>`
  }
  throw new TypeError(`Unknown snippet type: ${String(type)}`)
}

/** True for a snippet type `renderSnippet` knows (routes answer 400 for anything else). */
export function isSnippetType(value: unknown): value is SnippetType {
  return snippetTypes.includes(value as SnippetType)
}
