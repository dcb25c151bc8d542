import type { PubSub } from '../coordination/ports.js'
import { appError } from '../errors.js'
import { safeEqual, sha256Hex } from '../ids.js'
import type { ApiKeyRow, Repositories } from '../store/entities.js'
import type { Principal } from './auth.js'
import { organizationKeyPattern, partnerKeyPattern } from './keys.js'

/** The pubsub channel on which every process hears of a revoked key (message: the key id). */
export const keyRevokedChannel = 'api-keys:revoked'

export interface KeyAuthenticatorOptions {
  repos: Repositories
  pubsub: PubSub
  /** How long a looked-up key is reused without asking the store (default 60 s). */
  ttlMs?: number
  /** Upper bound on cached keys, so random keys cannot grow memory without limit (default 10,000). */
  maxEntries?: number
  now?: () => number
}

/** Authenticates API keys through an in-process cache that revocations clear in every process. */
export interface KeyAuthenticator {
  /** Subscribes to revocations from other processes; call once before serving. */
  start(): Promise<void>
  /** The principal of a plain key, or `unauthorized` (missing, malformed, unknown, revoked, expired). */
  authenticate(kind: 'organization' | 'partner', plainKey: unknown): Promise<Principal>
  /** Forgets the key here at once, then tells every other process. */
  revoked(keyId: string): Promise<void>
  close(): Promise<void>
}

interface CachedKey {
  principal: Principal | undefined
  keyKind: ApiKeyRow['kind'] | undefined
  /** Epoch ms, or null for no expiry. */
  expiresAt: number | null
  cachedUntil: number
}

// Revocations are remembered longer than any cache entry or store read can live, so a lookup that
// started before a revocation and finished after its message cannot cache the key as active.
const revokedMemoryMs = 10 * 60_000

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
 * Builds the key authenticator of one process.
 * @example const keys = createKeyAuthenticator({ repos, pubsub: coordination.pubsub }); await keys.start()
 */
export function createKeyAuthenticator(options: KeyAuthenticatorOptions): KeyAuthenticator {
  const ttlMs = options.ttlMs ?? 60_000
  const maxEntries = options.maxEntries ?? 10_000
  const now = options.now ?? Date.now
  const cache = new Map<string, CachedKey>()
  const pending = new Map<string, Promise<CachedKey>>()
  const revokedIds = new Map<string, number>()
  let unsubscribe: (() => Promise<void>) | undefined

  const forget = (keyId: string) => {
    const at = now()
    revokedIds.set(keyId, at + revokedMemoryMs)
    for (const [id, until] of revokedIds) if (until <= at) revokedIds.delete(id)
    for (const [hash, entry] of cache) if (entry.principal?.keyId === keyId) cache.delete(hash)
  }

  const lookUp = async (hash: string): Promise<CachedKey> => {
    const [row] = await options.repos.apiKeys.find({ key_hash: hash }, { limit: 1 })
    const usable = row && safeEqual(row.key_hash, hash) && row.status === 'active'
    const entry: CachedKey = {
      // Revoked and unknown keys are cached too: neither can become valid again.
      principal: usable ? toPrincipal(row) : undefined,
      keyKind: row?.kind,
      expiresAt: row?.expires_at ? Date.parse(row.expires_at) : null,
      cachedUntil: now() + ttlMs,
    }
    if (cache.size >= maxEntries) cache.delete(cache.keys().next().value!)
    cache.set(hash, entry)
    return entry
  }

  return {
    async start() {
      unsubscribe ??= await options.pubsub.subscribe(keyRevokedChannel, (keyId) => forget(keyId))
    },

    async authenticate(kind, plainKey) {
      const pattern = kind === 'organization' ? organizationKeyPattern : partnerKeyPattern
      if (typeof plainKey !== 'string' || !pattern.test(plainKey)) throw appError('unauthorized')
      const hash = sha256Hex(plainKey)
      let entry = cache.get(hash)
      if (!entry || entry.cachedUntil <= now()) {
        let lookup = pending.get(hash)
        if (!lookup) {
          lookup = lookUp(hash).finally(() => pending.delete(hash))
          pending.set(hash, lookup)
        }
        entry = await lookup
      }
      const { principal } = entry
      if (!principal || entry.keyKind !== kind || principal.kind !== kind) throw appError('unauthorized')
      if (entry.expiresAt !== null && entry.expiresAt <= now()) throw appError('unauthorized')
      const revokedUntil = revokedIds.get(principal.keyId)
      if (revokedUntil !== undefined && revokedUntil > now()) throw appError('unauthorized')
      return principal
    },

    async revoked(keyId) {
      forget(keyId)
      await options.pubsub.publish(keyRevokedChannel, keyId)
    },

    async close() {
      await unsubscribe?.()
      unsubscribe = undefined
      cache.clear()
    },
  }
}
