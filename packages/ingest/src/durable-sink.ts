// The write path behind the batch writer: each batch goes to ClickHouse with a dedup token; when
// that fails, to the spool (fsync'd), and is replayed in order, exactly once, when ClickHouse
// answers again. While ClickHouse is failing, batches go straight to the spool (no timeouts on
// the hot path), and a background loop keeps trying to replay.
import { randomUUID } from 'node:crypto'
import type { Store } from '@visitor-id/core'
import type { BatchSink } from './batch-writer.js'
import type { IngestMetrics } from './metrics.js'
import { type PageViewRow, pageViewColumns, toColumnValues } from './page-view-row.js'
import { createPause } from './pause.js'
import type { Spool, SpoolEntry } from './spool.js'

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
  setLog(log: LogLike): void
}

const silent: LogLike = { warn() {}, error() {}, info() {} }

/**
 * Builds the durable sink.
 * @example const durable = createDurableSink({ store, spool, metrics }); createBatchWriter({ sink: durable.sink, ... })
 */
export function createDurableSink(options: DurableSinkOptions): DurableSink {
  const table = options.table ?? 'page_views'
  const retryMin = options.retryMinMs ?? 250
  const retryMax = options.retryMaxMs ?? 10_000
  const maxAttempts = options.maxReplayAttempts ?? 8
  let log = options.log ?? silent
  let degraded = false
  let stopped = false
  let running: Promise<void> | undefined

  const write = async (token: string, rows: PageViewRow[]) => {
    // Arrays in column order (JSONCompactEachRow): the key names would be half the bytes.
    const values = rows.map(toColumnValues)
    await options.store.insert(table, values, { dedupToken: token, columns: pageViewColumns })
    options.metrics.batchWritten()
    if (options.afterWrite) await options.afterWrite(rows)
  }

  const { pause, wake } = createPause()

  const replay = async () => {
    let delay = retryMin
    let attempts = 0
    while (!stopped) {
      const entry = await options.spool.peek()
      if (!entry) {
        if (degraded) log.info({}, 'ingest: spool replayed, writing to ClickHouse again')
        degraded = false
        return
      }
      try {
        await write(entry.token, entry.rows)
        await options.spool.commit(entry)
        options.metrics.replayed(entry.rows.length)
        delay = retryMin
        attempts = 0
      } catch (error) {
        options.metrics.writeError()
        attempts += 1
        const kind = (error as { kind?: string }).kind
        // The store answered and refused this batch again and again: retrying will not help,
        // and the batches behind it must not wait forever.
        if (kind === 'query' && attempts >= maxAttempts && options.onDeadLetter) {
          log.error(
            { err: error, rows: entry.rows.length },
            'ingest: spooled batch set aside after repeated errors',
          )
          await options.onDeadLetter(entry, error)
          await options.spool.commit(entry)
          attempts = 0
          continue
        }
        log.warn({ err: error, attempts }, 'ingest: replay failed, retrying')
        await pause(delay)
        delay = Math.min(retryMax, delay * 2)
      }
    }
  }

  const kick = () => {
    if (stopped || running) return
    running = replay().finally(() => {
      running = undefined
    })
  }

  return {
    get degraded() {
      return degraded
    },
    get overloaded() {
      return degraded && options.spool.full
    },
    setLog(next) {
      log = next
    },
    sink: async (rows) => {
      const token = randomUUID()
      if (!degraded) {
        try {
          await write(token, rows)
          return
        } catch (error) {
          options.metrics.writeError()
          if (!degraded) log.warn({ err: error }, 'ingest: ClickHouse write failed, spooling batches')
          degraded = true
        }
      }
      // Same token as the attempt above: if that insert landed after all, the replay is a no-op.
      await options.spool.append(token, rows)
      options.metrics.spooled(rows.length)
      kick()
    },
    start: kick,
    async stop() {
      stopped = true
      wake()
      await running
    },
    async drained() {
      while (!stopped && (options.spool.pendingBytes > 0 || running)) {
        kick()
        await (running ?? new Promise((resolve) => setTimeout(resolve, 20)))
      }
    },
  }
}
