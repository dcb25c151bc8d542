import { spawn } from 'node:child_process'
import { once } from 'node:events'
import path from 'node:path'
import { toErrorBody } from '@visitor-id/core/http-errors'
import { bootstrapIfEmpty } from '@visitor-id/core/organizations'
import { createRepositories, type Repositories } from '@visitor-id/core/repositories'
import { createStore, migrate, type Store, StoreError } from '@visitor-id/core/store'
import {
  createBatchWriter,
  createDurableSink,
  createHitPipeline,
  createIngestMetrics,
  createMetricsRegistry,
  createSpoolFirstSink,
  createTrackingKeyCache,
  decodePageViewRow,
  encodePageViewRow,
  ingestPlugin,
  openSpool,
  type PageViewRow,
  pageViewColumns,
  toColumnValues,
} from '@visitor-id/ingest'
import { blankPageViewRow } from '@visitor-id/testing/page-view-row'
import { tempDir } from '@visitor-id/testing/temp-dir'
import Fastify from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chromeUserAgent, pixelHit } from './fixtures/hits.js'

// Durability of the write path against the real embedded engine: batches that ClickHouse refuses
// are spooled, acknowledged, and replayed exactly once when it answers again, also after kill -9.
const data = tempDir('vid-durable-')
let store: Store
let repos: Repositories
let trackingKey: string
let organizationId: string

beforeAll(async () => {
  store = createStore({ database: 'default', dataDir: data.dir })
  await migrate(store)
  repos = createRepositories(store)
  const boot = await bootstrapIfEmpty(repos, data.dir)
  if (!boot.created) throw new Error('expected a fresh store')
  trackingKey = boot.bootstrap.trackingKey
  organizationId = boot.bootstrap.organizationId
})

afterAll(async () => {
  await store?.close()
  data.remove()
})

const pathCounts = async (prefix: string) => {
  const rows = await store.query<{ path: string; n: number }>(
    'SELECT path, count() AS n FROM page_views WHERE startsWith(path, {prefix:String}) GROUP BY path',
    { prefix },
  )
  return new Map(rows.map((row) => [row.path, Number(row.n)]))
}

const newMetrics = (spool: { pendingBytes: number }) =>
  createIngestMetrics(createMetricsRegistry(), () => spool.pendingBytes)

describe('spool and replay', () => {
  it('spools while ClickHouse refuses connections, then replays every batch exactly once', async () => {
    const dir = path.join(data.dir, 'spool-refused')
    const refusing = createStore({ url: 'http://127.0.0.1:1', database: 'default', dataDir: data.dir })
    const spool = await openSpool<PageViewRow>({ dir, maxBytes: 1 << 24 })
    const metrics = newMetrics(spool)
    const durable = createDurableSink({ store: refusing, spool, metrics, retryMinMs: 60_000 })
    const writer = createBatchWriter({ sink: durable.sink, maxRows: 10, maxMs: 5 })
    const rows = Array.from({ length: 100 }, (_, n) => row(`/refused/${n}`))
    await Promise.all(Array.from({ length: 25 }, (_, i) => writer.add(rows.slice(i * 4, i * 4 + 4))))
    expect(durable.degraded).toBe(true)
    expect(metrics.registry.render()).toMatch(/^vid_ingest_hits_spooled_total 100$/m)
    expect(spool.pendingBytes).toBeGreaterThan(0)
    await writer.close()
    await durable.stop()
    await spool.close()
    await refusing.close()
    expect((await pathCounts('/refused/')).size).toBe(0)

    // "ClickHouse is back": a new process opens the same spool with the real store.
    const reopened = await openSpool<PageViewRow>({ dir, maxBytes: 1 << 24 })
    const replayMetrics = newMetrics(reopened)
    const replay = createDurableSink({ store, spool: reopened, metrics: replayMetrics })
    replay.start()
    await replay.drained()
    const counts = await pathCounts('/refused/')
    expect(counts.size).toBe(100)
    expect([...counts.values()].every((n) => n === 1)).toBe(true)
    expect(replayMetrics.registry.render()).toMatch(/^vid_ingest_hits_replayed_total 100$/m)
    expect(reopened.pendingBytes).toBe(0)
    await replay.stop()
    await reopened.close()
  })

  it('a replay that landed but was not committed (crash in between) is not duplicated', async () => {
    const dir = path.join(data.dir, 'spool-crash')
    const spool = await openSpool<PageViewRow>({ dir, maxBytes: 1 << 24 })
    const batch = [row('/uncommitted/1'), row('/uncommitted/2')]
    await spool.append('token-uncommitted', batch)
    // The previous process inserted this entry with its token, then died before committing it.
    await store.insert('page_views', batch, { dedupToken: 'token-uncommitted' })
    const durable = createDurableSink({ store, spool, metrics: newMetrics(spool) })
    durable.start()
    await durable.drained()
    expect([...(await pathCounts('/uncommitted/')).values()]).toEqual([1, 1])
    // And inserts without a token still land afterwards (the token does not linger in the session).
    await store.insert('page_views', [row('/uncommitted/3')])
    expect((await pathCounts('/uncommitted/')).get('/uncommitted/3')).toBe(1)
    await durable.stop()
    await spool.close()
  })
})

