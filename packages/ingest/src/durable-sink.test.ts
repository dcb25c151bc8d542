import type { Store } from '@visitor-id/core/store'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterEach, describe, expect, it } from 'vitest'
import { createDurableSink } from './durable-sink.js'
import { createIngestMetrics, createMetricsRegistry } from './metrics.js'
import type { PageViewRow } from './page-view-row.js'
import { openSpool, type SpoolEntry } from './spool.js'

const dirs: { remove: () => void }[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) dir.remove()
})

/** A store whose inserts fail with `failure` while it is set, and records the tokens written. */
function fakeStore() {
  const written: string[] = []
  const state: { failure: Error | undefined } = { failure: undefined }
  const store = {
    async insert(_table: string, _rows: unknown[], options: { dedupToken: string }) {
      if (state.failure) throw state.failure
      written.push(options.dedupToken)
    },
  } as unknown as Store
  return { store, written, state }
}

const queryError = () => Object.assign(new Error('refused'), { kind: 'query' })
const unavailable = () => Object.assign(new Error('down'), { kind: 'unavailable' })

async function setUp(store: Store, onDeadLetter?: (entry: SpoolEntry<PageViewRow>) => Promise<void>) {
  const dir = tempDir('vid-durable-')
  dirs.push(dir)
  const spool = await openSpool<PageViewRow>({ dir: dir.dir, maxBytes: 1 << 20 })
  const metrics = createIngestMetrics(createMetricsRegistry(), () => spool.pendingBytes)
  const durable = createDurableSink({
    store,
    spool,
    metrics,
    retryMinMs: 1,
    retryMaxMs: 4,
    maxReplayAttempts: 3,
    ...(onDeadLetter ? { onDeadLetter } : {}),
  })
  return { spool, durable }
}

let rowCount = 0
/** A page view as far as the sink cares (the fake store reads nothing of it). */
const row = () => ({ event_id: `event-${++rowCount}` }) as unknown as PageViewRow

describe('durable sink', () => {
  it('spools while the store fails and replays once it answers again, then writes directly', async () => {
    const { store, written, state } = fakeStore()
    const { spool, durable } = await setUp(store)
    state.failure = unavailable()
    await durable.sink([row()])
    expect(durable.degraded).toBe(true)
    expect(spool.pendingBytes).toBeGreaterThan(0)
    state.failure = undefined
    await durable.drained()
    expect(durable.degraded).toBe(false)
    expect(spool.pendingBytes).toBe(0)
    await durable.sink([row()])
    expect(written).toHaveLength(2)
    await durable.stop()
    await spool.close()
  })

  it('sets a batch aside after repeated query errors, and keeps retrying when the store is down', async () => {
    const { store, written, state } = fakeStore()
    const setAside: SpoolEntry<PageViewRow>[] = []
    const { spool, durable } = await setUp(store, async (entry) => {
      setAside.push(entry)
    })
    state.failure = queryError()
    await durable.sink([row(), row()])
    await durable.drained()
    expect(setAside).toHaveLength(1)
    expect(setAside[0]!.rows).toHaveLength(2)
    expect(written).toHaveLength(0)
    expect(durable.degraded).toBe(false)

    state.failure = unavailable()
    await durable.sink([row()])
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(setAside).toHaveLength(1)
    expect(durable.degraded).toBe(true)
    state.failure = undefined
    await durable.drained()
    expect(written).toHaveLength(1)
    await durable.stop()
    await spool.close()
  })

  it('holds the replay: the batch being replayed is committed first, none is written while held', async () => {
    const { store, written, state } = fakeStore()
    const { spool, durable } = await setUp(store)
    state.failure = unavailable()
    await durable.sink([row()])
    await durable.sink([row()])
    await durable.stop()
    // A new sink on the spool (the next start), whose first insert takes until `landed` is called.
    let landed: () => void = () => {}
    const slow = {
      async insert(table: string, rows: unknown[], options: { dedupToken: string }) {
        if (written.length === 0) await new Promise<void>((resolve) => (landed = resolve))
        return store.insert(table, rows as object[], options)
      },
    } as unknown as Store
    state.failure = undefined
    const metrics = createIngestMetrics(createMetricsRegistry(), () => spool.pendingBytes)
    const next = createDurableSink({ store: slow, spool, metrics, retryMinMs: 1, retryMaxMs: 4 })
    next.start()
    await new Promise((resolve) => setTimeout(resolve, 20))
    let held = false
    const holding = next.holdReplay().then((release) => {
      held = true
      return release
    })
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(held).toBe(false)
    landed()
    const release = await holding
    const left = spool.pendingBytes
    expect(written).toHaveLength(1)
    expect(left).toBeGreaterThan(0)
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(written).toHaveLength(1)
    expect(spool.pendingBytes).toBe(left)
    release()
    await next.drained()
    expect(written).toHaveLength(2)
    expect(spool.pendingBytes).toBe(0)
    await next.stop()
    await spool.close()
  })
})
