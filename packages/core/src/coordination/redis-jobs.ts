/**
 * Job queue on BullMQ, one BullMQ queue per job name: a process only consumes the names it registered
 * a handler for, each with its own concurrency. Finished jobs are removed, so a jobId can be reused
 * once its job is done (dedupe holds while it is pending, as in memory).
 */
import { type Job, Queue, Worker } from 'bullmq'
import type { Redis } from 'ioredis'
import { type CoordinationErrorHandler, callListener } from './listeners.js'
import type { JobHandler, JobInfo, JobOptions, JobQueue } from './ports.js'
import { closeConnection, withTimeout } from './redis-connection.js'
import { assertInteger, assertJobName, assertJobOptions, toError } from './validate.js'

type FailedListener = (job: JobInfo<unknown>, error: Error) => void

// BullMQ rejects custom ids that look like integers or contain ':'; callers use ids such as
// `enrich:42`. Encoding keeps any string valid, and the `j-` mark tells custom ids from BullMQ's
// own (integer) ids when decoding.
const CUSTOM_ID_MARK = 'j-'

/** Maps a caller's jobId to an id BullMQ accepts. */
export function encodeJobId(jobId: string): string {
  return CUSTOM_ID_MARK + encodeURIComponent(jobId)
}

/** Inverse of `encodeJobId`; BullMQ's generated ids pass through unchanged. */
export function decodeJobId(id: string): string {
  return id.startsWith(CUSTOM_ID_MARK) ? decodeURIComponent(id.slice(CUSTOM_ID_MARK.length)) : id
}

function jobInfo(job: Job, attempt: number): JobInfo<unknown> {
  return { id: decodeJobId(job.id ?? ''), name: job.name, data: job.data, attempt }
}

const READY_TIMEOUT_MS = 2_000

/**
 * Stops a closed worker's stalled-job checker for good. BullMQ arms the checker's next wait (the
 * stalled interval, 30 s by default, a timer that holds the process) after each check; a check
 * still under way when close() began arms it after close() has returned, and nothing clears it.
 * Until that check ends, its stopper is called again. `stalledCheckerRunning` and
 * `stalledCheckStopper` are BullMQ internals (5.x); `test/start-failure.test.ts` fails if this stops
 * working, as the process then outlives a failed start by the interval.
 */
