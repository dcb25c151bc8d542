// The settling pass of first_hours against raw page views: whatever order hits arrive in and
// however passes fall between the inserts, the rows counted for a range are the distinct visitors,
// sessions and (company, visitor) and (company, session) pairs of that range, the session
// durations and page views exact; a second pass inserts nothing; an old watermark settles every
// visitor again without changing a figure.

import { tempDir } from '@visitor-id/testing/temp-dir'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMemoryCoordination } from '../coordination/memory.js'
import { markAudienceChanged } from '../icp/audience-changes.js'
import { newId } from '../ids.js'
import { createStore, type Store } from '../store/client.js'
import { migrate } from '../store/migrate.js'
import { settleFirstHours, settleFirstHoursNow } from './first-hours.js'

const tmp = tempDir('vid-first-hours-')
let store: Store
const hourMs = 3_600_000
const start = Date.parse('2026-10-01T00:00:00.000Z')

beforeAll(async () => {
  store = createStore({ database: 'default', dataDir: tmp.dir })
  await migrate(store)
})

afterAll(async () => {
  await store?.close()
  tmp.remove()
})

interface Hit {
  visitor: number
  session: number
  company: number
  /** Minutes after `start`, within 3 days. */
  minute: number
  pageview: boolean
}

function pageView(organizationId: string, ids: { visitors: string[]; sessions: string[] }, hit: Hit) {
  const at = new Date(start + hit.minute * 60_000).toISOString()
  return {
    event_id: newId(),
    organization_id: organizationId,
    visitor_id: ids.visitors[hit.visitor]!,
    session_id: ids.sessions[hit.visitor * 3 + hit.session]!,
    type: hit.pageview ? 'pageview' : 'engagement',
    timestamp: at,
    received_at: at,
    url: 'https://shop.test/',
    path: '/',
    engaged_ms: hit.pageview ? 0 : 10_000,
    company_id: hit.company === 0 ? '' : `co-${hit.company}`,
  }
}

/** Every figure of a range as first_hours counts it. */
async function counted(organizationId: string, from: number, to: number) {
  const [row] = await store.query<Record<string, number>>(
    `SELECT
      sumIf(sign, kind = 'visitor' AND previous_hour < {from:DateTime}) AS visitors,
      sumIf(sign, kind = 'session' AND previous_hour < {from:DateTime}) AS sessions,
      sumIf(sign, kind = 'company_visitor' AND previous_hour < {from:DateTime}) AS company_visitors,
      sumIf(sign, kind = 'company_session' AND previous_hour < {from:DateTime}) AS company_sessions,
      sumIf(sign * toInt64(page_view_count), kind = 'session') AS page_views,
      sumIf(sign * toInt64(page_view_count), kind = 'company_visitor') AS company_page_views,
      sumIf(sign * (toInt64(toUnixTimestamp64Milli(last_hit_at)) - if(previous_hour < {from:DateTime},
        toInt64(toUnixTimestamp64Milli(first_hit_at)), toInt64(toUnixTimestamp64Milli(previous_last_hit_at)))),
        kind = 'session') AS session_ms
    FROM first_hours
    WHERE organization_id = {organizationId:UUID} AND hour >= {from:DateTime} AND hour <= {to:DateTime}`,
    { organizationId, from: from / 1000, to: to / 1000 },
  )
  return Object.fromEntries(Object.entries(row ?? {}).map(([key, value]) => [key, Number(value)]))
}

/** The same figures, straight from the raw page views of the range's hours. */
async function raw(organizationId: string, from: number, to: number) {
  const [row] = await store.query<Record<string, number>>(
    `SELECT
      uniqExact(visitor_id) AS visitors,
      uniqExact(visitor_id, session_id) AS sessions,
      uniqExactIf((company_id, visitor_id), company_id != '') AS company_visitors,
      uniqExactIf((company_id, visitor_id, session_id), company_id != '') AS company_sessions,
      countIf(type = 'pageview') AS page_views,
      countIf(type = 'pageview' AND company_id != '') AS company_page_views,
      (SELECT sum(toInt64(toUnixTimestamp64Milli(last)) - toInt64(toUnixTimestamp64Milli(first))) FROM (
        SELECT min(timestamp) AS first, max(timestamp) AS last FROM page_views
        WHERE organization_id = {organizationId:UUID}
          AND timestamp >= {from:DateTime} AND timestamp < {end:DateTime}
        GROUP BY visitor_id, session_id)) AS session_ms
    FROM page_views
    WHERE organization_id = {organizationId:UUID} AND timestamp >= {from:DateTime} AND timestamp < {end:DateTime}`,
    { organizationId, from: from / 1000, end: (to + hourMs) / 1000 },
  )
  return Object.fromEntries(Object.entries(row ?? {}).map(([key, value]) => [key, Number(value)]))
}

