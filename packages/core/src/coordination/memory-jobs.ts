/**
 * In-process job queue with the same semantics as the BullMQ adapter: delayed jobs, retries with
 * fixed or exponential backoff, per-name concurrency, jobId dedupe while a job is pending, and a
 * `close` that waits for running handlers. Jobs live only as long as the process does.
 */
import { type CoordinationErrorHandler, callListener } from './listeners.js'
import type { JobHandler, JobInfo, JobOptions, JobQueue } from './ports.js'
import { assertInteger, assertJobName, assertJobOptions, toError } from './validate.js'

interface PendingJob {
  id: string
  name: string
  data: unknown
  attempts: number
  backoff: JobOptions['backoff']
  /** Tries that have finished (failed) so far. */
  attemptsMade: number
  /** Set when the job was added with a jobId; frees the id once the job is done. */
  dedupeKey: string | undefined
}

interface Consumer {
  handler: JobHandler<unknown>
  concurrency: number
  active: number
}

type FailedListener = (job: JobInfo<unknown>, error: Error) => void

/** Delay before the next try, as BullMQ computes it: exponential doubles from `delayMs` each try. */
export function backoffDelay(backoff: JobOptions['backoff'], attemptsMade: number): number {
  if (backoff === undefined) return 0
  return backoff.type === 'fixed' ? backoff.delayMs : Math.round(2 ** (attemptsMade - 1) * backoff.delayMs)
}

/** Data goes through JSON like it does in Redis, so memory-only tests catch non-serialisable data. */
function cloneData<T>(data: T): T {
  return data === undefined ? data : (JSON.parse(JSON.stringify(data)) as T)
}

export class MemoryJobQueue implements JobQueue {
  readonly #onError: CoordinationErrorHandler
  readonly #consumers = new Map<string, Consumer>()
  readonly #ready = new Map<string, PendingJob[]>()
  /** `${name}:${jobId}` → job id, for jobs still pending (waiting, delayed, running or retrying). */
  readonly #pendingIds = new Map<string, string>()
  readonly #timers = new Set<NodeJS.Timeout>()
  readonly #running = new Set<Promise<void>>()
  readonly #failedListeners: FailedListener[] = []
  #nextId = 1
  #closing: Promise<void> | undefined

  constructor(onError: CoordinationErrorHandler) {
    this.#onError = onError
  }

  async add<T>(name: string, data: T, options: JobOptions = {}): Promise<string> {
    this.#assertOpen()
    assertJobName(name)
    assertJobOptions(options)
    const dedupeKey = options.jobId === undefined ? undefined : `${name}:${options.jobId}`
    if (dedupeKey !== undefined) {
      const existing = this.#pendingIds.get(dedupeKey)
      if (existing !== undefined) return existing
    }
    const id = options.jobId ?? String(this.#nextId++)
    if (dedupeKey !== undefined) this.#pendingIds.set(dedupeKey, id)
    const job: PendingJob = {
      id,
      name,
      data: cloneData(data),
      attempts: options.attempts ?? 1,
      backoff: options.backoff,
      attemptsMade: 0,
      dedupeKey,
    }
    this.#schedule(job, options.delayMs ?? 0)
    return id
  }

  process<T>(name: string, handler: JobHandler<T>, options: { concurrency?: number } = {}): void {
    this.#assertOpen()
    assertJobName(name)
    const concurrency = options.concurrency ?? 1
    assertInteger('concurrency', concurrency, 1)
    if (this.#consumers.has(name)) throw new Error(`A handler is already registered for job "${name}"`)
    this.#consumers.set(name, { handler: handler as JobHandler<unknown>, concurrency, active: 0 })
    this.#pump(name)
  }

  onFailed(listener: FailedListener): void {
    this.#failedListeners.push(listener)
  }

  close(): Promise<void> {
    this.#closing ??= this.#close()
    return this.#closing
  }

  async #close(): Promise<void> {
    for (const timer of this.#timers) clearTimeout(timer)
    this.#timers.clear()
    this.#ready.clear()
    // No new job starts once closing, so the running set only shrinks.
    while (this.#running.size > 0) await Promise.allSettled([...this.#running])
    this.#pendingIds.clear()
  }

  #assertOpen(): void {
    if (this.#closing) throw new Error('The job queue is closed')
  }

  #schedule(job: PendingJob, delayMs: number): void {
    if (delayMs <= 0) {
      this.#enqueue(job)
      return
    }
    const timer = setTimeout(() => {
      this.#timers.delete(timer)
      this.#enqueue(job)
    }, delayMs)
    // A delayed job must not keep the process alive; in memory it dies with the process anyway.
    timer.unref()
    this.#timers.add(timer)
  }

  #enqueue(job: PendingJob): void {
    const list = this.#ready.get(job.name)
    if (list) list.push(job)
    else this.#ready.set(job.name, [job])
    this.#pump(job.name)
  }

  #pump(name: string): void {
    const consumer = this.#consumers.get(name)
    const list = this.#ready.get(name)
    if (this.#closing || !consumer || !list) return
    while (consumer.active < consumer.concurrency && list.length > 0) {
      const job = list.shift()!
      consumer.active += 1
      // Start on a later tick so `add` never runs a handler inside the caller's stack, as with Redis.
      const run: Promise<void> = Promise.resolve()
        .then(() => this.#run(consumer, job))
        .finally(() => {
          this.#running.delete(run)
          consumer.active -= 1
          this.#pump(name)
        })
      this.#running.add(run)
    }
    if (list.length === 0) this.#ready.delete(name)
  }

  async #run(consumer: Consumer, job: PendingJob): Promise<void> {
    const info: JobInfo<unknown> = {
      id: job.id,
      name: job.name,
      data: job.data,
      attempt: job.attemptsMade + 1,
    }
    try {
      await consumer.handler(info)
      this.#finish(job)
    } catch (thrown) {
      job.attemptsMade = info.attempt
      if (job.attemptsMade < job.attempts) {
        // Closing drops the retry: in memory there is no one left to run it.
        if (this.#closing) this.#finish(job)
        else this.#schedule(job, backoffDelay(job.backoff, job.attemptsMade))
        return
      }
      this.#finish(job)
      const error = toError(thrown)
      for (const listener of this.#failedListeners) {
        callListener(listener, [info, error], this.#onError, `onFailed listener for job "${job.name}"`)
      }
    }
  }

  #finish(job: PendingJob): void {
    if (job.dedupeKey !== undefined && this.#pendingIds.get(job.dedupeKey) === job.id) {
      this.#pendingIds.delete(job.dedupeKey)
    }
  }
}