describe('spool first (acknowledged once spooled)', () => {
  it('inserts spooled batches in larger batches, in order, once each', async () => {
    const dir = path.join(data.dir, 'spool-first')
    // As the ingest service opens it: rows spooled as their insert lines.
    const spool = await openSpool<PageViewRow>({
      dir,
      maxBytes: 1 << 24,
      encodeRow: encodePageViewRow,
      decodeRow: decodePageViewRow,
    })
    const metrics = newMetrics(spool)
    const durable = createSpoolFirstSink({ store, spool, metrics, insertRows: 40, insertMs: 10_000 })
    const writer = createBatchWriter({ sink: durable.sink, maxRows: 10, maxMs: 5 })
    durable.start()
    const rows = Array.from({ length: 100 }, (_, n) => row(`/first/${n}`))
    await Promise.all(Array.from({ length: 25 }, (_, i) => writer.add(rows.slice(i * 4, i * 4 + 4))))
    expect(metrics.registry.render()).toMatch(/^vid_ingest_hits_spooled_total 100$/m)
    await writer.close()
    await durable.drained()
    expect(metrics.registry.render()).toMatch(/^vid_ingest_hits_replayed_total 100$/m)
    // Ten spool writes of 10 rows, inserted 40 rows (or what was left) at a time.
    expect(metrics.registry.render()).toMatch(/^vid_ingest_batch_writes_total 3$/m)
    const counts = await pathCounts('/first/')
    expect(counts.size).toBe(100)
    expect([...counts.values()].every((n) => n === 1)).toBe(true)
    await durable.stop()
    await spool.close()
  })

  it('a begun batch that landed but was not committed (crash in between) is not duplicated', async () => {
    const dir = path.join(data.dir, 'spool-first-crash')
    const spool = await openSpool<PageViewRow>({ dir, maxBytes: 1 << 24 })
    for (let n = 0; n < 3; n++) await spool.append(`begun-${n}`, [row(`/begun/${n}`)])
    await spool.append('begun-late', [row('/begun/late')])
    // The previous process began a batch of the first three entries, inserted it, and died.
    const first = await spool.peek()
    const third = await spool.peek((await spool.peek(first!.next))!.next)
    await spool.begin(third!)
    await store.insert(
      'page_views',
      [row('/begun/0'), row('/begun/1'), row('/begun/2')].map(toColumnValues),
      {
        dedupToken: 'begun-0..begun-2',
        columns: pageViewColumns,
      },
    )
    await spool.close()

    const reopened = await openSpool<PageViewRow>({ dir, maxBytes: 1 << 24 })
    const durable = createSpoolFirstSink({
      store,
      spool: reopened,
      metrics: newMetrics(reopened),
      insertRows: 1000,
      insertMs: 1,
    })
    durable.start()
    await durable.drained()
    const counts = await pathCounts('/begun/')
    expect([...counts.keys()].sort()).toEqual(['/begun/0', '/begun/1', '/begun/2', '/begun/late'])
    expect([...counts.values()]).toEqual([1, 1, 1, 1])
    await durable.stop()
    await reopened.close()
  })
})

