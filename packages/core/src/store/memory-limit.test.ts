// The embedded engine's memory bounds on the real engine: the settings every session runs with,
// a statement past its limit refused as a memory refusal, and the passes over many visitors
// (settling first hours, ICP scoring) finishing in smaller slices under a small per-statement
// limit, with the same results as the whole would give.

import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { settleFirstHours } from '../analytics/first-hours.js'
import type { IcpConfigRow } from '../icp/rows.js'
import { scoreConfig } from '../icp/scoring.js'
import { newId } from '../ids.js'
import { createStore, type Store } from './client.js'
import { migrate } from './migrate.js'
import { isMemoryRefusal, runInSlices, type Slice, sliceCondition, sliceParams } from './slices.js'

const tmp = tempDir('vid-memory-limit-')
const mib = 1024 ** 2
const memoryLimit = 1024 * mib
const queryMemoryLimit = 32 * mib
let store: Store
const organizationId = newId()
// Enough visitors that one statement over all of them needs more than 32 MiB.
const visitors = 100_000
const pageViews = visitors * 4

beforeAll(async () => {
  store = createStore({ database: 'default', dataDir: tmp.dir, memoryLimit, queryMemoryLimit })
  await migrate(store)
  // The last round of page views for half of the visitors only: 3 page views or 4.
  await insertPageViews(
    0,
    pageViews,
    'now64(3) - toIntervalMinute(number % 4000)',
    'number < 3 * {visitors:UInt64} OR number % {visitors:UInt64} % 2 = 0',
  )
}, 120_000)

/**
 * Page views `from` to `to` (visitor `n % visitors`, session by half of the rows), at `at`. Made in
 * the engine, 20,000 rows per statement, each under the engine's total with its views, and with its
 * own statement limit lifted (a fill, not what is tested).
 */
async function insertPageViews(from: number, to: number, at: string, where = 'true') {
  for (let offset = from; offset < to; offset += 20_000) {
    await store.command(
      `INSERT INTO page_views (event_id, organization_id, visitor_id, session_id, type, timestamp, received_at, url, path, company_id)
       SELECT generateUUIDv4(number), {organizationId:UUID},
         reinterpretAsUUID(cityHash64(number % {visitors:UInt64})),
         reinterpretAsUUID(cityHash64(number % {visitors:UInt64}, intDiv(number, {twice:UInt64}))),
         'pageview', ${at}, now64(3), 'https://shop.test/', '/',
         if(number % 3 = 0, concat('co-', toString(number % 1000)), '')
       FROM numbers({offset:UInt64}, {rows:UInt64})
       WHERE ${where}
       SETTINGS max_memory_usage = 0`,
      { organizationId, visitors, twice: visitors * 2, offset, rows: Math.min(20_000, to - offset) },
    )
  }
}

afterAll(async () => {
  await store?.close()
  tmp.remove()
})

