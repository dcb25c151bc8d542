import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { timeUntil } from '@visitor-id/testing/poll'
import { organizationRow } from '@visitor-id/testing/rows'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type OrganizationRow, organizationsTable } from '../accounts/rows.js'
import { createMemoryCoordination, createRedisCoordination } from '../coordination/index.js'
import type { Coordination } from '../coordination/ports.js'
import { newId } from '../ids.js'
import { createStore, type Store } from './client.js'
import { migrate } from './migrate.js'
import { createReadModel, type ReadModel, type ReadModelOptions } from './read-model.js'
import { createEntityRepository, type EntityRepository } from './repository.js'

// Read models over the real embedded store. "Two processes" are two read models on one pubsub: each
// has its own copies, and only the announcement tells one of the other's writes.
const tmp = tempDir('vid-read-model-')
let store: Store
let coordination: Coordination

beforeAll(async () => {
  store = createStore({ database: 'default', dataDir: tmp.dir })
  await migrate(store)
  coordination = createMemoryCoordination()
})

afterAll(async () => {
  await coordination.close()
  await store.close()
  tmp.remove()
})

const organization = organizationRow

/** The real repository, counting its reads and able to hold them back or fail them. */
function observed(storeUnder = store) {
  const repository = createEntityRepository(storeUnder, organizationsTable)
  const state = { reads: 0, hold: undefined as Promise<void> | undefined, fail: false }
  // Counts the read, fails it while the store is "down", and holds its answer back, after the
  // store has answered, while `hold` is pending.
  const gate = async <T>(read: () => Promise<T>): Promise<T> => {
    state.reads += 1
    if (state.fail) throw new Error('store down')
    const hold = state.hold
    const answer = await read()
    await hold
    return answer
  }
  const counted: EntityRepository<OrganizationRow> = {
    ...repository,
    get: (key) => gate(() => repository.get(key)),
    find: (filter, options) => gate(() => repository.find(filter, options)),
    count: (filter) => gate(() => repository.count(filter)),
  }
  return { repository: counted, state }
}

async function readModelProcess(options: Partial<ReadModelOptions> = {}, pubsub = coordination.pubsub) {
  const readModel = createReadModel({ pubsub, ...options })
  await readModel.start()
  const { repository, state } = observed()
  return { readModel, organizations: readModel.cached(organizationsTable, repository), state }
}

