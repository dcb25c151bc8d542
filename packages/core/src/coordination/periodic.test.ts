// Two processes' periodic tasks under one lock never run a pass at the same time; a failing pass
// is reported and the next one runs.
import { describe, expect, it } from 'vitest'
import { createMemoryCoordination } from './memory.js'
import { startPeriodicTask } from './periodic.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('startPeriodicTask', () => {
  it('runs passes one at a time across tasks sharing the lock, and keeps going after a failure', async () => {
    const coordination = createMemoryCoordination()
    let running = 0
    let most = 0
    let passes = 0
    const errors: unknown[] = []
    const task = () =>
      startPeriodicTask({
        locks: coordination.locks,
        lockName: 'test:periodic',
        lockTtlMs: 10_000,
        intervalMs: 5,
        async pass() {
          most = Math.max(most, ++running)
          passes++
          await sleep(15)
          running--
          if (passes === 2) throw new Error('second pass fails')
        },
        onError: (error) => errors.push(error),
      })
    const [a, b] = [task(), task()]
    await sleep(200)
    await Promise.all([a.stop(), b.stop()])
    const after = passes
    await sleep(50)
    expect(most).toBe(1)
    expect(passes).toBeGreaterThan(3)
    expect(errors).toHaveLength(1)
    expect(passes).toBe(after) // stopped: no pass after stop()
    await coordination.close()
  })
})
