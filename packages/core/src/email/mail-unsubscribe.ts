// Signed one-click unsubscribe links (docs/decisions.md, "Email"; RFC 8058). The link itself is the
// credential: whoever holds it may turn one email kind off for one organization, nothing more. So
// the token names exactly that (organization, key, recipient) and is signed with HMAC-SHA256; the
// route verifies it and needs no session (mail clients POST it with no cookies).
//
// No expiry, on purpose: people unsubscribe from emails that are months old, mailbox providers and
// CAN-SPAM expect the link to keep working, and what it grants is harmless and undone in the
// settings. Rotating the secret is the way to void every link at once.
import { createHmac } from 'node:crypto'
import { safeEqual } from '../ids.js'
import { type EmailPreferenceKey, emailPreferenceKeys } from './preferences.js'

/** Who unsubscribes from what. */
export interface UnsubscribeTarget {
  organizationId: string
  key: EmailPreferenceKey
  /** The recipient the link was sent to (for the confirmation page and the audit trail). */
  email: string
}

/** The route's path under PUBLIC_URL: GET shows a confirmation page, POST does it. */
export const unsubscribePath = '/email/unsubscribe'

/**
 * Mixed into every signature, so a token can never be a valid signature made for something else
 * with the same secret (and this secret may safely be one the application uses elsewhere too).
 */
const purpose = 'visitor-id/email-unsubscribe/v1'

/** Far longer than any real token; a bigger one is refused before any decoding or hashing. */
const maxTokenLength = 2048

/**
 * A URL-safe token: base64url(JSON payload) `.` base64url(HMAC-SHA256). Throws on an empty
 * secret: an HMAC with an empty key is one anyone could forge.
 *
 * @example unsubscribeToken(secret, { organizationId: 'org_1', key: 'credits_low', email: 'a@b.co' }) // 'eyJvIjoi...'
 */
export function unsubscribeToken(secret: string, target: UnsubscribeTarget): string {
  if (secret === '') throw new Error('the unsubscribe secret is empty')
  if (!emailPreferenceKeys.includes(target.key))
    throw new Error(`unknown email preference key "${target.key}"`)
  // Short field names keep the link short; the order is fixed by this literal.
  const payload = Buffer.from(
    JSON.stringify({ o: target.organizationId, k: target.key, e: target.email }),
  ).toString('base64url')
  return `${payload}.${sign(secret, payload)}`
}

/**
 * The target of a token this secret signed, or undefined when it is malformed, tampered with,
 * signed with another secret, or names a key that no longer exists. Constant-time comparison.
 *
 * @example verifyUnsubscribeToken(secret, url.searchParams.get('token') ?? '') // { organizationId, key, email } | undefined
 */
export function verifyUnsubscribeToken(secret: string, token: string): UnsubscribeTarget | undefined {
  if (secret === '' || token.length > maxTokenLength) return undefined
  const [payload, signature, ...rest] = token.split('.')
  if (!payload || !signature || rest.length > 0) return undefined
  if (!safeEqual(sign(secret, payload), signature)) return undefined
  // Signed by us, so well-formed unless the format changed: check it anyway, it costs nothing.
  let decoded: unknown
  try {
    decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'))
  } catch {
    return undefined
  }
  if (typeof decoded !== 'object' || decoded === null) return undefined
  const { o, k, e } = decoded as Record<string, unknown>
  if (typeof o !== 'string' || typeof e !== 'string' || typeof k !== 'string') return undefined
  if (!(emailPreferenceKeys as readonly string[]).includes(k)) return undefined
  return { organizationId: o, key: k as EmailPreferenceKey, email: e }
}

/**
 * The link for a token: `${publicUrl}/email/unsubscribe?token=...` (a trailing slash on
 * publicUrl is ignored).
 *
 * @example unsubscribeUrl('https://id.example.com', token) // 'https://id.example.com/email/unsubscribe?token=eyJ...'
 */
export function unsubscribeUrl(publicUrl: string, token: string): string {
  return `${publicUrl.replace(/\/+$/, '')}${unsubscribePath}?token=${encodeURIComponent(token)}`
}

function sign(secret: string, payload: string): string {
  return createHmac('sha256', secret).update(`${purpose}.${payload}`).digest('base64url')
}
