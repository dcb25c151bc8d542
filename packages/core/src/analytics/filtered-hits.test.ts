// The filtered hits of an organization (dropped_hits) read for a range, on the embedded engine:
// summed across writes and reasons, per UTC day, one organization never seeing another's.
import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newId } from '../ids.js'
import { createStore, type Store } from '../store/client.js'
import { migrate } from '../store/migrate.js'
import { type DroppedHitRow, filteredHits, insertDroppedHits } from './filtered-hits.js'

const tmp = tempDir('vid-filtered-hits-')
let store: Store
const org = newId()
const other = newId()

const row = (organizationId: string, day: string, reason: DroppedHitRow['reason'], hits: number) => ({
  organization_id: organizationId,
  day,
  reason,
  hits,
})

beforeAll(async () => {
  store = createStore({ database: 'default', dataDir: tmp.dir })
  await migrate(store)
  // Two writes of the same keys (two flushes, or two ingest processes) add up.
  await insertDroppedHits(
    store,
    [
      row(org, '2026-03-01', 'bot', 5),
      row(org, '2026-03-01', 'automation', 2),
      row(org, '2026-03-02', 'origin', 3),
      row(org, '2026-03-03', 'privacy', 1),
      row(other, '2026-03-01', 'bot', 100),
    ],
    newId(),
  )
  await insertDroppedHits(
    store,
    [row(org, '2026-03-01', 'bot', 7), row(org, '2026-03-02', 'invalid', 4)],
    newId(),
  )
})

afterAll(async () => {
  await store?.close()
  tmp.remove()
})

const range = (from: string, to: string) => ({ organizationId: org, range: { from, to } })

describe('filtered hits', () => {
  it('sums every write by reason over the days of the range, all reasons present', async () => {
    expect(await filteredHits(store, range('2026-03-01T00:00:00Z', '2026-03-03T23:59:59Z'))).toEqual({
      total: 22,
      byReason: { bot: 12, automation: 2, origin: 3, privacy: 1, invalid: 4, consent: 0, company_only: 0 },
    })
  })

  it('counts whole UTC days: a range touching a day counts all of it', async () => {
    // From the last hour of March 1st to the first hour of March 2nd: both days whole.
    expect(await filteredHits(store, range('2026-03-01T23:30:00Z', '2026-03-02T00:10:00Z'))).toEqual({
      total: 21,
      byReason: { bot: 12, automation: 2, origin: 3, privacy: 0, invalid: 4, consent: 0, company_only: 0 },
    })
    expect((await filteredHits(store, range('2026-03-03T05:00:00Z', '2026-03-03T06:00:00Z'))).total).toBe(1)
  })

  it('answers zeros outside the counted days and for an organization without any', async () => {
    const zeros = {
      total: 0,
      byReason: { bot: 0, automation: 0, origin: 0, privacy: 0, invalid: 0, consent: 0, company_only: 0 },
    }
    expect(await filteredHits(store, range('2026-02-01T00:00:00Z', '2026-02-28T23:59:59Z'))).toEqual(zeros)
    expect(
      await filteredHits(store, { organizationId: newId(), range: { from: '2026-03-01', to: '2026-03-31' } }),
    ).toEqual(zeros)
  })

  it('never shows one organization the hits of another', async () => {
    const theirs = await filteredHits(store, {
      organizationId: other,
      range: { from: '2026-03-01T00:00:00Z', to: '2026-03-31T00:00:00Z' },
    })
    expect(theirs).toEqual({
      total: 100,
      byReason: { bot: 100, automation: 0, origin: 0, privacy: 0, invalid: 0, consent: 0, company_only: 0 },
    })
  })

  it('keeps a reason it does not know in the total only', async () => {
    const newer = newId()
    await store.insert('dropped_hits', [
      { organization_id: newer, day: '2026-03-05', reason: 'future', hits: 9 },
    ])
    await insertDroppedHits(store, [row(newer, '2026-03-05', 'bot', 1)], newId())
    expect(
      await filteredHits(store, {
        organizationId: newer,
        range: { from: '2026-03-05', to: '2026-03-05T12:00:00Z' },
      }),
    ).toEqual({
      total: 10,
      byReason: { bot: 1, automation: 0, origin: 0, privacy: 0, invalid: 0, consent: 0, company_only: 0 },
    })
  })
})
