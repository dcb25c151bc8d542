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
