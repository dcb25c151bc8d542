import { appendFileSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterEach, describe, expect, it } from 'vitest'
import { openSpool, SpoolFullError } from './spool.js'

const dirs: { remove: () => void }[] = []
const newDir = () => {
  const dir = tempDir('vid-spool-')
  dirs.push(dir)
  return dir.dir
}
afterEach(() => {
  for (const dir of dirs.splice(0)) dir.remove()
})

describe('spool', () => {
  it('replays batches in order, survives a reopen, and truncates once drained', async () => {
    const dir = newDir()
    const spool = await openSpool<{ n: number }>({ dir, maxBytes: 1 << 20 })
    await spool.append('a', [{ n: 1 }, { n: 2 }])
    await spool.append('b', [{ n: 3 }])
    const first = await spool.peek()
    expect(first).toMatchObject({ token: 'a', rows: [{ n: 1 }, { n: 2 }] })
    await spool.commit(first!)
    await spool.close()

    const reopened = await openSpool<{ n: number }>({ dir, maxBytes: 1 << 20 })
    const second = await reopened.peek()
    expect(second).toMatchObject({ token: 'b', rows: [{ n: 3 }] })
    await reopened.commit(second!)
    expect(await reopened.peek()).toBeUndefined()
    expect(reopened.pendingBytes).toBe(0)
    expect(readFileSync(path.join(dir, 'spool.jsonl'), 'utf8')).toBe('')
    await reopened.close()
  })

  it('cuts a line torn by a crash (it was never acknowledged)', async () => {
    const dir = newDir()
    const spool = await openSpool<{ n: number }>({ dir, maxBytes: 1 << 20 })
    await spool.append('a', [{ n: 1 }])
    await spool.close()
    appendFileSync(path.join(dir, 'spool.jsonl'), '{"t":"b","r":[{"n":')
    const reopened = await openSpool<{ n: number }>({ dir, maxBytes: 1 << 20 })
    const entry = await reopened.peek()
    expect(entry?.token).toBe('a')
    await reopened.commit(entry!)
    expect(await reopened.peek()).toBeUndefined()
    await reopened.close()
  })

  it('refuses appends past its bound', async () => {
    const dir = newDir()
    const spool = await openSpool<string>({ dir, maxBytes: 100 })
    await spool.append('a', ['x'.repeat(40)])
    await expect(spool.append('b', ['y'.repeat(60)])).rejects.toBeInstanceOf(SpoolFullError)
    expect(spool.full).toBe(true)
    await spool.close()
  })

  it('skips a corrupt line instead of blocking the batches behind it', async () => {
    const dir = newDir()
    writeFileSync(path.join(dir, 'spool.jsonl'), 'garbage\n{"t":"ok","r":[1]}\n')
    const corrupt: number[] = []
    const spool = await openSpool<number>({
      dir,
      maxBytes: 1 << 20,
      onCorrupt: (offset) => corrupt.push(offset),
    })
    expect(await spool.peek()).toMatchObject({ token: 'ok', rows: [1] })
    expect(corrupt).toEqual([0])
    await spool.close()
  })

  it('reads ahead from an entry without committing, and a commit covers everything before it', async () => {
    const dir = newDir()
    // A corrupt line after an uncommitted entry must not be skipped for good by a read-ahead.
    writeFileSync(
      path.join(dir, 'spool.jsonl'),
      '{"t":"a","r":[1]}\ngarbage\n{"t":"b","r":[2]}\n{"t":"c","r":[3]}\n',
    )
    const spool = await openSpool<number>({ dir, maxBytes: 1 << 20, sync: false })
    const a = await spool.peek()
    const b = await spool.peek(a!.next)
    expect(b).toMatchObject({ token: 'b', rows: [2] })
    expect(await spool.peek()).toMatchObject({ token: 'a' })
    await spool.commit(b!)
    expect(await spool.peek()).toMatchObject({ token: 'c', rows: [3] })
    await spool.close()
    const reopened = await openSpool<number>({ dir, maxBytes: 1 << 20 })
    expect(await reopened.peek()).toMatchObject({ token: 'c' })
    await reopened.close()
  })

  it('keeps concurrent appends whole and in call order', async () => {
    const dir = newDir()
    const spool = await openSpool<number>({ dir, maxBytes: 1 << 24 })
    await Promise.all(Array.from({ length: 50 }, (_, i) => spool.append(`t${i}`, [i])))
    const tokens: string[] = []
    for (let entry = await spool.peek(); entry; entry = await spool.peek()) {
      tokens.push(entry.token)
      await spool.commit(entry)
    }
    expect(tokens).toEqual(Array.from({ length: 50 }, (_, i) => `t${i}`))
    await spool.close()
  })

  it('copies the batches not yet replayed, whole, taking its turn among appends and commits', async () => {
    const dir = newDir()
    const spool = await openSpool<number>({ dir, maxBytes: 1 << 24 })
    await Promise.all(Array.from({ length: 10 }, (_, i) => spool.append(`t${i}`, [i])))
    await spool.commit((await spool.peek())!)
    // Asked for among appends and a commit: it holds what was appended before it was asked, all of it.
    const before = Array.from({ length: 10 }, (_, i) => spool.append(`u${i}`, [10 + i]))
    const copy = path.join(newDir(), 'spool')
    const copying = spool.copyTo(copy)
    const after = [spool.append('v', [20]), spool.peek().then((entry) => spool.commit(entry!))]
    await Promise.all([...before, copying, ...after])
    expect(await copying).toBe(readFileSync(path.join(copy, 'spool.jsonl')).length)
    const copied = await openSpool<number>({ dir: copy, maxBytes: 1 << 24 })
    const tokens: string[] = []
    for (let entry = await copied.peek(); entry; entry = await copied.peek()) {
      tokens.push(entry.token)
      await copied.commit(entry)
    }
    expect(tokens).toEqual([
      ...Array.from({ length: 9 }, (_, i) => `t${i + 1}`),
      ...Array.from({ length: 10 }, (_, i) => `u${i}`),
    ])
    await copied.close()
    await spool.close()
  })
})
