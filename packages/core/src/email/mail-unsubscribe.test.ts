import { createHmac } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { unsubscribeToken, unsubscribeUrl, verifyUnsubscribeToken } from './mail-unsubscribe.js'
import { emailPreferenceKeys } from './preferences.js'

const secret = 'unsubscribe-secret'
const target = { organizationId: 'org_01ABC', key: 'credits_low' as const, email: 'Ann.O@acme.test' }

/** A token signed exactly as the module signs, over any payload (to test what a valid signature cannot excuse). */
const signed = (payload: object) => {
  const encoded = Buffer.from(JSON.stringify(payload)).toString('base64url')
  const signature = createHmac('sha256', secret)
    .update(`visitor-id/email-unsubscribe/v1.${encoded}`)
    .digest('base64url')
  return `${encoded}.${signature}`
}

describe('unsubscribe tokens', () => {
  it('round-trips every key, and is URL-safe', () => {
    for (const key of emailPreferenceKeys) {
      const token = unsubscribeToken(secret, { ...target, key })
      expect(token).toMatch(/^[\w-]+\.[\w-]{43}$/)
      expect(verifyUnsubscribeToken(secret, token)).toEqual({ ...target, key })
    }
    expect(signed({ o: target.organizationId, k: target.key, e: target.email })).toBe(
      unsubscribeToken(secret, target),
    )
  })

  it('refuses another secret, a changed payload or signature, and malformed tokens', () => {
    const token = unsubscribeToken(secret, target)
    const [payload, signature] = token.split('.') as [string, string]
    const otherPayload = unsubscribeToken(secret, { ...target, key: 'credits_exhausted' }).split('.')[0]
    const refused = [
      token.replace(/^./, (c) => (c === 'e' ? 'f' : 'e')),
      `${otherPayload}.${signature}`,
      `${payload}.${signature.slice(0, -1)}`,
      `${payload}.${signature}x`,
      `${payload}.${signature}.${signature}`,
      payload,
      '',
      '.',
      `${token}${'a'.repeat(3000)}`,
    ]
    for (const bad of refused) expect(verifyUnsubscribeToken(secret, bad)).toBeUndefined()
    expect(verifyUnsubscribeToken('another-secret', token)).toBeUndefined()
    expect(verifyUnsubscribeToken('', token)).toBeUndefined()
  })

  it('refuses a correctly signed token whose key is unknown or whose fields are not strings', () => {
    expect(
      verifyUnsubscribeToken(secret, signed({ o: 'org_1', k: 'newsletter', e: 'a@b.co' })),
    ).toBeUndefined()
    expect(verifyUnsubscribeToken(secret, signed({ o: 1, k: 'credits_low', e: 'a@b.co' }))).toBeUndefined()
    expect(verifyUnsubscribeToken(secret, signed({ k: 'credits_low', e: 'a@b.co' }))).toBeUndefined()
    expect(verifyUnsubscribeToken(secret, signed(['org_1', 'credits_low', 'a@b.co']))).toBeUndefined()
  })

  it('will not sign with an empty secret, nor an unknown key', () => {
    expect(() => unsubscribeToken('', target)).toThrow(/empty/)
    expect(() => unsubscribeToken(secret, { ...target, key: 'newsletter' as never })).toThrow(/unknown/)
  })

  it('builds the route URL under PUBLIC_URL', () => {
    const token = unsubscribeToken(secret, target)
    for (const publicUrl of ['https://id.example.com', 'https://id.example.com/']) {
      const url = new URL(unsubscribeUrl(publicUrl, token))
      expect(`${url.origin}${url.pathname}`).toBe('https://id.example.com/email/unsubscribe')
      expect(verifyUnsubscribeToken(secret, url.searchParams.get('token') ?? '')).toEqual(target)
    }
  })
})
