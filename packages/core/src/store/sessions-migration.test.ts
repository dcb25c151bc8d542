import { copyFileSync, mkdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newId } from '../ids.js'
import { createStore, type Store } from './client.js'
import { defaultMigrationsDir, migrate, readMigrations } from './migrate.js'
import { renderMigration } from './render-ddl.js'

// Migration 0004 replaces the per-column session states with one packed state and rebuilds the
// sessions table from page_views; 0005 rebuilds it again in smaller granules. A database migrated
// before them must come out with the same sessions, and a run that is repeated (after a crash
// part-way) must not count twice.
const tmp = tempDir('vid-sessions-migration-')
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

const readSessions = () =>
  store.query(
    `WITH argMinMerge(first_page_view) AS first
     SELECT toString(session_id) AS session, toUInt32(sum(page_view_count)) AS views,
      toUInt32(sum(engaged_ms)) AS engaged, max(max_scroll) AS scroll,
      first.landing_page AS landing, first.entry_page AS entry,
      first.country AS country, first.utm_source AS utm, first.asn AS asn, first.tracking_params AS params,
      argMaxMerge(exit_page) AS exit, argMaxMerge(company_id) AS company
     FROM sessions
     WHERE organization_id = {org:UUID} AND session_id != toUUID('00000000-0000-0000-0000-000000000000')
     GROUP BY session_id ORDER BY session`,
    { org },
  )

beforeAll(async () => {
  store = createStore({ database: 'default', dataDir: tmp.dir })
  // The schema as it was before 0004, with events ingested under it.
  const before = path.join(tmp.dir, 'before-0004')
  mkdirSync(before)
  for (const migration of readMigrations().filter((m) => m.version < 4)) {
    copyFileSync(path.join(defaultMigrationsDir, migration.name), path.join(before, migration.name))
  }
  await migrate(store, { dir: before })
  await store.insert('page_views', [
    pageView({
      timestamp: '2026-03-01T10:00:00.000Z',
      url: 'https://a.test/?utm_source=news&gclid=1',
      path: '/',
      utm_source: 'news',
      country: 'FR',
      asn: 3215,
      tracking_params: { gclid: '1' },
    }),
    pageView({
      timestamp: '2026-03-01T10:02:00.000Z',
      url: 'https://a.test/pricing',
      path: '/pricing',
      company_id: 'acme',
    }),
  ])
  // An identified visitor, in two versions of its row.
  const identified = { id: visitor, organization_id: org, first_seen_at: '2026-03-01T10:00:00.000Z' }
  await store.insert('visitors', [
    { ...identified, email: 'old@a.test', last_seen_at: '2026-03-01T10:00:00.000Z', version: 1 },
    { ...identified, email: 'ada@a.test', last_seen_at: '2026-03-01T10:02:00.000Z', version: 2 },
  ])
  await store.insert('page_views', [
    pageView({
      type: 'engagement',
      timestamp: '2026-03-01T10:05:00.000Z',
      engaged_ms: 30_000,
      max_scroll: 70,
    }),
    pageView({
      session_id: otherSession,
      timestamp: '2026-03-02T08:00:00.000Z',
      url: 'https://a.test/docs',
      path: '/docs',
    }),
  ])
})

afterAll(async () => {
  await store.close()
  tmp.remove()
})

const expected = [
  {
    session,
    views: 2,
    engaged: 30_000,
    scroll: 70,
    landing: 'https://a.test/?utm_source=news&gclid=1',
    entry: '/',
    country: 'FR',
    utm: 'news',
    asn: 3215,
    params: { gclid: '1' },
    exit: '/pricing',
    company: 'acme',
  },
  {
    session: otherSession,
    views: 1,
    engaged: 0,
    scroll: 0,
    landing: 'https://a.test/docs',
    entry: '/docs',
    country: '',
    utm: '',
    asn: 0,
    params: {},
    exit: '/docs',
    company: '',
  },
].sort((a, b) => a.session.localeCompare(b.session))

describe('migrations 0004 (packed session states), 0005 (small session granules) and 0006 (visitor facts)', () => {
  it('rebuild the sessions of events ingested before them', async () => {
    // Later migrations follow; these three rebuild and fill from the events already stored.
    expect((await migrate(store)).applied.slice(0, 3)).toEqual([
      '0004_packed_sessions.sql',
      '0005_visitor_timeline.sql',
      '0006_icp.sql',
    ])
    expect(await readSessions()).toEqual(expected)
    // 0006 fills the visitor facts from the same events.
    const [facts] = await store.query<{ views: number; sessions: number }>(
      'SELECT sum(page_view_count) AS views, uniqExactMerge(sessions) AS sessions FROM visitor_facts',
    )
    expect(facts).toEqual({ views: 3, sessions: 2 })
    const [table] = await store.query<{ engine_full: string }>(
      "SELECT engine_full FROM system.tables WHERE database = currentDatabase() AND name = 'sessions'",
    )
    // Small granules: 256 rows from 0005, 64 since 0028 copied the table (its own test).
    expect(table?.engine_full).toMatch(/index_granularity = 64\b/)
    // The visitor's identity row, from the latest version of its row.
    const [identity] = await store.query<{ identity: string }>(
      `SELECT finalizeAggregation(identity) AS identity FROM sessions FINAL
       WHERE organization_id = {org:UUID} AND visitor_id = {visitor:UUID}
         AND session_id = toUUID('00000000-0000-0000-0000-000000000000')`,
      { org, visitor },
    )
    expect(JSON.parse(identity!.identity)).toMatchObject({ email: 'ada@a.test', is_deleted: 0 })
  })

  it('count nothing twice when they run again, and the view still feeds new events', async () => {
    for (const name of ['0004_packed_sessions.sql', '0005_visitor_timeline.sql']) {
      const sql = readFileSync(path.join(defaultMigrationsDir, name), 'utf8')
      for (const statement of renderMigration(sql, { database: 'default' })) await store.command(statement)
      expect(await readSessions()).toEqual(expected)
    }

    await store.insert('page_views', [
      pageView({ timestamp: '2026-03-01T10:09:00.000Z', url: 'https://a.test/signup', path: '/signup' }),
    ])
    const [first] = (await readSessions()).filter((row) => row.session === session)
    expect(first).toMatchObject({
      views: 3,
      exit: '/signup',
      landing: expected.find((e) => e.session === session)?.landing,
    })
  })
})
