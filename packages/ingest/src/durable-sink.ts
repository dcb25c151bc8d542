// The write path behind the batch writer: each batch goes to ClickHouse with a dedup token; when
// that fails, to the spool (fsync'd), and is replayed in order, exactly once, when ClickHouse
// answers again. While ClickHouse is failing, batches go straight to the spool (no timeouts on
// the hot path), and a background loop keeps trying to replay.
import { randomUUID } from 'node:crypto'
import type { Store } from '@visitor-id/core/store'
import { createBackoff } from './backoff.js'
import type { BatchSink } from './batch-writer.js'
import type { IngestMetrics } from './metrics.js'
import { type PageViewRow, pageViewColumns, toColumnValues } from './page-view-row.js'
import { createPause } from './pause.js'
import { replayHold } from './replay-hold.js'
import type { Spool, SpoolEntry } from './spool.js'
import { nextBatch } from './spool-batch.js'

export interface LogLike {
  warn(object: object, message: string): void
  error(object: object, message: string): void
  info(object: object, message: string): void
}

export interface DurableSinkOptions {
  store: Store
  spool: Spool<PageViewRow>
  metrics: IngestMetrics
  /** Runs after a batch is in ClickHouse (visitor and company upserts); its failure spools the batch. */
  afterWrite?: (rows: PageViewRow[]) => Promise<void>
  /** A batch that fails this many replays in a row with a query error (not unavailability) is set aside. */
  maxReplayAttempts?: number
  /** Receives batches set aside (the caller writes them to a dead-letter file). */
  onDeadLetter?: (entry: SpoolEntry<PageViewRow>, error: unknown) => Promise<void>
  retryMinMs?: number
  retryMaxMs?: number
  log?: LogLike
  table?: string
}

export interface DurableSink {
  sink: BatchSink<PageViewRow>
  /** Starts replaying whatever the spool holds (call once at start-up). */
  start(): void
  /** Stops the replay loop (the spool keeps what is left for the next start). */
  stop(): Promise<void>
  /** True while batches go to the spool instead of ClickHouse. */
  readonly degraded: boolean
  /** True when the spool cannot take another batch: hits get 503 with Retry-After. */
  readonly overloaded: boolean
  /** Resolves once the spool is empty (or the sink stopped). */
  drained(): Promise<void>
  /**
   * Pauses the replay (a backup copies the spool, then the store: a batch replayed in between
   * would be in both, and a restored store has no dedup log to drop it). Resolves, once the batch
   * being replayed is committed, to the function that resumes it.
   */
  holdReplay(): Promise<() => void>
  setLog(log: LogLike): void
}

export const silent: LogLike = { warn() {}, error() {}, info() {} }

/** What the sink and its replay loop share. */
interface SinkState {
  log: LogLike
  /** True while batches go to the spool instead of ClickHouse. */
  degraded: boolean
  stopped: boolean
  /** Holds on the replay (holdReplay); it runs only at 0. */
  held: number
}

export type BatchInsert = (token: string, rows: PageViewRow[]) => Promise<void>

/** Writes one batch to ClickHouse under its dedup token, then runs `afterWrite`. */
export function createBatchInsert(options: DurableSinkOptions): BatchInsert {
  const table = options.table ?? 'page_views'
  return async (token, rows) => {
    // Arrays in column order (JSONCompactEachRow): the key names would be half the bytes.
    const values = rows.map(toColumnValues)
    await options.store.insert(table, values, { dedupToken: token, columns: pageViewColumns })
    options.metrics.batchWritten()
    if (options.afterWrite) await options.afterWrite(rows)
  }
}

/**
 * The replay loop: writes the spooled batches in order until the spool is empty (then batches go
 * to ClickHouse again) or the sink stops. A failed batch is tried again after a growing pause, or
 * set aside once the store has refused it `maxReplayAttempts` times.
 */
function createReplay(
  options: DurableSinkOptions,
  insert: BatchInsert,
  state: SinkState,
  pause: (ms: number) => Promise<void>,
): () => Promise<void> {
  const { spool, metrics } = options
  const retry = {
    minMs: options.retryMinMs ?? 250,
    maxMs: options.retryMaxMs ?? 10_000,
    maxAttempts: options.maxReplayAttempts ?? 8,
  }
  return async () => {
    const backoff = createBackoff(retry, pause)
    while (!state.stopped && state.held === 0) {
      // One entry at a time, except a batch the spool-first inserter began and did not commit.
      const batch = await nextBatch(spool, 1)
      if (!batch) {
        if (state.degraded) state.log.info({}, 'ingest: spool replayed, writing to ClickHouse again')
        state.degraded = false
        return
      }
      const entry = { token: batch.token, rows: batch.rows, next: batch.last.next }
      try {
        await insert(entry.token, entry.rows)
        await spool.commit(batch.last)
        metrics.replayed(entry.rows.length)
        backoff.succeeded()
      } catch (error) {
        metrics.writeError()
        if (backoff.failed(error) && options.onDeadLetter) {
          state.log.error(
            { err: error, rows: entry.rows.length },
            'ingest: spooled batch set aside after repeated errors',
          )
          await options.onDeadLetter(entry, error)
          await spool.commit(batch.last)
          backoff.setAside()
          continue
        }
        state.log.warn({ err: error, attempts: backoff.attempts }, 'ingest: replay failed, retrying')
        await backoff.wait()
      }
    }
  }
}

/**
 * The batch writer's sink: ClickHouse while it answers; once a write fails, the spool (and a
 * replay started by `kick`) until the replay has emptied it.
 */
function createSpoolingSink(
  options: DurableSinkOptions,
  insert: BatchInsert,
  state: SinkState,
  kick: () => void,
): BatchSink<PageViewRow> {
  return async (rows) => {
    const token = randomUUID()
    if (!state.degraded) {
      try {
        await insert(token, rows)
        return
      } catch (error) {
        options.metrics.writeError()
        if (!state.degraded)
          state.log.warn({ err: error }, 'ingest: ClickHouse write failed, spooling batches')
        state.degraded = true
      }
    }
    // Same token as the attempt above: if that insert landed after all, the replay is a no-op.
    await options.spool.append(token, rows)
    options.metrics.spooled(rows.length)
    kick()
  }
}

/**
 * Builds the durable sink.
 * @example const durable = createDurableSink({ store, spool, metrics }); createBatchWriter({ sink: durable.sink, ... })
 */
export function createDurableSink(options: DurableSinkOptions): DurableSink {
  const state: SinkState = { log: options.log ?? silent, degraded: false, stopped: false, held: 0 }
  const insert = createBatchInsert(options)
  const { pause, wake } = createPause()
  const replay = createReplay(options, insert, state, pause)
  let running: Promise<void> | undefined

  const kick = () => {
    if (state.stopped || state.held > 0 || running) return
    running = replay().finally(() => {
      running = undefined
    })
  }

  return {
    get degraded() {
      return state.degraded
    },
    get overloaded() {
      return state.degraded && options.spool.full
    },
    setLog(next) {
      state.log = next
    },
    sink: createSpoolingSink(options, insert, state, kick),
    start: kick,
    async stop() {
      state.stopped = true
      wake()
      await running
    },
    holdReplay: replayHold(state, {
      wake,
      running: () => running,
      resume: () => options.spool.pendingBytes > 0 && kick(),
    }),
    async drained() {
      while (!state.stopped && (options.spool.pendingBytes > 0 || running)) {
        kick()
        await (running ?? new Promise((resolve) => setTimeout(resolve, 20)))
      }
    },
  }
}