async function stopStalledChecker(worker: Worker): Promise<void> {
  const internals = worker as unknown as { stalledCheckerRunning?: boolean; stalledCheckStopper?: () => void }
  for (let tries = 0; internals.stalledCheckerRunning && tries < 100; tries++) {
    internals.stalledCheckStopper?.()
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

export interface BullJobQueueOptions {
  /** Opens the connection the queues (producers) share. */
  openProducerConnection: () => Redis
  /** Opens the connection the workers share; BullMQ needs `maxRetriesPerRequest: null` on it. */
  openWorkerConnection: () => Redis
  /** BullMQ key prefix; BullMQ adds `:<queue name>:` after it. */
  bullPrefix: string
  onError: CoordinationErrorHandler
}

export class BullJobQueue implements JobQueue {
  readonly #options: BullJobQueueOptions
  readonly #queues = new Map<string, Queue>()
  readonly #workers = new Map<string, Worker>()
  readonly #failedListeners: FailedListener[] = []
  // Kept apart from the command connection because BullMQ watches the connections it is given, so
  // they must be closed without closeConnection's `rejectPending` step (see there).
  #producerConnection: Redis | undefined
  #workerConnection: Redis | undefined
  #closing: Promise<void> | undefined
  /** Rejects once closed, so an `add` stuck on a dead Redis connection fails instead of hanging. */
  readonly #closed: Promise<never>
  #markClosed: () => void = () => {}

  constructor(options: BullJobQueueOptions) {
    this.#options = options
    this.#closed = new Promise<never>((_, reject) => {
      this.#markClosed = () => reject(new Error('The job queue is closed'))
    })
    this.#closed.catch(() => undefined)
  }

  async add<T>(name: string, data: T, options: JobOptions = {}): Promise<string> {
    this.#assertOpen()
    assertJobName(name)
    assertJobOptions(options)
    const adding = this.#queue(name).add(name, data, {
      delay: options.delayMs,
      attempts: options.attempts ?? 1,
      backoff: options.backoff && { type: options.backoff.type, delay: options.backoff.delayMs },
      jobId: options.jobId === undefined ? undefined : encodeJobId(options.jobId),
      removeOnComplete: true,
      removeOnFail: true,
    })
    const job = await Promise.race([adding, this.#closed])
    // BullMQ returns the pending job when the jobId is taken, so a duplicate gets the same id back.
    return decodeJobId(job.id ?? '')
  }

  process<T>(name: string, handler: JobHandler<T>, options: { concurrency?: number } = {}): void {
    this.#assertOpen()
    assertJobName(name)
    const concurrency = options.concurrency ?? 1
    assertInteger('concurrency', concurrency, 1)
    if (this.#workers.has(name)) throw new Error(`A handler is already registered for job "${name}"`)
    this.#workerConnection ??= this.#options.openWorkerConnection()
    const worker = new Worker(
      name,
      async (job: Job) => {
        try {
          // attemptsMade counts finished tries, so the running one is attemptsMade + 1.
          await handler(jobInfo(job, job.attemptsMade + 1) as JobInfo<T>)
        } catch (error) {
          throw toError(error)
        }
      },
      { connection: this.#workerConnection, prefix: this.#options.bullPrefix, concurrency },
    )
    worker.on('failed', (job, error) => {
      // 'failed' fires after every failed try; BullMQ has already counted it in attemptsMade, so the
      // job is dropped for good only when that reaches its attempts.
      if (!job || job.attemptsMade < (job.opts.attempts ?? 1)) return
      const info = jobInfo(job, job.attemptsMade)
      for (const listener of this.#failedListeners) {
        callListener(listener, [info, error], this.#options.onError, `onFailed listener for job "${name}"`)
      }
    })
    worker.on('error', (error) => this.#options.onError(error, `job worker "${name}"`))
    this.#workers.set(name, worker)
  }

  onFailed(listener: FailedListener): void {
    this.#failedListeners.push(listener)
  }

  close(): Promise<void> {
    this.#closing ??= this.#close()
    return this.#closing
  }

  async #close(): Promise<void> {
    const workers = [...this.#workers.values()]
    const queues = [...this.#queues.values()]
    // A worker or queue closed while its shared connection still initializes re-emits that
    // initialization's failure once it has no listener left: an uncaught error that ends the
    // process. So each finishes initializing first (bounded: a dead Redis fails it quickly).
    await Promise.allSettled(
      [...workers, ...queues].map((client) =>
        withTimeout(client.waitUntilReady(), READY_TIMEOUT_MS, 'BullMQ ready'),
      ),
    )
    // Worker.close() stops fetching and waits for the running handlers; queues go after the workers.
    const workersClosed = await Promise.allSettled(workers.map((worker) => worker.close()))
    await Promise.all(workers.map(stopStalledChecker))
    const queuesClosed = await Promise.allSettled(queues.map((queue) => queue.close()))
    for (const result of [...workersClosed, ...queuesClosed]) {
      if (result.status === 'rejected') this.#options.onError(toError(result.reason), 'closing the job queue')
    }
    const connections = [this.#producerConnection, this.#workerConnection]
    await Promise.all(
      connections.map((connection) => connection && closeConnection(connection, { rejectPending: false })),
    )
    this.#markClosed()
  }

  #assertOpen(): void {
    if (this.#closing) throw new Error('The job queue is closed')
  }

  #queue(name: string): Queue {
    let queue = this.#queues.get(name)
    if (!queue) {
      this.#producerConnection ??= this.#options.openProducerConnection()
      queue = new Queue(name, { connection: this.#producerConnection, prefix: this.#options.bullPrefix })
      queue.on('error', (error) => this.#options.onError(error, `job queue "${name}"`))
      this.#queues.set(name, queue)
    }
    return queue
  }
}
