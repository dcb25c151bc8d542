import { readFileSync } from 'node:fs'
import path from 'node:path'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newId } from '../ids.js'
import { createStore, type Store } from './client.js'
import { defaultMigrationsDir, migrate } from './migrate.js'
import { renderMigration } from './render-ddl.js'

// Migration 0028 copies sessions into granules of 64 rows: every stored row (sessions, identity
// rows, ICP scores) must read back the same after it, a second run (after a crash part-way) must
// count nothing twice, and the three views must write into the new table.
const tmp = tempDir('vid-sessions-granules-')
let store: Store

const org = newId()
const visitor = newId()
const session = newId()
const otherSession = newId()

const pageView = (overrides: Record<string, unknown>) => ({
  organization_id: org,
  visitor_id: visitor,
  session_id: session,
  event_id: newId(),
  type: 'pageview',
  ...overrides,
})

const score = (configId: string, computedAt: string, value: number) => ({
  organization_id: org,
  config_id: configId,
  visitor_id: visitor,
  matched: 1,
  persona: 0,
  score: value,
  computed_at: computedAt,
  version: Date.parse(computedAt),
})

/** Every row of the visitor's timeline, merged, as the profile reads it. */
const readTimeline = () =>
  store.query(
    `SELECT toString(session_id) AS id, started_at, ended_at, page_view_count, engaged_ms, max_scroll,
       finalizeAggregation(first_page_view) AS first, finalizeAggregation(exit_page) AS exit_page,
       finalizeAggregation(company_id) AS company_id, finalizeAggregation(views) AS views,
       finalizeAggregation(identity) AS identity, icp
     FROM sessions FINAL
     WHERE organization_id = {org:UUID} AND visitor_id = {visitor:UUID}
     ORDER BY id`,
    { org, visitor },
  )

const granularity = async () => {
  const [table] = await store.query<{ engine_full: string }>(
    "SELECT engine_full FROM system.tables WHERE database = currentDatabase() AND name = 'sessions'",
  )
  return /index_granularity = (\d+)/.exec(table?.engine_full ?? '')?.[1]
}

let before: unknown[]

beforeAll(async () => {
  store = createStore({ database: 'default', dataDir: tmp.dir })
  await migrate(store, { upTo: 27 })
  // Page views in two blocks (so sessions holds partial states to merge), two versions of the
  // visitor's row, and two scores of one config and one of another.
  await store.insert('page_views', [
    pageView({ timestamp: '2026-03-01T10:00:00.000Z', url: 'https://a.test/', path: '/', title: 'Home' }),
    pageView({ timestamp: '2026-03-01T10:02:00.000Z', url: 'https://a.test/pricing', path: '/pricing' }),
  ])
  await store.insert('page_views', [
    pageView({
      type: 'engagement',
      timestamp: '2026-03-01T10:05:00.000Z',
      engaged_ms: 30_000,
      max_scroll: 70,
    }),
    pageView({ session_id: otherSession, timestamp: '2026-03-02T08:00:00.000Z', url: 'https://a.test/docs' }),
  ])
  const identified = { id: visitor, organization_id: org, first_seen_at: '2026-03-01T10:00:00.000Z' }
  await store.insert('visitors', [
    { ...identified, email: 'old@a.test', updated_at: '2026-03-01T10:00:00.000Z', version: 1 },
    { ...identified, email: 'ada@a.test', updated_at: '2026-03-01T10:02:00.000Z', version: 2 },
  ])
  await store.insert('icp_scores', [score('cfg-a', '2026-03-01T11:00:00.000Z', 40)])
  await store.insert('icp_scores', [
    score('cfg-a', '2026-03-02T11:00:00.000Z', 80),
    score('cfg-b', '2026-03-02T11:00:00.000Z', 10),
  ])
  before = await readTimeline()
})

afterAll(async () => {
  await store.close()
  tmp.remove()
})

describe('migration 0028 (sessions in granules of 64 rows)', () => {
  it('keeps every row of sessions: sessions, the identity row and its ICP scores', async () => {
    expect(before).toHaveLength(3)
    expect(await granularity()).toBe('256')
    expect((await migrate(store)).applied[0]).toBe('0028_session_granules.sql')
    expect(await granularity()).toBe('64')
    expect(await readTimeline()).toEqual(before)
    const leftovers = await store.query(
      "SELECT name FROM system.tables WHERE database = currentDatabase() AND name LIKE 'sessions_granules%'",
    )
    expect(leftovers).toEqual([])
  })

  it('counts nothing twice when it runs again, and the three views write into the new table', async () => {
    const sql = readFileSync(path.join(defaultMigrationsDir, '0028_session_granules.sql'), 'utf8')
    for (const statement of renderMigration(sql, { database: 'default' })) await store.command(statement)
    expect(await readTimeline()).toEqual(before)

    await store.insert('page_views', [
      pageView({ timestamp: '2026-03-01T10:09:00.000Z', url: 'https://a.test/signup', path: '/signup' }),
    ])
    await store.insert('visitors', [
      {
        id: visitor,
        organization_id: org,
        email: 'ada@b.test',
        first_seen_at: '2026-03-01T10:00:00.000Z',
        updated_at: '2026-03-03T10:00:00.000Z',
        version: 3,
      },
    ])
    await store.insert('icp_scores', [score('cfg-b', '2026-03-03T11:00:00.000Z', 90)])
    const after = await readTimeline()
    const first = after.find((row) => row.id === session)
    expect(first).toMatchObject({ page_view_count: 3, exit_page: '/signup' })
    const identity = after.find((row) => row.id === '00000000-0000-0000-0000-000000000000')
    expect(JSON.parse(String(identity?.identity))).toMatchObject({ email: 'ada@b.test', version: 3 })
    const [configs, values] = (identity?.icp ?? [[], []]) as [string[], (string | number)[]]
    const scores = Object.fromEntries(configs.map((config, i) => [config, Number(BigInt(values[i]!) % 256n)]))
    expect(scores).toEqual({ 'cfg-a': 80, 'cfg-b': 90 })
  })
})
