// A task every process may run, done by one at a time: every `intervalMs` a process takes the
// lock if it is free and runs one pass; passes never overlap, in one process or across them.
import type { Locks } from './ports.js'

export interface PeriodicTask {
  /** Stops the timer and waits for a pass under way. */
  stop(): Promise<void>
}

export interface PeriodicTaskOptions {
  locks: Locks
  /** The lock's name: one pass at a time under it, whatever the process. */
  lockName: string
  /** How long a pass may hold the lock (its lease, if the process dies). */
  lockTtlMs: number
  intervalMs: number
  pass(): Promise<void>
  /** A failed pass is reported here; the next one runs as usual. */
  onError(error: unknown): void
}

/**
 * Runs `pass` every `intervalMs` under the lock; a pass still running skips the tick.
 * @example const task = startPeriodicTask({ locks, lockName: 'events:dispatch', lockTtlMs: 30_000, intervalMs: 1000, pass, onError })
 */
export function startPeriodicTask(options: PeriodicTaskOptions): PeriodicTask {
  let running: Promise<void> | undefined
  const pass = async () => {
    const lock = await options.locks.tryAcquire(options.lockName, options.lockTtlMs)
    if (!lock) return
    try {
      await options.pass()
    } catch (error) {
      options.onError(error)
    } finally {
      await lock.release()
    }
  }
  const timer = setInterval(() => {
    running ??= pass()
      .catch(options.onError)
      .finally(() => {
        running = undefined
      })
  }, options.intervalMs)
  timer.unref()
  return {
    async stop() {
      clearInterval(timer)
      await running
    },
  }
}
