// Sealed tokens open only as sealed: same SECRET_KEY, same context, not a bit changed.
import { describe, expect, it } from 'vitest'
import { secretBox } from './secret-box.js'

describe('secretBox', () => {
  const box = secretBox('a'.repeat(32))
  const context = 'integration:org-1:searchAds'

  it('round-trips, with a fresh IV each time, and never holds the plain text', () => {
    const first = box.seal('ya29.token-value', context)
    const second = box.seal('ya29.token-value', context)
    expect(first).not.toBe(second)
    expect(first).toMatch(/^v1\.[\w-]{16}\.[\w-]{22}\.[\w-]+$/)
    expect(first).not.toContain('token-value')
    expect(box.open(first, context)).toBe('ya29.token-value')
  })

  it('refuses another context, another key, a changed byte and garbage', () => {
    const sealed = box.seal('refresh-token', context)
    expect(() => box.open(sealed, 'integration:org-2:searchAds')).toThrow()
    expect(() => secretBox('b'.repeat(32)).open(sealed, context)).toThrow()
    const parts = sealed.split('.')
    const data = Buffer.from(parts[3]!, 'base64url')
    data[0] = data[0]! ^ 1
    expect(() => box.open([...parts.slice(0, 3), data.toString('base64url')].join('.'), context)).toThrow()
    expect(() => box.open('not sealed', context)).toThrow('not a sealed value')
  })
})
