import { describe, expect, it } from 'vitest'
import { isSnippetType, renderSnippet, snippetTypes } from './snippets.js'

const options = { host: 'https://t.example.com/', trackingKey: 'pk_0123456789abcdef01234567' }

describe('renderSnippet', () => {
  it('jsSnippet: stub queue with init, async script tag, noscript pixel', () => {
    const html = renderSnippet('jsSnippet', options)
    expect(html).toContain('window.vid=window.vid||function(){')
    expect(html).toContain(`vid('init',{"key":"${options.trackingKey}","host":"https://t.example.com"});`)
    expect(html).toContain('<script async src="https://t.example.com/p.js"></script>')
    expect(html).toContain(`<noscript><img src="https://t.example.com/i.gif?k=${options.trackingKey}"`)
  })

  it('tagManager: one script, no currentScript, no data attributes, ES5 only', () => {
    const html = renderSnippet('tagManager', options)
    expect(html.match(/<script>/g)).toHaveLength(1)
    expect(html).not.toMatch(/currentScript|data-/)
    expect(html).not.toMatch(/=>|\bconst\b|\blet\b|`/)
    expect(html).toContain('s.src="https://t.example.com/p.js"')
    // The script body is valid JavaScript.
    const body = html.replace(/^<script>/, '').replace(/<\/script>$/, '')
    expect(() => new Function(body)).not.toThrow()
  })

  it('cannot be broken out of by a hostile host or key', () => {
    const html = renderSnippet('jsSnippet', {
      host: 'https://x.test/</script><script>alert(1)//',
      trackingKey: '"><b>',
    })
    expect(html.match(/<\/script>/g)).toHaveLength(2)
    expect(html).not.toContain('"><b>')
  })

  it('knows its types', () => {
    expect(snippetTypes).toEqual(['jsSnippet', 'tagManager'])
    expect(isSnippetType('jsSnippet')).toBe(true)
    expect(isSnippetType('iframe')).toBe(false)
    expect(() => renderSnippet('iframe' as never, options)).toThrow(/Unknown snippet type/)
  })
})
