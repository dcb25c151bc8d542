import type { IdentifyHit } from '@visitor-id/core/identification'
import { StoreError } from '@visitor-id/core/store'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterEach, describe, expect, it } from 'vitest'
import { createIdentifyQueue } from './identify-queue.js'
import { openSpool } from './spool.js'

const dirs: { remove: () => void }[] = []
const newDir = () => {
  const dir = tempDir('vid-identify-queue-')
  dirs.push(dir)
  return dir.dir
}
afterEach(() => {
  for (const dir of dirs.splice(0)) dir.remove()
})

const hit = (n: number): IdentifyHit => ({
  organization_id: 'org',
  visitor_id: `hit-${n}`,
  session_id: 'session',
  email: `p${n}@x.test`,
  timestamp: '2026-11-24T00:00:00.000Z',
  company_id: '',
})
const ids = (rows: IdentifyHit[]) => rows.map((row) => row.visitor_id)

describe('identification queue', () => {
  it('identifies the hits of many batches in one call, after batchMs', async () => {
    const spool = await openSpool<IdentifyHit>({ dir: newDir(), maxBytes: 1 << 20, sync: false })
    const calls: string[][] = []
    const queue = createIdentifyQueue({
      spool,
      batchMs: 50,
      identify: async (rows) => {
        calls.push(ids(rows))
      },
    })
    await queue.enqueue([hit(1), hit(2)])
    await queue.enqueue([hit(3)])
    await queue.enqueue([])
    expect(calls).toEqual([])
    await queue.drained()
    expect(calls).toEqual([['hit-1', 'hit-2', 'hit-3']])
    expect(spool.pendingBytes).toBe(0)
    await queue.enqueue([hit(4)])
    await queue.drained()
    expect(calls).toEqual([['hit-1', 'hit-2', 'hit-3'], ['hit-4']])
    await queue.stop()
    await spool.close()
  })

  it('keeps hits through a failing store and a restart: identified once it answers again', async () => {
    const dir = newDir()
    const spool = await openSpool<IdentifyHit>({ dir, maxBytes: 1 << 20, sync: false })
    let failures = 0
    const queue = createIdentifyQueue({
      spool,
      batchMs: 5,
      retryMinMs: 5,
      identify: async () => {
        failures += 1
        throw new StoreError('unavailable', 'connection refused')
      },
    })
    await queue.enqueue([hit(1)])
    await new Promise((resolve) => setTimeout(resolve, 100))
    await queue.stop()
    expect(failures).toBeGreaterThan(1)
    await spool.close()

    // The next process finds the hits and identifies them.
    const reopened = await openSpool<IdentifyHit>({ dir, maxBytes: 1 << 20, sync: false })
    const seen: string[] = []
    const next = createIdentifyQueue({
      spool: reopened,
      batchMs: 5,
      identify: async (rows) => {
        seen.push(...ids(rows))
      },
    })
    next.start()
    await next.drained()
    expect(seen).toEqual(['hit-1'])
    await next.stop()
    await reopened.close()
  })

  it('stop identifies what is waiting without waiting for batchMs', async () => {
    const spool = await openSpool<IdentifyHit>({ dir: newDir(), maxBytes: 1 << 20, sync: false })
    const seen: string[] = []
    const queue = createIdentifyQueue({
      spool,
      batchMs: 60_000,
      identify: async (rows) => {
        seen.push(...ids(rows))
      },
    })
    await queue.enqueue([hit(1), hit(2)])
    const started = Date.now()
    await queue.stop()
    expect(Date.now() - started).toBeLessThan(5000)
    expect(seen).toEqual(['hit-1', 'hit-2'])
    await spool.close()
  })

  it('sets aside hits the store refuses again and again; the hits behind them go on', async () => {
    const spool = await openSpool<IdentifyHit>({ dir: newDir(), maxBytes: 1 << 20, sync: false })
    const setAside: string[][] = []
    const seen: string[] = []
    const queue = createIdentifyQueue({
      spool,
      batchMs: 5,
      maxRows: 1,
      maxAttempts: 3,
      retryMinMs: 1,
      identify: async (rows) => {
        if (rows.some((row) => row.visitor_id === 'hit-1'))
          throw new StoreError('query', 'Cannot parse input')
        seen.push(...ids(rows))
      },
      onDeadLetter: async (rows) => {
        setAside.push(ids(rows))
      },
    })
    await queue.enqueue([hit(1)])
    await queue.enqueue([hit(2)])
    await queue.drained()
    expect(setAside).toEqual([['hit-1']])
    expect(seen).toEqual(['hit-2'])
    await queue.stop()
    await spool.close()
  })
})
