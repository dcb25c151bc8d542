import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMemoryCoordination } from '../coordination/memory.js'
import type { Coordination } from '../coordination/ports.js'
import { newId } from '../ids.js'
import { createPartner } from '../organizations/tenancy.js'
import { createRepositories, type Repositories } from '../repositories.js'
import { createStore, type Store } from '../store/client.js'
import { migrate } from '../store/migrate.js'
import { createReadModel, type ReadModel } from '../store/read-model.js'
import { revokeApiKey } from './api-keys.js'
import { createApiKey } from './issue.js'
import { createKeyAuthenticator } from './key-authenticator.js'
import { createKeyUsageRecorder, readKeyUsage } from './key-usage.js'
import { apiKeysTable } from './rows.js'

// One embedded engine per process: every test in this file shares one data directory. Keys are read
// through a read model, as the server does; "another process" is a second read model on the same pubsub.
const tmp = tempDir('vid-keys-')
let store: Store
let coordination: Coordination
let lookups = 0
const readModels: ReadModel[] = []

/** The repositories of one process: a read model of its own over the real store, counting key lookups. */
async function processRepos(ttlMs?: number, now?: () => number): Promise<Repositories> {
  const readModel = createReadModel({
    pubsub: coordination.pubsub,
    ...(ttlMs ? { ttlMs } : {}),
    ...(now ? { now } : {}),
  })
  await readModel.start()
  readModels.push(readModel)
  const plain = createRepositories(store)
  const find = plain.apiKeys.find
  plain.apiKeys.find = async (...args) => {
    lookups += 1
    return find(...args)
  }
  const repos = createRepositories(store, readModel)
  return { ...repos, apiKeys: readModel.cached(apiKeysTable, plain.apiKeys) }
}

let repos: Repositories

beforeAll(async () => {
  store = createStore({ database: 'default', dataDir: tmp.dir })
  await migrate(store)
  coordination = createMemoryCoordination()
  repos = await processRepos()
})

afterAll(async () => {
  await Promise.all(readModels.map((readModel) => readModel.close()))
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
  it('looks a key up once however many requests, even concurrent ones', async () => {
    const there = await processRepos()
    const keys = createKeyAuthenticator({ repos: there })
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

  it('remembers unknown keys too, and refuses malformed ones without a lookup', async () => {
    const keys = createKeyAuthenticator({ repos: await processRepos() })
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
    const keys = createKeyAuthenticator({ repos })
    const { plainKey: partnerKey } = await createPartner(repos, { name: 'p' })
    const { plainKey } = await newKey()
    await rejects(keys.authenticate('organization', partnerKey))
    await rejects(keys.authenticate('partner', plainKey))
    expect((await keys.authenticate('partner', partnerKey)).kind).toBe('partner')
  })

  it('refuses a remembered key once it expires', async () => {
    let now = Date.now()
    const keys = createKeyAuthenticator({ repos, now: () => now })
    const { plainKey } = await newKey(new Date(now + 5_000).toISOString())
    await keys.authenticate('organization', plainKey)
    now += 5_001
    await rejects(keys.authenticate('organization', plainKey))
  })

  it('rereads the store once the copy expires', async () => {
    let now = Date.now()
    const here = await processRepos(1_000, () => now)
    const keys = createKeyAuthenticator({ repos: here })
    const { apiKey, plainKey } = await newKey()
    await keys.authenticate('organization', plainKey)
    // Revoked where no announcement reaches this process: its copy answers until it expires.
    await revokeApiKey(createRepositories(store), organizationId, apiKey.id)
    await keys.authenticate('organization', plainKey)
    now += 1_001
    await rejects(keys.authenticate('organization', plainKey))
  })

  it('drops a key revoked by another process at once', async () => {
    const here = createKeyAuthenticator({ repos: await processRepos() })
    const there = await processRepos()
    const { apiKey, plainKey } = await newKey()
    await here.authenticate('organization', plainKey)
    await revokeApiKey(there, organizationId, apiKey.id)
    await rejects(here.authenticate('organization', plainKey))
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
