// The write path that acknowledges a batch once it is in the spool: each batch of the writer (a
// short group commit: one write and fdatasync for every hit that arrived meanwhile) is appended to
// DATA_DIR/spool and acknowledged; an inserter writes the spool to ClickHouse behind it, in larger
// batches, in order, exactly once. A request is thus held for one fdatasync instead of until its
// rows are in ClickHouse, and ClickHouse gets fewer, larger inserts (cheaper per row).
import { randomUUID } from 'node:crypto'
import { createBackoff } from './backoff.js'
import type { BatchSink } from './batch-writer.js'
import { type DurableSink, type DurableSinkOptions, silent } from './durable-sink.js'
import { encodePageViewRow, type PageViewRow, pageViewColumns } from './page-view-row.js'
import { createPause } from './pause.js'
import { replayHold } from './replay-hold.js'
import { nextBatch, type SpoolBatch } from './spool-batch.js'

export interface SpoolFirstSinkOptions extends DurableSinkOptions {
  /** An insert into ClickHouse takes as many spooled rows as this, at least (whole batches)... */
  insertRows: number
  /** ...or what is spooled once its oldest row has waited this long. */
  insertMs: number
}

/** Writes one batch as the spool holds its rows (no second encoding), then runs `afterWrite`. */
type EncodedInsert = (batch: SpoolBatch<PageViewRow>) => Promise<void>

function createEncodedInsert(options: SpoolFirstSinkOptions): EncodedInsert {
  const table = options.table ?? 'page_views'
  return async (batch) => {
    let body = ''
    for (const entry of batch.entries) {
      // Entries read back from the file (after a restart) are encoded again.
      for (const line of entry.encoded ?? entry.rows.map(encodePageViewRow)) body += `${line}\n`
    }
    await options.store.insertEncoded(table, body, { dedupToken: batch.token, columns: pageViewColumns })
    options.metrics.batchWritten()
    if (options.afterWrite) await options.afterWrite(batch.rows)
  }
}

/** What the sink and its inserter share. */
interface InserterState {
  log: DurableSinkOptions['log'] & object
  degraded: boolean
  stopped: boolean
  /** Insert what is spooled without waiting for fuller batches (shutdown, `drained`). */
  flushing: boolean
  /** Shutting down: a failed insert leaves the rest in the spool for the next start. */
  stopping: boolean
  held: number
  /** This process's spooled entries not yet inserted, oldest first. */
  waiting: { token: string; rows: number; at: number }[]
  waitingRows: number
}

/** Forgets the entries of an inserted batch. */
function inserted(state: InserterState, tokens: string[]) {
  const done = new Set(tokens)
  while (state.waiting.length > 0 && done.has(state.waiting[0]!.token)) {
    state.waitingRows -= state.waiting.shift()!.rows
  }
}

/** How long to wait for a fuller insert (0: insert now). Entries of an earlier process are due. */
function waitFor(state: InserterState, batch: SpoolBatch<PageViewRow>, options: SpoolFirstSinkOptions) {
  if (state.flushing || batch.rows.length >= options.insertRows) return 0
  const oldest = state.waiting[0]
  if (!oldest || oldest.token !== batch.tokens[0]) return 0
  return Math.max(0, oldest.at + options.insertMs - Date.now())
}

/** The inserter: writes spooled batches in order until the spool is empty or the sink stops. */
function createInserter(
  options: SpoolFirstSinkOptions,
  insert: EncodedInsert,
  state: InserterState,
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
      const batch = await nextBatch(spool, options.insertRows)
      if (!batch) return
      const wait = waitFor(state, batch, options)
      if (wait > 0) {
        await pause(wait)
        continue
      }
      try {
        await spool.begin(batch.last)
        await insert(batch)
        await spool.commit(batch.last)
        inserted(state, batch.tokens)
        metrics.replayed(batch.rows.length)
        backoff.succeeded()
        if (state.degraded) state.log.info({}, 'ingest: ClickHouse answers again, spool draining')
        state.degraded = false
      } catch (error) {
        metrics.writeError()
        if (!state.degraded)
          state.log.warn({ err: error }, 'ingest: ClickHouse write failed, hits wait in the spool')
        state.degraded = true
        if (backoff.failed(error) && options.onDeadLetter) {
          state.log.error(
            { err: error, rows: batch.rows.length },
            'ingest: spooled batch set aside after repeated errors',
          )
          await options.onDeadLetter({ token: batch.token, rows: batch.rows, next: batch.last.next }, error)
          await spool.commit(batch.last)
          inserted(state, batch.tokens)
          backoff.setAside()
          continue
        }
        // Shutting down with ClickHouse failing: what is left waits in the spool for the next start.
        if (state.stopping) return
        await backoff.wait()
      }
    }
  }
}

/**
 * Builds the spool-first sink (the same interface as the durable sink: `degraded` while ClickHouse
 * refuses inserts, `overloaded` once the spool is full).
 * @example const durable = createSpoolFirstSink({ store, spool, metrics, insertRows: 10_000, insertMs: 1000 })
 */
export function createSpoolFirstSink(options: SpoolFirstSinkOptions): DurableSink {
  const state: InserterState = {
    log: options.log ?? silent,
    degraded: false,
    stopped: false,
    flushing: false,
    stopping: false,
    held: 0,
    waiting: [],
    waitingRows: 0,
  }
  const { pause, wake } = createPause()
  const insertLoop = createInserter(options, createEncodedInsert(options), state, pause)
  let running: Promise<void> | undefined
  const kick = () => {
    if (state.stopped || state.held > 0 || running) return
    running = insertLoop().finally(() => {
      running = undefined
      // Appended while the loop was finishing: it must not wait for the next append.
      if (options.spool.pendingBytes > 0 && !state.degraded) kick()
    })
  }
  const sink: BatchSink<PageViewRow> = async (rows) => {
    const token = randomUUID()
    await options.spool.append(token, rows)
    options.metrics.spooled(rows.length)
    state.waiting.push({ token, rows: rows.length, at: Date.now() })
    state.waitingRows += rows.length
    if (!running) kick()
    else if (state.waitingRows >= options.insertRows && !state.degraded) wake()
  }
  return {
    get degraded() {
      return state.degraded
    },
    get overloaded() {
      return options.spool.full
    },
    setLog(next) {
      state.log = next
    },
    sink,
    start: kick,
    async stop() {
      state.flushing = true
      state.stopping = true
      wake()
      kick()
      await running
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
      const flushing = state.flushing
      state.flushing = true
      try {
        while (!state.stopped && (options.spool.pendingBytes > 0 || running)) {
          kick()
          if (!state.degraded) wake()
          await (running ?? new Promise((resolve) => setTimeout(resolve, 20)))
        }
      } finally {
        state.flushing = flushing
      }
    },
  }
}
