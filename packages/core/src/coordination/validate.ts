/**
 * Argument checks shared by both adapters, so a call that the Redis adapter would reject is
 * rejected the same way in memory (tests run on memory; production runs on Redis).
 */
import type { JobOptions, RateLimiterOptions } from './ports.js'

/** Throws a RangeError unless `value` is a finite number of milliseconds (> 0, or >= 0 when allowed). */
export function assertDuration(label: string, value: number, allowZero = false): void {
  const ok = Number.isFinite(value) && (allowZero ? value >= 0 : value > 0)
  if (!ok) {
    throw new RangeError(`${label} must be a finite number of milliseconds ${allowZero ? '>= 0' : '> 0'}`)
  }
}

/** Throws a RangeError unless `value` is an integer >= `min`. */
export function assertInteger(label: string, value: number, min: number): void {
  if (!Number.isInteger(value) || value < min) throw new RangeError(`${label} must be an integer >= ${min}`)
}

/** Job names become BullMQ queue names, which cannot be empty or contain ':'. */
export function assertJobName(name: string): void {
  if (name === '' || name.includes(':')) {
    throw new RangeError(`Job name "${name}" must be non-empty without ':'`)
  }
}

/** Checks every field of `JobOptions` the adapters rely on. */
export function assertJobOptions(options: JobOptions): void {
  if (options.delayMs !== undefined) assertDuration('delayMs', options.delayMs, true)
  if (options.attempts !== undefined) assertInteger('attempts', options.attempts, 1)
  if (options.backoff !== undefined) assertDuration('backoff.delayMs', options.backoff.delayMs, true)
  if (options.jobId === '') throw new RangeError('jobId must not be empty')
}

/** Checks the options of `createRateLimiter`. */
export function assertRateLimiterOptions(options: RateLimiterOptions): void {
  assertInteger('limit', options.limit, 1)
  assertDuration('windowMs', options.windowMs)
}

/** Handlers may throw anything; listeners and BullMQ expect an Error. */
export function toError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value))
}
