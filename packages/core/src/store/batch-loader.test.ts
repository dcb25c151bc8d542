import { describe, expect, it } from 'vitest'
import { createBatchLoader } from './batch-loader.js'

// The loader on its own, with a read the test controls: when it answers, and what.

interface Deferred {
  keys: readonly string[]
  answer(values?: readonly unknown[]): void
  fail(error: unknown): void
}

/** A loader whose reads wait until the test answers them; `reads` lists them in order. */
function controlledLoader(options: { maxBatch?: number; maxInFlight?: number } = {}) {
  const reads: Deferred[] = []
  const loader = createBatchLoader<string, string>({
    keyOf: (key) => key,
    loadMany: (keys) =>
      new Promise((resolve, reject) => {
        reads.push({
          keys: [...keys],
          answer: (values) => resolve((values ?? keys.map((key) => `value of ${key}`)) as string[]),
          fail: reject,
        })
      }),
    ...options,
  })
  return { loader, reads }
}

const tick = () => new Promise((resolve) => setImmediate(resolve))

describe('createBatchLoader', () => {
  it('reads a key alone when nothing else runs', async () => {
    const { loader, reads } = controlledLoader()
    const value = loader.load('a')
    await tick()
    expect(reads.map((r) => r.keys)).toEqual([['a']])
    reads[0]!.answer()
    expect(await value).toBe('value of a')
  })

  it('serves the keys asked for while a read runs with one next read', async () => {
    const { loader, reads } = controlledLoader()
    const first = loader.load('a')
    await tick()
    const waiting = ['b', 'c', 'd'].map((key) => loader.load(key))
    await tick()
    expect(reads).toHaveLength(1) // b, c and d wait for a's read to end
    reads[0]!.answer()
    expect(await first).toBe('value of a')
    await tick()
    expect(reads.map((r) => r.keys)).toEqual([['a'], ['b', 'c', 'd']])
    reads[1]!.answer()
    expect(await Promise.all(waiting)).toEqual(['value of b', 'value of c', 'value of d'])
  })

  it('shares one key between the callers of a batch, and never joins a read already sent', async () => {
    const { loader, reads } = controlledLoader()
    const first = loader.load('a')
    await tick()
    const again = [loader.load('a'), loader.load('a')]
    await tick()
    reads[0]!.answer(['old'])
    expect(await first).toBe('old')
    await tick()
    expect(reads[1]!.keys).toEqual(['a']) // asked for after the first read went out: read anew
    reads[1]!.answer(['new'])
    expect(await Promise.all(again)).toEqual(['new', 'new'])
  })

  it('asks for at most maxBatch keys per read, sending a full batch at once', async () => {
    const { loader, reads } = controlledLoader({ maxBatch: 3 })
    const first = loader.load('a')
    await tick()
    const rest = ['b', 'c', 'd', 'e', 'f', 'g', 'h'].map((key) => loader.load(key))
    await tick()
    // b-d and e-g filled their batches and went out; h waits for a read to end.
    expect(reads.map((r) => r.keys)).toEqual([['a'], ['b', 'c', 'd'], ['e', 'f', 'g']])
    for (const read of reads) read.answer()
    await first
    await tick()
    expect(reads.map((r) => r.keys).at(-1)).toEqual(['h'])
    reads.at(-1)!.answer()
    expect(await Promise.all(rest)).toEqual(['b', 'c', 'd', 'e', 'f', 'g', 'h'].map((k) => `value of ${k}`))
  })

  it('runs up to maxInFlight reads at once', async () => {
    const { loader, reads } = controlledLoader({ maxInFlight: 2 })
    const values = [loader.load('a')]
    await tick()
    values.push(loader.load('b'))
    await tick()
    values.push(loader.load('c'), loader.load('d'))
    await tick()
    expect(reads.map((r) => r.keys)).toEqual([['a'], ['b']])
    reads[1]!.answer()
    await tick()
    expect(reads.map((r) => r.keys)).toEqual([['a'], ['b'], ['c', 'd']])
    reads[0]!.answer()
    reads[2]!.answer()
    expect(await Promise.all(values)).toEqual(['a', 'b', 'c', 'd'].map((k) => `value of ${k}`))
  })

  it("rejects every caller of a failed read, and only that read's", async () => {
    const { loader, reads } = controlledLoader()
    const first = loader.load('a')
    await tick()
    const failing = [loader.load('b'), loader.load('c'), loader.load('b')]
    await tick()
    reads[0]!.answer()
    await first
    await tick()
    const later = loader.load('d')
    reads[1]!.fail(new Error('store unavailable'))
    const settled = await Promise.allSettled(failing)
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected', 'rejected'])
    expect(settled.map((s) => (s as PromiseRejectedResult).reason.message)).toEqual([
      'store unavailable',
      'store unavailable',
      'store unavailable',
    ])
    // The loader goes on: the next key gets its own read.
    await tick()
    reads[2]!.answer()
    expect(await later).toBe('value of d')
  })

  it('rejects a batch whose read answers another number of values than keys', async () => {
    const { loader, reads } = controlledLoader()
    const values = [loader.load('a'), loader.load('b')]
    await tick()
    reads[0]!.answer(['only one'])
    for (const result of await Promise.allSettled(values)) {
      expect(result.status).toBe('rejected')
      expect((result as PromiseRejectedResult).reason.message).toMatch(/1 values for 2 keys/)
    }
  })

  it('rejects the batch when loadMany throws instead of returning a promise', async () => {
    const loader = createBatchLoader<string, string>({
      keyOf: (key) => key,
      loadMany: () => {
        throw new Error('bad SQL')
      },
    })
    await expect(loader.load('a')).rejects.toThrow('bad SQL')
  })
})
