import { appError } from '../errors.js'
import { safeEqual, sha256Hex } from '../ids.js'
import type { ApiKeyRow, Repositories } from '../store/entities.js'
import { organizationKeyPattern, partnerKeyPattern } from './keys.js'

/** Who is calling: an organization key or a partner key. */
export type Principal =
  | { kind: 'organization'; keyId: string; organizationId: string; userId: string | null; scopes: string[] }
  | { kind: 'partner'; keyId: string; partnerId: string; scopes: string[] }

function isUsable(row: ApiKeyRow, now: number): boolean {
  if (row.status !== 'active') return false
  return row.expires_at === null || Date.parse(row.expires_at) > now
}

/**
 * Resolves a plain key to its principal, or throws `unauthorized` (missing, malformed, unknown,
 * revoked or expired: the caller cannot tell which).
 * @example const principal = await authenticateKey(repos, 'organization', request.headers['x-api-key'])
 */
export async function authenticateKey(
  repos: Repositories,
  kind: 'organization' | 'partner',
  plainKey: unknown,
  now = Date.now(),
): Promise<Principal> {
  const pattern = kind === 'organization' ? organizationKeyPattern : partnerKeyPattern
  if (typeof plainKey !== 'string' || !pattern.test(plainKey)) throw appError('unauthorized')
  const hash = sha256Hex(plainKey)
  const [row] = await repos.apiKeys.find({ key_hash: hash }, { limit: 1 })
  if (!row || !safeEqual(row.key_hash, hash) || row.kind !== kind || !isUsable(row, now)) {
    throw appError('unauthorized')
  }
  if (row.kind === 'organization' && row.organization_id) {
    return {
      kind: 'organization',
      keyId: row.id,
      organizationId: row.organization_id,
      userId: row.created_by_user_id,
      scopes: row.scopes,
    }
  }
  if (row.kind === 'partner' && row.partner_id) {
    return { kind: 'partner', keyId: row.id, partnerId: row.partner_id, scopes: row.scopes }
  }
  throw appError('unauthorized')
}
