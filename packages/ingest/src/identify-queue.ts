// Identification off the acknowledgement path. The identify hits of a batch written to ClickHouse
// are appended to a local queue (a spool in DATA_DIR/identify-queue) and the batch is acknowledged;
// a worker identifies everything waiting at most every `batchMs`, in one `identifyVisitors` call.
// One call for a few seconds of identify hits costs about what a call for a tenth of a second did
// (a contacts lookup, a visitors read, one insert each), so identification keeps up with ingest at
// a small share of its CPU, and no hit waits for it (bench/README.md, "Identify hits").
//
// At least once: a batch of the queue is committed only after it was identified, and
// identification is idempotent (a visitor identified before is skipped; credits and events are
// keyed by visitor), so a crash or a failing store only delays it. Appends are not fsync'd: the
// hits are already in ClickHouse, and the queue only has to survive the process, as the page
// views do.
import type { IdentifyHit } from '@visitor-id/core/identification'
import { createBackoff } from './backoff.js'
import type { LogLike } from './durable-sink.js'
import { createPause } from './pause.js'
import type { Spool } from './spool.js'

export interface IdentifyQueueOptions {
  spool: Spool<IdentifyHit>
  /** Identifies the hits (core `identifyVisitors` and what follows it). */
  identify(rows: IdentifyHit[]): Promise<void>
  /** How long identify hits wait to be identified together (default 3,000 ms). */
  batchMs?: number
  /** At most this many hits per call (default 10,000); more wait for the next call. */
  maxRows?: number
  /** A batch that fails this many times in a row with a query error is set aside. */
  maxAttempts?: number
  /** Receives batches set aside (the caller writes them to a dead-letter file). */
  onDeadLetter?: (rows: IdentifyHit[], error: unknown) => Promise<void>
  retryMinMs?: number
  retryMaxMs?: number
  log?: LogLike
}

export interface IdentifyQueue {
  /** Queues identify hits of a batch already written to ClickHouse. */
  enqueue(rows: IdentifyHit[]): Promise<void>
  /** Identifies what an earlier run left in the queue (call once at start-up). */
  start(): void
  /** Resolves once every hit queued so far is identified (or the queue stopped). */
  drained(): Promise<void>
  /** Identifies what is waiting (unless the store fails) and stops. */
  stop(): Promise<void>
  setLog(log: LogLike): void
}

const silent: LogLike = { warn() {}, error() {}, info() {} }

/** What the queue and its worker share. */
interface QueueState {
  log: LogLike
  stopped: boolean
}

/** Everything waiting, up to `maxRows` hits (whole queue entries), and the last entry taken. */
async function takeWaiting(spool: Spool<IdentifyHit>, maxRows: number) {
  const rows: IdentifyHit[] = []
  let last: Awaited<ReturnType<Spool<IdentifyHit>['peek']>>
  while (rows.length < maxRows) {
    const entry = await spool.peek(last?.next)
    if (!entry) break
    rows.push(...entry.rows)
    last = entry
  }
  return last && { rows, last }
}

/**
 * One run of the worker: waits `batchMs`, identifies everything waiting, and again, until the queue
 * is empty. A failed batch is tried again after a growing pause (left for the next start once the
 * queue stops), or set aside once the store has refused it `maxAttempts` times.
 */
function createWorkerRun(
  options: IdentifyQueueOptions,
  state: QueueState,
  pause: (ms: number) => Promise<void>,
): () => Promise<void> {
  const { spool } = options
  const batchMs = options.batchMs ?? 3000
  const maxRows = options.maxRows ?? 10_000
  const retry = {
    minMs: options.retryMinMs ?? 250,
    maxMs: options.retryMaxMs ?? 10_000,
    maxAttempts: options.maxAttempts ?? 8,
  }
  return async () => {
    const backoff = createBackoff(retry, pause)
    if (!state.stopped) await pause(batchMs)
    for (;;) {
      const batch = await takeWaiting(spool, maxRows)
      if (!batch) return
      try {
        await options.identify(batch.rows)
        await spool.commit(batch.last)
        backoff.succeeded()
      } catch (error) {
        if (backoff.failed(error) && options.onDeadLetter) {
          state.log.error(
            { err: error, rows: batch.rows.length },
            'ingest: identify hits set aside after repeated errors',
          )
          await options.onDeadLetter(batch.rows, error)
          await spool.commit(batch.last)
          backoff.setAside()
          continue
        }
        state.log.warn({ err: error, attempts: backoff.attempts }, 'ingest: identification failed, retrying')
        if (state.stopped) return
        await backoff.wait()
        continue
      }
      if (!state.stopped) await pause(batchMs)
    }
  }
}

/**
 * Builds the identification queue.
 * @example const queue = createIdentifyQueue({ spool, identify: (rows) => identifyVisitors(deps, rows).then(() => {}) })
 */
export function createIdentifyQueue(options: IdentifyQueueOptions): IdentifyQueue {
  const { spool } = options
  const state: QueueState = { log: options.log ?? silent, stopped: false }
  const { pause, wake } = createPause()
  const run = createWorkerRun(options, state, pause)
  let running: Promise<void> | undefined

  const kick = () => {
    if (running || spool.pendingBytes === 0) return
    running = run().finally(() => {
      running = undefined
      // Hits queued while the last look found nothing.
      if (!state.stopped) kick()
    })
  }

  return {
    async enqueue(rows) {
      if (rows.length === 0) return
      await spool.append('', rows)
      if (!state.stopped) kick()
    },
    start: kick,
    setLog(next) {
      state.log = next
    },
    async drained() {
      while (!state.stopped && spool.pendingBytes > 0) {
        kick()
        await running
      }
    },
    async stop() {
      state.stopped = true
      wake()
      await running
      // Hits queued while nothing ran: one more look, without waiting.
      if (spool.pendingBytes > 0) await run()
    },
  }
}