const hitArb = fc.record({
  visitor: fc.integer({ min: 0, max: 5 }),
  session: fc.integer({ min: 0, max: 2 }),
  company: fc.integer({ min: 0, max: 2 }),
  minute: fc.integer({ min: 0, max: 3 * 24 * 60 - 1 }),
  pageview: fc.boolean(),
})

describe('settling first_hours', () => {
  it('counts every range exactly, whatever order hits and passes come in', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(hitArb, { minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 5 }),
        fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }),
        fc.array(
          fc
            .tuple(fc.integer({ min: 0, max: 71 }), fc.integer({ min: 0, max: 71 }))
            .map(([a, b]) => [Math.min(a, b), Math.max(a, b)]),
          { minLength: 3, maxLength: 3 },
        ),
        async (batches, passAfter, ranges) => {
          const organizationId = newId()
          const ids = {
            visitors: Array.from({ length: 6 }, () => newId()),
            sessions: Array.from({ length: 18 }, () => newId()),
          }
          for (const [index, batch] of batches.entries()) {
            await store.insert(
              'page_views',
              batch.map((hit) => pageView(organizationId, ids, hit)),
            )
            if (passAfter[index]) await settleFirstHours(store)
          }
          await settleFirstHours(store)
          for (const [first, last] of ranges) {
            const from = start + first! * hourMs
            const to = start + last! * hourMs
            expect(await counted(organizationId, from, to)).toEqual(await raw(organizationId, from, to))
          }
        },
      ),
      { numRuns: 25 },
    )
    // Up to 150 passes: 20-30 s on an idle two-core machine, more beside other test files.
  }, 120_000)

  it('a late hit between two settled hours: the later hour takes the new previous hour', async () => {
    const organizationId = newId()
    const ids = { visitors: [newId()], sessions: [newId(), newId(), newId()] }
    const at = (hours: number, session: number) => ({
      visitor: 0,
      session,
      company: 1,
      minute: hours * 60 + 5,
      pageview: true,
    })
    await store.insert('page_views', [
      pageView(organizationId, ids, at(1, 0)),
      pageView(organizationId, ids, at(5, 2)),
    ])
    await settleFirstHours(store)
    const from = start + 3 * hourMs
    const to = start + 6 * hourMs
    expect(await counted(organizationId, from, to)).toMatchObject({ visitors: 1, sessions: 1 })
    await store.insert('page_views', [pageView(organizationId, ids, at(3, 1))])
    await settleFirstHours(store)
    expect(await counted(organizationId, from, to)).toEqual(await raw(organizationId, from, to))
    expect(await counted(organizationId, from, to)).toMatchObject({ visitors: 1, sessions: 2 })
    // Hour 5's visitor row was taken back (-1) and written again with hour 3 as its previous hour.
    const live = await store.query<{ previous: string }>(
      `SELECT toString(previous_hour) AS previous FROM first_hours
       WHERE organization_id = {organizationId:UUID} AND kind = 'visitor' AND hour = {hour:DateTime}
       GROUP BY previous_hour HAVING sum(sign) != 0`,
      { organizationId, hour: (start + 5 * hourMs) / 1000 },
    )
    expect(live.map((row) => row.previous)).toEqual(['2026-10-01 03:00:00'])
  })

  it('an identification marks the visitor identified in its rows at the next pass', async () => {
    const organizationId = newId()
    const ids = { visitors: [newId(), newId()], sessions: Array.from({ length: 6 }, () => newId()) }
    await store.insert(
      'page_views',
      [0, 1].map((visitor) =>
        pageView(organizationId, ids, { visitor, session: 0, company: 1, minute: 90, pageview: true }),
      ),
    )
    await settleFirstHours(store)
    const identified = async () =>
      (
        await store.query<{ kind: string; n: number }>(
          `SELECT toString(kind) AS kind, sum(sign) AS n FROM first_hours
           WHERE organization_id = {o:UUID} AND identified = 1 GROUP BY kind ORDER BY kind`,
          { o: organizationId },
        )
      ).map((row) => [row.kind, Number(row.n)])
    expect(await identified()).toEqual([])
    const at = new Date().toISOString()
    await store.insert('visitors', [
      {
        id: ids.visitors[1],
        organization_id: organizationId,
        email: 'ada@acme.test',
        identified_at: at,
        first_seen_at: at,
        last_seen_at: at,
        created_at: at,
        updated_at: at,
        version: 1,
      },
    ])
    await settleFirstHours(store)
    expect(await identified()).toEqual([
      ['company_visitor', 1],
      ['visitor', 1],
    ])
  })

  it('the audience flags follow new scores and configs turned off or deleted', async () => {
    const organizationId = newId()
    const ids = { visitors: [newId(), newId(), newId()], sessions: Array.from({ length: 9 }, () => newId()) }
    await store.insert(
      'page_views',
      [0, 1, 2].map((visitor) =>
        pageView(organizationId, ids, {
          visitor,
          session: 0,
          company: 1,
          minute: 30 + visitor,
          pageview: true,
        }),
      ),
    )
    await settleFirstHours(store)
    const at = new Date().toISOString()
    const config = (id: string, kind: string, version: number, more: object = {}) => ({
      id,
      organization_id: organizationId,
      kind,
      slug: id,
      name: id,
      rules: '{}',
      is_active: true,
      created_at: at,
      updated_at: at,
      version,
      ...more,
    })
    const [company, partner] = [config('company-fit', 'organization', 1), config('partner-fit', 'partner', 1)]
    await store.insert('icp_configs', [company, partner])
    const score = (visitor: number, configId: string, persona: number) => ({
      organization_id: organizationId,
      config_id: configId,
      visitor_id: ids.visitors[visitor],
      matched: 1,
      persona,
      score: 100,
      computed_at: at,
      version: 1,
    })
    await store.insert('icp_scores', [score(0, company.id, 1), score(1, partner.id, 1)])
    /** The visitors flagged, as (flag, visitor index) per kind of row, and the ICP sums of the counts. */
    const flagged = async () => {
      const rows = await store.query<{ kind: string; flag: string; visitor: string; n: number }>(
        `SELECT toString(kind) AS kind, flag, toString(visitor_id) AS visitor, sum(sign) AS n
         FROM first_hours ARRAY JOIN [if(icp = 1, 'icp', ''), if(persona = 1, 'persona', '')] AS flag
         WHERE organization_id = {o:UUID} AND flag != '' GROUP BY kind, flag, visitor HAVING n != 0
         ORDER BY kind, flag, visitor`,
        { o: organizationId },
      )
      const [counts] = await store.query<{ icp: number }>(
        `SELECT sum(icp_rows) AS icp FROM first_hour_counts WHERE organization_id = {o:UUID} AND kind = 'visitor'`,
        { o: organizationId },
      )
      const visitor = (id: string) => ids.visitors.indexOf(id)
      return {
        visitors: rows
          .filter((row) => row.kind === 'visitor')
          .map((row) => [row.flag, visitor(row.visitor), Number(row.n)] as const)
          // By flag, then by the visitor's index (the ids are random).
          .sort((a, b) => a[0].localeCompare(b[0]) || a[1] - b[1]),
        kinds: [...new Set(rows.map((row) => row.kind))],
        icpCounted: Number(counts?.icp),
      }
    }
    // New scores: visitor 0 by the organization's config (persona too: counted, it is
    // organization-level), visitor 1 by the partner config (its persona never counts).
    await settleFirstHours(store)
    expect(await flagged()).toEqual({
      visitors: [
        ['icp', 0, 1],
        ['icp', 1, 1],
        ['persona', 0, 1],
      ],
      kinds: ['company_session', 'company_visitor', 'session', 'visitor'],
      icpCounted: 2,
    })
    // Turned off: its matches stop counting without a new score.
    await store.insert('icp_configs', [{ ...company, is_active: false, version: 2 }])
    await markAudienceChanged(store, company)
    await settleFirstHours(store)
    expect((await flagged()).visitors).toEqual([['icp', 1, 1]])
    // Deleted, likewise; the other visitors' rows never changed.
    await store.insert('icp_configs', [{ ...partner, is_deleted: 1, version: 2 }])
    await markAudienceChanged(store, partner)
    await settleFirstHours(store)
    expect(await flagged()).toEqual({ visitors: [], kinds: [], icpCounted: 0 })
  })

  it('a pass settles what changed since the last one: of its overlap, only the changes no pass has seen', async () => {
    const organizationId = newId()
    const ids = { visitors: [newId(), newId()], sessions: Array.from({ length: 6 }, () => newId()) }
    const hit = (visitor: number, hours: number) =>
      pageView(organizationId, ids, { visitor, session: 0, company: 1, minute: hours * 60, pageview: true })
    // Passes that take every change as complete at once (no grace), the first one's `until` ahead
    // of the next insert's stamp: for it, that insert is one that finished after its stamp.
    const ahead = Date.now() + 10_000
    const pass = (at: number) => settleFirstHours(store, { now: ahead + at, commitGraceMs: 0 })
    await pass(0)
    await store.insert('page_views', [hit(0, 1), hit(0, 2)])
    // In the overlap (before the last pass's until) and seen by no pass: settled.
    expect((await pass(1000)).visitors).toBe(1)
    await store.insert('page_views', [hit(1, 5)])
    // Visitor 1's change only: visitor 0's, in the overlap too, was settled by the pass before.
    expect((await pass(2000)).visitors).toBe(1)
    expect((await pass(3000)).visitors).toBe(0)
    const from = start
    const to = start + 6 * hourMs
    expect(await counted(organizationId, from, to)).toEqual(await raw(organizationId, from, to))
    expect(await counted(organizationId, from, to)).toMatchObject({ visitors: 2, sessions: 2, page_views: 3 })
  })

  it('a second pass inserts nothing; an old watermark settles every visitor again, changing nothing', async () => {
    const organizationId = newId()
    const ids = { visitors: [newId(), newId()], sessions: Array.from({ length: 6 }, () => newId()) }
    await store.insert(
      'page_views',
      [0, 1, 2, 30, 31, 70].map((hours, i) =>
        pageView(organizationId, ids, {
          visitor: i % 2,
          session: i % 3,
          company: i % 3,
          minute: hours * 60,
          pageview: true,
        }),
      ),
    )
    await settleFirstHours(store)
    const rows = async () =>
      Number(
        (
          await store.query<{ n: number }>(
            'SELECT count() AS n FROM first_hours WHERE organization_id = {o:UUID}',
            {
              o: organizationId,
            },
          )
        )[0]?.n,
      )
    const before = await rows()
    expect((await settleFirstHours(store)).full).toBe(false)
    expect(await rows()).toBe(before)
    // Two days on, the watermark is older than the changes kept: every visitor is settled again.
    expect((await settleFirstHours(store, { now: Date.now() + 2 * 24 * hourMs })).full).toBe(true)
    expect(await rows()).toBe(before)
    const from = start
    const to = start + 71 * hourMs
    expect(await counted(organizationId, from, to)).toEqual(await raw(organizationId, from, to))
  })

  it('a pass asked for at once waits for the lock of the periodic pass', async () => {
    const { locks } = createMemoryCoordination()
    const held = await locks.acquire('analytics:first-hours', 10_000, 1_000)
    let settled = false
    const pass = settleFirstHoursNow({ store, locks }).then(() => {
      settled = true
    })
    await new Promise((resolve) => setTimeout(resolve, 150))
    expect(settled).toBe(false)
    await held.release()
    await pass
    expect(settled).toBe(true)
  })
})