describe('createReadModel', () => {
  it('answers repeated and concurrent reads from one store read', async () => {
    const { organizations, state, readModel } = await readModelProcess()
    const row = await organizations.save(organization({ agency_id: newId() }))
    state.reads = 0
    const other = await readModelProcess()
    const reads = await Promise.all(Array.from({ length: 5 }, () => other.organizations.get({ id: row.id })))
    await other.organizations.get({ id: row.id })
    expect(reads.every((read) => read?.name === 'Acme')).toBe(true)
    expect(other.state.reads).toBe(1)
    await other.organizations.find({ agency_id: row.agency_id })
    await other.organizations.find({ agency_id: row.agency_id })
    await other.organizations.count({ agency_id: row.agency_id })
    await other.organizations.count({ agency_id: row.agency_id })
    expect(other.state.reads).toBe(3)
    // The writer reads its own write from memory.
    expect((await organizations.get({ id: row.id }))?.name).toBe('Acme')
    expect(state.reads).toBe(0)
    await Promise.all([readModel.close(), other.readModel.close()])
  })

  it('shows a write to every process at once: gets, finds and counts', async () => {
    const here = await readModelProcess()
    const there = await readModelProcess()
    const agency = newId()
    const row = await here.organizations.save(organization({ agency_id: agency }))
    expect((await there.organizations.get({ id: row.id }))?.name).toBe('Acme')
    expect(await there.organizations.count({ agency_id: agency })).toBe(1)
    await here.organizations.save({ ...row, name: 'Renamed' })
    await here.organizations.save(organization({ agency_id: agency }))
    expect((await there.organizations.get({ id: row.id }))?.name).toBe('Renamed')
    expect(await there.organizations.count({ agency_id: agency })).toBe(2)
    expect((await there.organizations.find({ agency_id: agency })).map((o) => o.name).sort()).toEqual([
      'Acme',
      'Renamed',
    ])
    await here.organizations.remove({ id: row.id })
    expect(await there.organizations.get({ id: row.id })).toBeUndefined()
    expect(await here.organizations.get({ id: row.id })).toBeUndefined()
    await Promise.all([here.readModel.close(), there.readModel.close()])
  })

  it('does not keep a read that a change overtook', async () => {
    const here = await readModelProcess()
    const there = await readModelProcess()
    const row = await here.organizations.save(organization())
    let release!: () => void
    there.state.hold = new Promise((resolve) => {
      release = resolve
    })
    // The held read has the old row from the store when the change lands. A read that starts after
    // the change must not wait for it and share its answer, and its answer must not be kept.
    const held = there.organizations.get({ id: row.id })
    await sleep(50)
    await here.organizations.save({ ...row, name: 'Changed' })
    there.state.hold = undefined
    expect((await there.organizations.get({ id: row.id }))?.name).toBe('Changed')
    release()
    expect((await held)?.name).toBe('Acme')
    expect((await there.organizations.get({ id: row.id }))?.name).toBe('Changed')
    await Promise.all([here.readModel.close(), there.readModel.close()])
  })

  it('asks the store again once a copy expires', async () => {
    let clock = Date.now()
    const { organizations, state, readModel } = await readModelProcess({ ttlMs: 1_000, now: () => clock })
    const row = await organizations.save(organization())
    // A write the read model never hears of (another process whose announcement was lost).
    await createEntityRepository(store, organizationsTable).save({ ...row, name: 'Unannounced' })
    expect((await organizations.get({ id: row.id }))?.name).toBe('Acme')
    clock += 1_001
    expect((await organizations.get({ id: row.id }))?.name).toBe('Unannounced')
    expect(state.reads).toBe(1)
    await readModel.close()
  })

  it('serves an expired copy while the store is down, and fails without one', async () => {
    let clock = Date.now()
    const { organizations, state, readModel } = await readModelProcess({ ttlMs: 1_000, now: () => clock })
    const row = await createEntityRepository(store, organizationsTable).save(organization())
    expect((await organizations.get({ id: row.id }))?.id).toBe(row.id)
    state.fail = true
    clock += 1_001
    expect((await organizations.get({ id: row.id }))?.id).toBe(row.id)
    await expect(organizations.get({ id: newId() })).rejects.toThrow('store down')
    state.fail = false
    await readModel.close()
  })

  it('keeps at most maxEntries copies per table, unknown ids included', async () => {
    const { organizations, state, readModel } = await readModelProcess({ maxEntries: 3 })
    const ids = Array.from({ length: 4 }, () => newId())
    for (const id of ids) expect(await organizations.get({ id })).toBeUndefined()
    state.reads = 0
    await organizations.get({ id: ids[3]! })
    expect(state.reads).toBe(0)
    await organizations.get({ id: ids[0]! })
    expect(state.reads).toBe(1)
    await readModel.close()
  })

  it('hands out frozen rows and fresh arrays, so no caller can change a shared copy', async () => {
    const { organizations, readModel } = await readModelProcess()
    const agency = newId()
    const row = await organizations.save(organization({ agency_id: agency }))
    const copy = (await organizations.get({ id: row.id }))!
    expect(() => {
      ;(copy as { name: string }).name = 'x'
    }).toThrow(TypeError)
    const list = await organizations.find({ agency_id: agency })
    list.pop()
    expect(await organizations.find({ agency_id: agency })).toHaveLength(1)
    // The caller's own object stays its own.
    row.name = 'still mine'
    expect((await organizations.get({ id: row.id }))?.name).toBe('Acme')
    await readModel.close()
  })
})

// The same with two Redis connections: two processes' worth of pubsub.
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const probe = createRedisCoordination({ url: redisUrl, prefix: 'vid-probe:', onError: () => {} })
const redisUp = await probe.ping().finally(() => probe.close())
if (!redisUp && process.env.CI !== 'true')
  console.warn(`\n!!! SKIPPING the read model's Redis test: no Redis at ${redisUrl}\n`)

describe.skipIf(!redisUp && process.env.CI !== 'true')('createReadModel on Redis', () => {
  let a: Coordination
  let b: Coordination
  let readModels: ReadModel[] = []

  beforeAll(() => {
    const prefix = `vid-test-${randomUUID().slice(0, 8)}:`
    a = createRedisCoordination({ url: redisUrl, prefix })
    b = createRedisCoordination({ url: redisUrl, prefix })
  })

  afterAll(async () => {
    await Promise.all(readModels.map((readModel) => readModel.close()))
    await Promise.all([a?.close(), b?.close()])
  })

  it('shows a change made through one connection to the other within a second', async () => {
    const here = await readModelProcess({}, a.pubsub)
    const there = await readModelProcess({}, b.pubsub)
    readModels = [here.readModel, there.readModel]
    const row = await here.organizations.save(organization())
    expect((await there.organizations.get({ id: row.id }))?.name).toBe('Acme')
    await here.organizations.save({ ...row, name: 'Changed' })
    const arrived = await timeUntil(
      async () => (await there.organizations.get({ id: row.id }))?.name === 'Changed',
      1000,
    )
    expect(arrived).toBeLessThan(1000)
  })
})
