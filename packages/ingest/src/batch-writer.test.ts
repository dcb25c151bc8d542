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
