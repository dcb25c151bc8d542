import type { Principal } from '../access/auth.js'
import { appError } from '../errors.js'
import { safeEqual, sha256Hex } from '../ids.js'
import type { Repositories } from '../repositories.js'
import { organizationKeyPattern, partnerKeyPattern } from './keys.js'
import type { ApiKeyRow } from './rows.js'

export interface KeyAuthenticatorOptions {
  /**
   * The repositories; with the process's read model (store/read-model.ts) a key is looked up once
   * and a revocation reaches every process at once.
   */
  repos: Repositories
  now?: () => number
}

/** Authenticates API keys: a malformed key costs nothing, a known one a memory read. */
export interface KeyAuthenticator {
  /** The principal of a plain key, or `unauthorized` (missing, malformed, unknown, revoked, expired). */
  authenticate(kind: 'organization' | 'partner', plainKey: unknown): Promise<Principal>
}

function toPrincipal(row: ApiKeyRow): Principal | undefined {
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
  return undefined
}

/**
 * Builds the key authenticator of one process. Keys are found by the SHA-256 of the plain key
 * (only hashes are stored), compared again in constant time.
 * @example const keys = createKeyAuthenticator({ repos }); await keys.authenticate('organization', header)
 */
export function createKeyAuthenticator(options: KeyAuthenticatorOptions): KeyAuthenticator {
  const now = options.now ?? Date.now
  return {
    async authenticate(kind, plainKey) {
      const pattern = kind === 'organization' ? organizationKeyPattern : partnerKeyPattern
      if (typeof plainKey !== 'string' || !pattern.test(plainKey)) throw appError('unauthorized')
      const hash = sha256Hex(plainKey)
      const [row] = await options.repos.apiKeys.find({ key_hash: hash }, { limit: 1 })
      if (!row || !safeEqual(row.key_hash, hash) || row.status !== 'active' || row.kind !== kind) {
        throw appError('unauthorized')
      }
      if (row.expires_at && Date.parse(row.expires_at) <= now()) throw appError('unauthorized')
      const principal = toPrincipal(row)
      if (!principal) throw appError('unauthorized')
      return principal
    },
  }
}
