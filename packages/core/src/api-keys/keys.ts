import { appError } from '../errors.js'
import { randomToken, sha256Hex } from '../ids.js'

/** Organization keys: `bsk_live_` + 32 lowercase hex. Partner keys: `bsk_partner_` + 32 hex. */
export const organizationKeyPattern = /^bsk_live_[0-9a-f]{32}$/
export const partnerKeyPattern = /^bsk_partner_[0-9a-f]{32}$/
/** Tracking keys are public (they sit in every page): `pk_` + 24 hex. */
export const trackingKeyPattern = /^pk_[0-9a-f]{24}$/

export const keyPrefixLength = 12

export type KeyKind = 'organization' | 'partner'

export interface IssuedKey {
  plainKey: string
  keyHash: string
  keyPrefix: string
}

/** Makes a new secret key; only its hash and prefix are ever stored. */
export function issueKey(kind: KeyKind): IssuedKey {
  const plainKey = randomToken(kind === 'organization' ? 'bsk_live_' : 'bsk_partner_', 16)
  return { plainKey, keyHash: sha256Hex(plainKey), keyPrefix: plainKey.slice(0, keyPrefixLength) }
}

export function newTrackingKey(): string {
  return randomToken('pk_', 12)
}

/** Keys further in the future than this are refused: a key that never expires says so with null. */
const maxExpiryMs = 10 * 365 * 24 * 3600_000

/**
 * A new key's expiry, checked: absent or null is "never", anything else must be an RFC 3339 time in
 * the future and within 10 years (`invalid_request` on `expiresAt` otherwise). Keys of both kinds.
 * @example const expiresAt = keyExpiry('2027-01-01T00:00:00Z') // '2027-01-01T00:00:00.000Z'
 */
export function keyExpiry(expiresAt: string | null | undefined, now = Date.now()): string | null {
  if (!expiresAt) return null
  const invalid = (message: string) =>
    appError('invalid_request', `expiresAt ${message}`, { issues: [{ path: 'expiresAt', message }] })
  const at = Date.parse(expiresAt)
  if (Number.isNaN(at)) throw invalid('must be an RFC 3339 date-time')
  if (at <= now) throw invalid('must be in the future')
  if (at > now + maxExpiryMs) throw invalid('must be within 10 years')
  return new Date(at).toISOString()
}
