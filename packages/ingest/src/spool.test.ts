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

  it('compacts while never drained: the waiting entries move to a new file, also across a crash', async () => {
    const dir = newDir()
    // Each entry's line is 21 bytes: the fifth commit passes 100 replayed bytes.
    const spool = await openSpool<number>({ dir, maxBytes: 1 << 20, compactBytes: 100 })
    for (let n = 0; n < 10; n++) await spool.append(`t${n}`, [n, n])
    let entry = await spool.peek()
    for (let n = 0; n < 5; n++) {
      await spool.commit(entry!)
      entry = await spool.peek()
    }
    const lines = readFileSync(path.join(dir, 'spool.jsonl'), 'utf8').split('\n')
    expect(lines[0]).toBe('{"t":"t5","r":[5,5]}')
    expect(lines).toHaveLength(6)
    expect(entry?.token).toBe('t5')
    expect(spool.pendingBytes).toBe(5 * 21)
    await spool.close()

    // A crash after the new file replaced the old one, before the state named it: the state's
    // offset (the end of t4) belongs to the old file, which its inode tells.
    const state = JSON.parse(readFileSync(path.join(dir, 'spool.offset'), 'utf8'))
    writeFileSync(path.join(dir, 'spool.offset'), JSON.stringify({ offset: 105, ino: state.ino + 1 }))
    const reopened = await openSpool<number>({ dir, maxBytes: 1 << 20, compactBytes: 100 })
    const tokens: string[] = []
    for (let next = await reopened.peek(); next; next = await reopened.peek(next.next))
      tokens.push(next.token)
    expect(tokens).toEqual(['t5', 't6', 't7', 't8', 't9'])
    await reopened.close()
  })

  it('keeps a begun batch across a reopen until it is committed', async () => {
    const dir = newDir()
    const spool = await openSpool<number>({ dir, maxBytes: 1 << 20 })
    await spool.append('a', [1])
    await spool.append('b', [2])
    await spool.append('c', [3])
    const first = await spool.peek()
    const second = await spool.peek(first!.next)
    await spool.begin(second!)
    await spool.close()
    const reopened = await openSpool<number>({ dir, maxBytes: 1 << 20 })
    expect(reopened.begunEnd).toBe(second!.next)
    await reopened.commit(second!)
    expect(reopened.begunEnd).toBeUndefined()
    expect((await reopened.peek())?.token).toBe('c')
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
