import type { Locks } from './ports.js'

/**
 * Runs `work` holding the lock `name` (waiting up to `waitMs` for it, `LockTimeoutError` after),
 * and releases it whatever `work` does. `leaseMs` bounds how long a crashed holder blocks others.
 * @example await withLock(locks, `billing:${organizationId}`, { leaseMs: 60_000, waitMs: 30_000 }, apply)
 */
export async function withLock<T>(
  locks: Locks,
  name: string,
  times: { leaseMs: number; waitMs: number },
  work: () => Promise<T>,
): Promise<T> {
  const lock = await locks.acquire(name, times.leaseMs, times.waitMs)
  try {
    return await work()
  } finally {
    await lock.release()
  }
}