describe('over HTTP with a failing store', () => {
  it('acknowledges spooled hits, answers 503 with Retry-After once the spool is full, and loses nothing acknowledged', async () => {
    let down = false
    const inserted: string[] = []
    // The real store with a switch on page_views inserts: reads keep working, writes fail.
    const switchable: Store = {
      ...store,
      insert: async (table, rows, options) => {
        if (down && table === 'page_views') throw new StoreError('unavailable', 'switched off for the test')
        await store.insert(table, rows, options)
        // Ingest inserts arrays in `options.columns` order.
        const at = options?.columns?.indexOf('path') ?? -1
        if (table === 'page_views') inserted.push(...(rows as unknown[][]).map((r) => String(r[at])))
      },
    }
    const spool = await openSpool<PageViewRow>({
      dir: path.join(data.dir, 'spool-http'),
      maxBytes: 24 * 1024,
    })
    const metrics = newMetrics(spool)
    const durable = createDurableSink({ store: switchable, spool, metrics, retryMinMs: 20, retryMaxMs: 50 })
    const writer = createBatchWriter({ sink: durable.sink, maxRows: 100, maxMs: 5 })
    const trackingKeys = createTrackingKeyCache({ repos })
    const app = Fastify()
    app.setErrorHandler((error, _request, reply) => {
      const body = toErrorBody(error)
      return reply.code(body.statusCode).send(body)
    })
    await app.register(ingestPlugin, {
      pipeline: createHitPipeline({ trackingKeys }),
      writer,
      metrics,
      trackingKeys,
      isOverloaded: () => durable.overloaded,
    })
    durable.start()
    const send = (n: number) =>
      app.inject({
        method: 'POST',
        url: '/collect',
        headers: { 'content-type': 'text/plain', 'user-agent': chromeUserAgent },
        payload: JSON.stringify(
          pixelHit(trackingKey, { u: `https://shop.test/http/${n}`, ti: 'x'.repeat(400) }),
        ),
      })

    const acknowledged: number[] = []
    for (let n = 0; n < 3; n++) if ((await send(n)).statusCode === 202) acknowledged.push(n)
    down = true
    let refused: Awaited<ReturnType<typeof send>> | undefined
    let n = 3
    for (; n < 300 && !refused; n++) {
      const response = await send(n)
      if (response.statusCode === 202) acknowledged.push(n)
      else refused = response
    }
    expect(acknowledged.length).toBeGreaterThan(10)
    expect(refused?.statusCode).toBe(503)
    expect(refused?.headers['retry-after']).toBe('30')
    expect(refused?.json()).toMatchObject({ statusCode: 503, code: 'service_unavailable' })
    expect((await send(n + 1)).statusCode).toBe(503)

    down = false
    await durable.drained()
    expect(durable.overloaded).toBe(false)
    expect((await send(1000)).statusCode).toBe(202)
    acknowledged.push(1000)
    await writer.close()
    await durable.stop()
    await spool.close()
    await app.close()

    const counts = await pathCounts('/http/')
    for (const hit of acknowledged) expect(counts.get(`/http/${hit}`)).toBe(1)
    expect(counts.size).toBe(acknowledged.length)
    // Spooled batches were replayed in the order they were acknowledged.
    const order = inserted.filter((p) => p.startsWith('/http/')).map((p) => Number(p.split('/')[2]))
    expect(order).toEqual(acknowledged)
    expect(metrics.registry.render()).toMatch(/^vid_ingest_overloaded_total [1-9]\d*$/m)
  })
})

describe('kill -9', () => {
  it('of a process spooling under load loses no acknowledged hit', async () => {
    const dataDir = path.join(data.dir, 'killed')
    const child = spawn(process.execPath, [path.join(import.meta.dirname, 'fixtures/spooling-writer.mjs')], {
      env: {
        ...process.env,
        DATA_DIR: dataDir,
        BLANK_ROW: JSON.stringify(blankPageViewRow(organizationId, 'https://kill.test/spool/')),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const acked = new Set<number>()
    let stderr = ''
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    let buffered = ''
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString()
      const lines = buffered.split('\n')
      buffered = lines.pop() ?? ''
      for (const line of lines) if (line.startsWith('ack ')) acked.add(Number(line.slice(4)))
    })
    const started = Date.now()
    while (acked.size < 400 && Date.now() - started < 15_000 && child.exitCode === null) {
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    child.kill('SIGKILL')
    await once(child, 'exit')
    // (stderr holds the ClickHouse client's own logs of the refused connections.)
    expect(acked.size, stderr.slice(-2000)).toBeGreaterThanOrEqual(400)

    const spool = await openSpool<PageViewRow>({ dir: path.join(dataDir, 'spool'), maxBytes: 1 << 30 })
    const durable = createDurableSink({ store, spool, metrics: newMetrics(spool) })
    durable.start()
    await durable.drained()
    await durable.stop()
    await spool.close()
    const counts = await pathCounts('/spool/')
    for (const n of acked) expect(counts.get(`/spool/${n}`)).toBe(1)
    expect([...counts.values()].every((count) => count === 1)).toBe(true)
    console.log(`kill -9 while spooling: ${acked.size} acknowledged, ${counts.size} replayed, 0 lost`)
  })
})

/** A page_views row for a path. */
const row = (pathname: string): PageViewRow =>
  blankPageViewRow(organizationId, `https://durable.test${pathname}`)
