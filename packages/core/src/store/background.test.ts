import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { backgroundSettings, backgroundStore, createStore, type Store } from './client.js'

// One embedded engine per process: one request session, two background sessions.
const tmp = tempDir('vid-store-background-')
let store: Store

beforeAll(() => {
  store = createStore({ database: 'default', dataDir: tmp.dir, sessions: 1, backgroundSessions: 2 })
})

afterAll(async () => {
  await store.close()
  tmp.remove()
})

const settingsOf = async (on: Store) => {
  const [row] = await on.query<{ priority: number; threads: number }>(
    "SELECT getSetting('priority') AS priority, getSetting('max_threads') AS threads",
  )
  return { priority: Number(row?.priority), threads: Number(row?.threads) }
}

/** A query that takes about `ms` on its session without using a core. */
const slowQuery = (ms: number) => `SELECT sleepEachRow(${ms / 10_000}) FROM numbers(10) FORMAT Null`

const preempted = async () => {
  const [row] = await store.query<{ value: number }>(
    "SELECT sum(value) AS value FROM system.events WHERE event = 'QueryPreempted'",
  )
  return Number(row?.value ?? 0)
}

describe('background work (store.background)', () => {
  it('runs at a lower engine priority and on fewer threads than requests', async () => {
    const background = backgroundStore(store)
    expect(background).not.toBe(store)
    expect(backgroundStore(background)).toBe(background)
    const foreground = await settingsOf(store)
    const passes = await settingsOf(background)
    // 1 is the highest priority; the engine pauses a query while one of a smaller number runs.
    expect(foreground.priority).toBe(1)
    expect(passes.priority).toBe(backgroundSettings.priority)
    expect(passes.priority).toBeGreaterThan(foreground.priority)
    expect(passes.threads).toBe(backgroundSettings.max_threads)
    // Each of the two background sessions has them, whichever a call lands on.
    const both = await Promise.all([settingsOf(background), settingsOf(background)])
    expect(both).toEqual([passes, passes])
  })

  it('never queues a request behind background work', async () => {
    const background = backgroundStore(store)
    // Both background sessions busy for about 1.5 s.
    const started = performance.now()
    const passes = Promise.all([background.command(slowQuery(1500)), background.command(slowQuery(1500))])
    await new Promise((resolve) => setTimeout(resolve, 100))
    const requestStarted = performance.now()
    expect(await store.query('SELECT 1 AS one')).toEqual([{ one: 1 }])
    const requestMs = performance.now() - requestStarted
    await passes
    const passesMs = performance.now() - started
    expect(passesMs).toBeGreaterThan(1200)
    // The request's session was free: it answered while the passes were still running.
    expect(requestMs).toBeLessThan(passesMs - 600)
  })

  it('pauses a background query while a request runs (engine priority)', async () => {
    const before = await preempted()
    const heavy = 'SELECT sum(cityHash64(number)) AS s FROM numbers(100000000) FORMAT Null'
    const pass = backgroundStore(store).command(heavy)
    for (let i = 0; i < 3; i++) await store.command(heavy)
    await pass
    expect(await preempted()).toBeGreaterThan(before)
  })
})
