/**
 * Coordination ports: the small contracts core needs from a coordination layer.
 * Each has an in-process adapter (one process, the default) and a Redis adapter (many processes).
 * One contract test suite (`contract.test.ts`) runs against both.
 */

/** Result of one rate-limit hit, enough to fill the X-RateLimit-* headers. */
export interface RateLimitResult {
  allowed: boolean
  limit: number
  remaining: number
  /** Unix time in milliseconds when the current window ends. */
  resetAt: number
}

/** Fixed-window counter: `limit` hits per `windowMs` per key. */
export interface RateLimiter {
  hit(key: string): Promise<RateLimitResult>
}

export interface RateLimiterOptions {
  limit: number
  windowMs: number
}

/** A held lock; `release` is idempotent and only releases the holder's own lock. */
export interface LockHandle {
  release(): Promise<void>
  /**
   * Renews the lease for `ttlMs` from now, for work that outlasts its first lease; false when the
   * lease already ran out and someone else may hold the lock (the holder should stop).
   */
  extend(ttlMs: number): Promise<boolean>
}

/** Mutual exclusion with a lease, so a crashed holder cannot block others forever. */
export interface Locks {
  /** Takes the lock if free; undefined when someone else holds it. */
  tryAcquire(name: string, ttlMs: number): Promise<LockHandle | undefined>
  /** Waits (polling) up to `waitMs` for the lock; throws LockTimeoutError after that. */
  acquire(name: string, ttlMs: number, waitMs: number): Promise<LockHandle>
}

export interface JobOptions {
  /** Run no earlier than this many milliseconds from now. */
  delayMs?: number
  /** Total tries including the first (default 1). */
  attempts?: number
  /** Backoff between tries: fixed delay or exponential from `delayMs`. */
  backoff?: { type: 'fixed' | 'exponential'; delayMs: number }
  /** Jobs with the same id are added only once while one is pending. */
  jobId?: string
}

export interface JobInfo<T> {
  id: string
  name: string
  data: T
  /** 1 on the first try. */
  attempt: number
}

export type JobHandler<T> = (job: JobInfo<T>) => Promise<void>

/**
 * At-least-once job queue. A handler that throws is retried per the job's attempts/backoff;
 * after the last try the job is dropped as failed (and reported through `onFailed`).
 */
export interface JobQueue {
  add<T>(name: string, data: T, options?: JobOptions): Promise<string>
  /** Registers the handler for one job name and starts consuming; one handler per name. */
  process<T>(name: string, handler: JobHandler<T>, options?: { concurrency?: number }): void
  onFailed(listener: (job: JobInfo<unknown>, error: Error) => void): void
  /** Stops taking new jobs and waits for running handlers to finish. */
  close(): Promise<void>
}

/** Fire-and-forget broadcast to every process (cache invalidation). */
export interface PubSub {
  publish(channel: string, message: string): Promise<void>
  /** Returns an unsubscribe function. */
  subscribe(channel: string, listener: (message: string) => void): Promise<() => Promise<void>>
}

/** Short-lived key-value with per-key expiry. */
export interface KeyValue {
  get(key: string): Promise<string | undefined>
  set(key: string, value: string, ttlMs: number): Promise<void>
  /** Sets only if absent; true when this call set it. */
  setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean>
  delete(key: string): Promise<void>
}

/** Everything one process needs: `createMemoryCoordination` or `createRedisCoordination` builds it. */
export interface Coordination {
  kind: 'memory' | 'redis'
  createRateLimiter(options: RateLimiterOptions): RateLimiter
  locks: Locks
  jobs: JobQueue
  pubsub: PubSub
  kv: KeyValue
  /** True when the backing service answers. */
  ping(): Promise<boolean>
  close(): Promise<void>
}

/** Thrown by `Locks.acquire` when the lock stays taken for the whole wait. */
export class LockTimeoutError extends Error {
  override name = 'LockTimeoutError'
  readonly lockName: string
  readonly waitMs: number

  constructor(lockName: string, waitMs: number) {
    super(`Lock "${lockName}" is still held by someone else after waiting ${waitMs} ms`)
    this.lockName = lockName
    this.waitMs = waitMs
  }
}