describe('memory bounds of the embedded engine', () => {
  it('starts the engine with its total and caches bounded, and every session with the statement limit', async () => {
    const server = await store.query<{ name: string; value: string }>(
      `SELECT name, value FROM system.server_settings
       WHERE name IN ('max_server_memory_usage', 'mark_cache_size', 'primary_index_cache_size', 'merges_mutations_memory_usage_soft_limit')`,
    )
    expect(Object.fromEntries(server.map((row) => [row.name, Number(row.value)]))).toEqual({
      max_server_memory_usage: memoryLimit,
      mark_cache_size: memoryLimit / 8,
      primary_index_cache_size: memoryLimit / 16,
      merges_mutations_memory_usage_soft_limit: memoryLimit / 2,
    })
    // One after the other, the calls go to each session in turn.
    for (let i = 0; i < 8; i++) {
      const [row] = await store.query<{ value: string }>(
        `SELECT value FROM system.settings WHERE name = 'max_memory_usage'`,
      )
      expect(Number(row?.value)).toBe(queryMemoryLimit)
    }
  })

  it('refuses a statement past its limit as a memory refusal, and runs it in slices instead', async () => {
    const groupAll = (slice: Slice) =>
      store.query(
        `SELECT number % 3000000 AS key, any(number) FROM numbers(6000000)
         WHERE ${sliceCondition('number % 3000000')} GROUP BY key SETTINGS max_bytes_before_external_group_by = 0, max_bytes_ratio_before_external_group_by = 0`,
        sliceParams(slice),
      )
    const refusal = await groupAll({ count: 1, index: 0 }).then(
      () => undefined,
      (error: unknown) => error,
    )
    expect(isMemoryRefusal(refusal)).toBe(true)
    let rows = 0
    const splits: Slice[] = []
    const done = await runInSlices(
      async (slice) => {
        rows += (await groupAll(slice)).length
      },
      { onSplit: (slice) => splits.push(slice) },
    )
    expect(splits.length).toBeGreaterThan(0)
    // Every key exactly once across the slices that ran.
    expect(rows).toBe(3_000_000)
    expect(done.reduce((sum, slice) => sum + 1 / slice.count, 0)).toBeCloseTo(1, 10)
  })

  it('settles first hours in slices under a small limit, exactly: all visitors, then those that changed', async () => {
    const splits: Slice[] = []
    expect((await settleFirstHours(store, { onSplit: (slice) => splits.push(slice) })).full).toBe(true)
    expect(splits.length).toBeGreaterThan(0)
    await expectSettled()
    // A page view more for a quarter of the visitors, an hour from now: they changed since the
    // pass, and the sets of changed visitors a statement builds are sliced with it.
    await insertPageViews(0, visitors, 'now64(3) + toIntervalHour(1)', 'number % 4 = 0')
    splits.length = 0
    expect((await settleFirstHours(store, { onSplit: (slice) => splits.push(slice) })).full).toBe(false)
    expect(splits.length).toBeGreaterThan(0)
    await expectSettled()
  }, 180_000)

  async function expectSettled() {
    const [settled] = await store.query<{ visitors: number; sessions: number }>(
      `SELECT sumIf(sign, kind = 'visitor') AS visitors, sumIf(sign, kind = 'session') AS sessions
       FROM first_hours WHERE organization_id = {organizationId:UUID}`,
      { organizationId },
    )
    // One row per active hour of each visitor and of each session.
    const [raw] = await store.query<{ visitors: number; sessions: number }>(
      `SELECT uniqExact(visitor_id, toStartOfHour(timestamp)) AS visitors,
         uniqExact(session_id, toStartOfHour(timestamp)) AS sessions
       FROM page_views WHERE organization_id = {organizationId:UUID} SETTINGS max_memory_usage = 0`,
      { organizationId },
    )
    expect({ visitors: Number(settled?.visitors), sessions: Number(settled?.sessions) }).toEqual({
      visitors: Number(raw?.visitors),
      sessions: Number(raw?.sessions),
    })
  }

  it('scores an ICP config in slices under a small limit, every visitor once', async () => {
    const config: IcpConfigRow = {
      id: 'icp_memory',
      organization_id: organizationId,
      kind: 'partner',
      slug: 'memory',
      name: 'memory',
      filter: '',
      rules: JSON.stringify({
        groups: [{ operator: 'AND', conditions: [{ type: 'page_view_count', comparator: 'gte', value: 4 }] }],
      }),
      priority: 0,
      is_active: true,
      created_at: '',
      updated_at: '',
    }
    const splits: Slice[] = []
    await scoreConfig(store, config, { organizationConfigIds: [], onSplit: (slice) => splits.push(slice) })
    expect(splits.length).toBeGreaterThan(0)
    const [scored] = await store.query<{ matched: number; rows: number; visitors: number }>(
      `SELECT sum(matched) AS matched, count() AS rows, uniqExact(visitor_id) AS visitors FROM icp_scores
       WHERE organization_id = {organizationId:UUID} AND config_id = 'icp_memory' SETTINGS max_memory_usage = 0`,
      { organizationId },
    )
    const [expected] = await store.query<{ matched: number }>(
      `SELECT countIf(n >= 4) AS matched FROM (
         SELECT visitor_id, count() AS n FROM page_views WHERE organization_id = {organizationId:UUID} GROUP BY visitor_id
       ) SETTINGS max_memory_usage = 0`,
      { organizationId },
    )
    expect(Number(scored?.matched)).toBe(Number(expected?.matched))
    expect(Number(scored?.matched)).toBeGreaterThan(0)
    // No visitor written twice: a refused statement's rows are kept, not written again.
    expect(Number(scored?.rows)).toBe(Number(scored?.visitors))
  }, 120_000)
})
