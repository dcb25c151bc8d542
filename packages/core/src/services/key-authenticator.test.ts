import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMemoryCoordination } from '../coordination/memory.js'
import type { Coordination } from '../coordination/ports.js'
import { newId } from '../ids.js'
import { createStore, type Store } from '../store/client.js'
import { createRepositories, type Repositories } from '../store/entities.js'
import { migrate } from '../store/migrate.js'
import { tempDir } from '../testing/temp-dir.js'
import { revokeApiKey } from './api-keys.js'
import { createKeyAuthenticator } from './key-authenticator.js'
import { createKeyUsageRecorder, readKeyUsage } from './key-usage.js'
import { createApiKey, createPartner } from './tenancy.js'

// One embedded engine per process: every test in this file shares one data directory.
const tmp = tempDir('vid-keys-')
let store: Store
let repos: Repositories
let coordination: Coordination
let lookups = 0
let holdLookups: Promise<void> | undefined

beforeAll(async () => {
  store = createStore({ database: 'default', dataDir: tmp.dir })
  await migrate(store)
  repos = createRepositories(store)
  // Counts (and can hold back) key lookups; the store underneath is the real one.
  const find = repos.apiKeys.find
  repos.apiKeys.find = async (...args) => {
    lookups += 1
    await holdLookups
    return find(...args)
  }
  coordination = createMemoryCoordination()
})

afterAll(async () => {
  await coordination.close()
  await store.close()
  tmp.remove()
})

const organizationId = newId()
const newKey = (expiresAt: string | null = null) =>
  createApiKey(repos, { organizationId, createdByUserId: null, name: 'k', scopes: ['read'], expiresAt })

const rejects = (promise: Promise<unknown>) =>
  expect(promise).rejects.toMatchObject({ code: 'unauthorized', statusCode: 401 })

describe('createKeyAuthenticator', () => {
  it('caches a key: one store lookup however many requests, even concurrent ones', async () => {
    const keys = createKeyAuthenticator({ repos, pubsub: coordination.pubsub })
    const { apiKey, plainKey } = await newKey()
    const before = lookups
    const principals = await Promise.all(
      Array.from({ length: 5 }, () => keys.authenticate('organization', plainKey)),
    )
    await keys.authenticate('organization', plainKey)
    expect(lookups - before).toBe(1)
    expect(principals[0]).toEqual({
      kind: 'organization',
      keyId: apiKey.id,
      organizationId,
      userId: null,
      scopes: ['read'],
    })
  })

  it('caches unknown keys too, and refuses malformed ones without a lookup', async () => {
    const keys = createKeyAuthenticator({ repos, pubsub: coordination.pubsub })
    const before = lookups
    const unknown = `bsk_live_${'0'.repeat(32)}`
    await rejects(keys.authenticate('organization', unknown))
    await rejects(keys.authenticate('organization', unknown))
    for (const malformed of [undefined, 42, ['x'], 'bsk_live_0', `bsk_live_${'A'.repeat(32)}`]) {
      await rejects(keys.authenticate('organization', malformed))
    }
    expect(lookups - before).toBe(1)
  })

  it('refuses a key of the other kind', async () => {
    const keys = createKeyAuthenticator({ repos, pubsub: coordination.pubsub })
    const { plainKey: partnerKey } = await createPartner(repos, { name: 'p' })
    const { plainKey } = await newKey()
    await rejects(keys.authenticate('organization', partnerKey))
    await rejects(keys.authenticate('partner', plainKey))
    expect((await keys.authenticate('partner', partnerKey)).kind).toBe('partner')
  })

  it('refuses a cached key once it expires', async () => {
    let now = Date.now()
    const keys = createKeyAuthenticator({ repos, pubsub: coordination.pubsub, now: () => now })
    const { plainKey } = await newKey(new Date(now + 5_000).toISOString())
    await keys.authenticate('organization', plainKey)
    now += 5_001
    await rejects(keys.authenticate('organization', plainKey))
  })

  it('rereads the store after the TTL', async () => {
    let now = Date.now()
    const keys = createKeyAuthenticator({ repos, pubsub: coordination.pubsub, ttlMs: 1_000, now: () => now })
    const { apiKey, plainKey } = await newKey()
    await keys.authenticate('organization', plainKey)
    // Revoked without a broadcast: the cache answers until its entry expires.
    await revokeApiKey(repos, { revoked: async () => {} }, organizationId, apiKey.id)
    await keys.authenticate('organization', plainKey)
    now += 1_001
    await rejects(keys.authenticate('organization', plainKey))
  })

  it('drops a key revoked by another process at once', async () => {
    const here = createKeyAuthenticator({ repos, pubsub: coordination.pubsub })
    const there = createKeyAuthenticator({ repos, pubsub: coordination.pubsub })
    await here.start()
    const { apiKey, plainKey } = await newKey()
    await here.authenticate('organization', plainKey)
    await revokeApiKey(repos, there, organizationId, apiKey.id)
    await rejects(here.authenticate('organization', plainKey))
    await here.close()
  })

  it('does not cache a key as active when its revocation lands during the lookup', async () => {
    const keys = createKeyAuthenticator({ repos, pubsub: coordination.pubsub })
    await keys.start()
    const { apiKey, plainKey } = await newKey()
    let release!: () => void
    holdLookups = new Promise((resolve) => {
      release = resolve
    })
    // A lookup that read the row before the revocation was written but finishes after its
    // announcement: here the announcement comes while the lookup is held and the row stays active.
    const pending = keys.authenticate('organization', plainKey)
    await coordination.pubsub.publish('api-keys:revoked', apiKey.id)
    release()
    holdLookups = undefined
    await rejects(pending)
    await keys.close()
  })
})

describe('createKeyUsageRecorder', () => {
  it('writes at most once per interval per key and never throws at the caller', async () => {
    let now = Date.now()
    const errors: unknown[] = []
    const usage = createKeyUsageRecorder({
      store,
      intervalMs: 60_000,
      onError: (e) => errors.push(e),
      now: () => now,
    })
    const keyId = `key_${newId()}`
    for (let i = 0; i < 10; i++) usage.touch(keyId)
    await usage.close()
    now += 60_000
    usage.touch(keyId)
    await usage.close()
    const rows = await store.query<{ n: number }>(
      'SELECT count() AS n FROM api_key_usage WHERE key_id = {k:String}',
      {
        k: keyId,
      },
    )
    expect(rows[0]!.n).toBe(2)
    expect((await readKeyUsage(store, [keyId])).get(keyId)).toBe(new Date(now).toISOString())
    expect(errors).toEqual([])
  })

  it('reports a failed write and lets the next use retry it', async () => {
    const errors: unknown[] = []
    const failing = { ...store, insert: async () => Promise.reject(new Error('store down')) }
    const usage = createKeyUsageRecorder({ store: failing, onError: (e) => errors.push(e) })
    usage.touch('key_a')
    await usage.close()
    usage.touch('key_a')
    await usage.close()
    expect(errors).toHaveLength(2)
  })
})
