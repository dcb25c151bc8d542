import { describe, expect, it } from 'vitest'
import { createBatchWriter } from './batch-writer.js'

describe('createBatchWriter', () => {
  it('writes when the row bound is reached, and acknowledges only after the write', async () => {
    const batches: number[][] = []
    let release!: () => void
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    const writer = createBatchWriter<number>({
      sink: async (rows) => {
        await gate
        batches.push(rows)
      },
      maxRows: 3,
      maxMs: 60_000,
    })
    let acknowledged = false
    const first = writer.add([1, 2]).then(() => {
      acknowledged = true
    })
    const second = writer.add([3])
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(acknowledged).toBe(false)
    release()
    await Promise.all([first, second])
    expect(batches).toEqual([[1, 2, 3]])
  })

  it('writes after maxMs when the batch stays small', async () => {
    const batches: number[][] = []
    const writer = createBatchWriter<number>({
      sink: async (rows) => void batches.push(rows),
      maxRows: 100,
      maxMs: 30,
    })
    const started = Date.now()
    await writer.add([7])
    expect(Date.now() - started).toBeGreaterThanOrEqual(25)
    expect(batches).toEqual([[7]])
  })

  it('rejects every caller of a failed batch and keeps working after', async () => {
    let fail = true
    const written: number[] = []
    const writer = createBatchWriter<number>({
      sink: async (rows) => {
        if (fail) throw new Error('store down')
        written.push(...rows)
      },
      maxRows: 2,
      maxMs: 10,
    })
    const results = await Promise.allSettled([writer.add([1]), writer.add([2])])
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected'])
    fail = false
    await writer.add([3])
    expect(written).toEqual([3])
  })

  it('flushes on close and refuses rows afterwards', async () => {
    const written: number[] = []
    const writer = createBatchWriter<number>({
      sink: async (rows) => void written.push(...rows),
      maxRows: 100,
      maxMs: 60_000,
    })
    const pending = writer.add([1, 2, 3])
    expect(writer.pending).toBe(3)
    await writer.close()
    await pending
    expect(written).toEqual([1, 2, 3])
    await expect(writer.add([4])).rejects.toThrow(/closed/)
  })
})

describe('barrier', () => {
  it('settles with the batch being filled, even when it fails, and with no rows at all', async () => {
    let fail = true
    const writer = createBatchWriter<number>({
      sink: async () => {
        if (fail) throw new Error('down')
      },
      maxRows: 100,
      maxMs: 20,
    })
    const accepted = writer.add([1]).catch(() => 'rejected')
    await expect(writer.barrier()).resolves.toBeUndefined()
    expect(await accepted).toBe('rejected')
    fail = false
    const started = Date.now()
    await writer.barrier()
    expect(Date.now() - started).toBeGreaterThanOrEqual(15)
    await writer.close()
    await expect(writer.barrier()).resolves.toBeUndefined()
  })
})

describe('group commit', () => {
  it('keeps one time-due write in flight and lets the next batch grow meanwhile', async () => {
    const batches: number[][] = []
    let running = 0
    let maxRunning = 0
    const writer = createBatchWriter<number>({
      sink: async (rows) => {
        running += 1
        maxRunning = Math.max(maxRunning, running)
        await new Promise((resolve) => setTimeout(resolve, 40))
        batches.push(rows)
        running -= 1
      },
      maxRows: 1000,
      maxMs: 5,
    })
    const adds: Promise<void>[] = []
    for (let i = 0; i < 30; i++) {
      adds.push(writer.add([i]))
      await new Promise((resolve) => setTimeout(resolve, 3))
    }
    await Promise.all(adds)
    expect(maxRunning).toBe(1)
    expect(batches.flat()).toEqual(Array.from({ length: 30 }, (_, i) => i))
    expect(batches.length).toBeLessThan(10)
  })

  it('never holds back a full batch', async () => {
    let running = 0
    let maxRunning = 0
    const writer = createBatchWriter<number>({
      sink: async () => {
        running += 1
        maxRunning = Math.max(maxRunning, running)
        await new Promise((resolve) => setTimeout(resolve, 30))
        running -= 1
      },
      maxRows: 2,
      maxMs: 1000,
    })
    await Promise.all([writer.add([1, 2]), writer.add([3, 4]), writer.add([5, 6])])
    expect(maxRunning).toBe(3)
  })
})
