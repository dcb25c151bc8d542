// The filtered-hit counter against the embedded engine: counts add up in memory and reach the store
// as one insert per flush, a failed write is tried again with its token (never doubled, never lost).
import { filteredHits } from '@visitor-id/core/analytics'
import { newId } from '@visitor-id/core/ids'
import { createStore, migrate, type Store } from '@visitor-id/core/store'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDroppedHits } from './dropped-hits.js'

const tmp = tempDir('vid-dropped-hits-')
let real: Store

beforeAll(async () => {
  real = createStore({ database: 'default', dataDir: tmp.dir })
  await migrate(real)
})

afterAll(async () => {
  await real?.close()
  tmp.remove()
})

/**
 * The real store with its inserts recorded; `faults` makes the next inserts fail, either before
 * anything is written (`down`) or after the rows landed (`lost-answer`, a timeout after the write).
 */
function recordingStore() {
  const inserts: { table: string; rows: number; token: string | undefined }[] = []
  const faults: ('down' | 'lost-answer')[] = []
  const store: Store = {
    ...real,
    async insert(table, rows, options) {
      inserts.push({ table, rows: rows.length, token: options?.dedupToken })
      const fault = faults.shift()
      if (fault === 'down') throw new Error('store unavailable')
      await real.insert(table, rows, options)
      if (fault === 'lost-answer') throw new Error('no answer')
    },
  }
  return { store, inserts, faults }
}

const day = (iso: string) => Date.parse(`${iso}T12:00:00Z`)
const counted = (organizationId: string, from: string, to = from) =>
  filteredHits(real, { organizationId, range: { from, to } })

describe('dropped hits counter', () => {
  it('adds hits up by organization, UTC day and reason, and writes them in one insert', async () => {
    const { store, inserts } = recordingStore()
    const dropped = createDroppedHits({ store })
    const [a, b] = [newId(), newId()]
    for (let i = 0; i < 1000; i++) dropped.add(a, 'bot', day('2026-04-01'))
    for (let i = 0; i < 10; i++) dropped.add(a, 'automation', day('2026-04-01'))
    dropped.add(a, 'bot', Date.parse('2026-04-01T23:59:59.999Z'))
    dropped.add(a, 'bot', Date.parse('2026-04-02T00:00:00.000Z'))
    dropped.add(b, 'origin', day('2026-04-01'))
    expect(dropped.pending).toBe(4)
    await dropped.flush()
    expect(inserts).toEqual([{ table: 'dropped_hits', rows: 4, token: expect.any(String) }])
    expect(dropped.pending).toBe(0)
    expect(await counted(a, '2026-04-01')).toMatchObject({
      total: 1011,
      byReason: { bot: 1001, automation: 10 },
    })
    expect(await counted(a, '2026-04-02')).toMatchObject({ total: 1, byReason: { bot: 1 } })
    expect(await counted(b, '2026-04-01', '2026-04-02')).toMatchObject({ total: 1, byReason: { origin: 1 } })
    // Nothing new: no write at all.
    await dropped.flush()
    expect(inserts).toHaveLength(1)
  })

  it('keeps counts the store refused and writes them with the next flush', async () => {
    const { store, inserts, faults } = recordingStore()
    const errors: unknown[] = []
    const dropped = createDroppedHits({ store, onError: (error) => errors.push(error) })
    const org = newId()
    dropped.add(org, 'privacy', day('2026-04-03'))
    faults.push('down', 'down')
    await dropped.flush()
    dropped.add(org, 'privacy', day('2026-04-03'))
    await dropped.flush()
    expect(errors).toHaveLength(2)
    expect(dropped.pending).toBe(2)
    // The failed write again, under its first token, then what came since.
    await dropped.flush()
    expect(inserts.map((insert) => insert.token)).toEqual([
      inserts[0]!.token,
      inserts[0]!.token,
      inserts[0]!.token,
      expect.not.stringMatching(inserts[0]!.token!),
    ])
    expect(dropped.pending).toBe(0)
    expect((await counted(org, '2026-04-03')).byReason.privacy).toBe(2)
  })

  it('a write that landed but was not answered is not doubled by its retry', async () => {
    const { store, faults } = recordingStore()
    const dropped = createDroppedHits({ store, onError: () => {} })
    const org = newId()
    for (let i = 0; i < 5; i++) dropped.add(org, 'bot', day('2026-04-04'))
    faults.push('lost-answer')
    await dropped.flush()
    expect(dropped.pending).toBe(1)
    await dropped.flush()
    expect(dropped.pending).toBe(0)
    expect((await counted(org, '2026-04-04')).byReason.bot).toBe(5)
  })

  it('writes on its own every flushMs, and what is left when closed', async () => {
    const { store } = recordingStore()
    const dropped = createDroppedHits({ store, flushMs: 50 })
    const org = newId()
    dropped.start()
    dropped.add(org, 'invalid', day('2026-04-05'))
    await expect.poll(() => dropped.pending, { timeout: 5000 }).toBe(0)
    expect((await counted(org, '2026-04-05')).byReason.invalid).toBe(1)
    dropped.add(org, 'invalid', day('2026-04-05'))
    await dropped.close()
    expect((await counted(org, '2026-04-05')).byReason.invalid).toBe(2)
  })
})
