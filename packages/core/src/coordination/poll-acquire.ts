/**
 * `Locks.acquire` for both adapters: neither an in-process map nor `SET NX` can notify waiters, so a
 * waiter retries `tryAcquire` with a short, growing, jittered pause until its deadline.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { type LockHandle, LockTimeoutError } from './ports.js'

const FIRST_PAUSE_MS = 10
const MAX_PAUSE_MS = 100

/** Retries `tryAcquire` until it yields a handle; throws LockTimeoutError once `waitMs` has passed. */
export async function pollAcquire(
  name: string,
  waitMs: number,
  tryAcquire: () => Promise<LockHandle | undefined>,
): Promise<LockHandle> {
  const deadline = Date.now() + waitMs
  let pause = FIRST_PAUSE_MS
  for (;;) {
    const handle = await tryAcquire()
    if (handle) return handle
    const left = deadline - Date.now()
    if (left <= 0) throw new LockTimeoutError(name, waitMs)
    // The pause timer stays ref'd on purpose: the caller is awaiting it, and an unref'd timer would let
    // Node exit in the middle of that await. It is bounded by waitMs, so it cannot hold a process forever.
    // Jitter keeps many waiters from retrying in lockstep.
    await sleep(Math.min(left, pause * (0.5 + Math.random() / 2)))
    pause = Math.min(pause * 2, MAX_PAUSE_MS)
  }
}
