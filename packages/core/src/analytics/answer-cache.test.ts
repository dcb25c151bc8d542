// The statistics answer cache is exact: after any write an answer reads (page views and the
// rollups they feed, a settling pass, an identification, a company profile, an ICP score), the
// cached answer equals a fresh computation; identical requests under way share one computation;
// the cache keeps at most its bound; and every table a statistics statement reads is one whose
// parts make the data version.

import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { IcpConfigRow } from '../icp/rows.js'
import { newId } from '../ids.js'
import { createStore, type Store } from '../store/client.js'
import { migrate } from '../store/migrate.js'
import { type AnswerCache, answerKey, answerTables, createAnswerCache } from './answer-cache.js'
import { companyStatistics } from './companies.js'
import { filteredHits, insertDroppedHits } from './filtered-hits.js'
import { settleFirstHours } from './first-hours.js'
import type { StatisticsQuery } from './scope.js'
import { statisticsTotals } from './totals.js'
import { visitorStatistics } from './visitors.js'

const tmp = tempDir('vid-answer-cache-')
let store: Store
let cache: AnswerCache
const org = newId()
const now = Date.now()
const hourAgo = new Date(now - 3_600_000).toISOString()
const visitors = Array.from({ length: 12 }, () => newId())
const config = { id: 'icp-1', slug: 'fit', kind: 'organization', is_active: true } as IcpConfigRow
const query: StatisticsQuery = {
  organizationId: org,
  range: { from: new Date(now - 2 * 86_400_000).toISOString(), to: new Date(now).toISOString() },
  configs: [config],
}
const page = { page: 1, limit: 25 }

const pageView = (visitor: string, company: string, at: string) => ({
  event_id: newId(),
  organization_id: org,
  visitor_id: visitor,
  session_id: newId(),
  type: 'pageview',
  timestamp: at,
  received_at: at,
  url: 'https://shop.test/',
  path: '/',
  engaged_ms: 0,
  company_id: company,
})
const stamp = (version: number) => ({ created_at: hourAgo, updated_at: hourAgo, version })

// Each endpoint's answer through the cache, and computed afresh.
const answers = {
  companies: () => companyStatistics(store, { ...query, page }),
  visitors: () => visitorStatistics(store, { ...query, page }),
  totals: async () => ({
    ...(await statisticsTotals(store, query)),
    filtered: await filteredHits(store, query),
  }),
}
type Endpoint = keyof typeof answers
const cached = <E extends Endpoint>(endpoint: E) =>
  cache.get(
    answerKey(endpoint, { ...query, page } as StatisticsQuery),
    answers[endpoint] as () => Promise<unknown>,
  )

/** Every endpoint's cached answer equals a fresh one; returns the cached ones. */
async function expectFresh() {
  const result = {} as { [E in Endpoint]: Awaited<ReturnType<(typeof answers)[E]>> }
  for (const endpoint of Object.keys(answers) as Endpoint[]) {
    const { value } = await cached(endpoint)
    expect(value).toEqual(await answers[endpoint]())
    Object.assign(result, { [endpoint]: value })
  }
  return result
}

beforeAll(async () => {
  store = createStore({ database: 'default', dataDir: tmp.dir })
  await migrate(store)
  cache = createAnswerCache(store, { maxRows: 10_000 })
  await store.insert(
    'page_views',
    visitors.map((visitor, i) => pageView(visitor, i % 2 ? 'acme' : 'globex', hourAgo)),
  )
  await store.insert('companies', [
    { id: 'acme', name: 'Acme', domain: 'acme.test', ...stamp(1) },
    { id: 'globex', name: 'Globex', domain: 'globex.test', ...stamp(1) },
  ])
  await settleFirstHours(store)
})

afterAll(async () => {
  await store?.close()
  tmp.remove()
})

describe('the statistics answer cache', () => {
  it('serves an answer again while nothing changed', async () => {
    await expectFresh()
    for (const endpoint of Object.keys(answers) as Endpoint[]) {
      expect((await cached(endpoint)).outcome).toBe('hit')
    }
  })

  it('an identification shows in the visitors list at once', async () => {
    await expectFresh()
    const visitor = visitors[3]!
    await store.insert('visitors', [
      {
        id: visitor,
        organization_id: org,
        email: 'ada@acme.test',
        first_name: 'Ada',
        last_name: 'Lovelace',
        job_title: 'CTO',
        company_id: 'acme',
        identified_at: hourAgo,
        first_seen_at: hourAgo,
        last_seen_at: hourAgo,
        ...stamp(1),
      },
    ])
    const { visitors: list } = await expectFresh()
    expect(list.rows.find((row) => row.id === visitor)?.email).toBe('ada@acme.test')
  })

  it('new page views count at once where the rollups count them, and the settling pass changes the totals', async () => {
    const before = await expectFresh()
    await store.insert('page_views', [pageView(newId(), 'initech', new Date(now - 60_000).toISOString())])
    // The companies of the range come from company_hours, fed with the page views.
    const inserted = await expectFresh()
    expect(inserted.totals.companies).toBe(before.totals.companies + 1)
    expect(inserted.totals.visitors).toBe(before.totals.visitors)
    await settleFirstHours(store)
    const settled = await expectFresh()
    expect(settled.totals.visitors).toBe(before.totals.visitors + 1)
  })

  it("a company's new profile, an ICP score and a filtered hit show at once", async () => {
    await expectFresh()
    await store.insert('companies', [{ id: 'acme', name: 'Acme Corp', domain: 'acme.test', ...stamp(2) }])
    const { companies } = await expectFresh()
    expect(companies.rows.find((row) => row.id === 'acme')?.name).toBe('Acme Corp')
    await store.insert('icp_scores', [
      {
        organization_id: org,
        config_id: config.id,
        visitor_id: visitors[5]!,
        matched: 1,
        persona: 0,
        score: 100,
        computed_at: hourAgo,
        version: 1,
      },
    ])
    const { visitors: list } = await expectFresh()
    expect(list.rows.find((row) => row.id === visitors[5])?.icp).toBe(true)
    await insertDroppedHits(
      store,
      [{ organization_id: org, day: hourAgo.slice(0, 10), reason: 'bot', hits: 3 }],
      newId(),
    )
    const { totals } = await expectFresh()
    expect(totals.filtered.byReason.bot).toBe(3)
  })

  it('the configs of the request are part of its key', () => {
    const inactive = { ...config, is_active: false }
    expect(answerKey('totals', { ...query, configs: [inactive] })).not.toBe(answerKey('totals', query))
    // The range as counted (whole hours): two requests in the same hour share their answer.
    const later = { ...query.range, to: new Date(Date.parse(query.range.to) + 1).toISOString() }
    const sameHour = Math.floor(Date.parse(later.to) / 3_600_000) === Math.floor(now / 3_600_000)
    expect(answerKey('totals', { ...query, range: later }) === answerKey('totals', query)).toBe(sameHour)
  })

  it('identical requests under way share one computation', async () => {
    let computed = 0
    const slow = async () => {
      computed++
      await new Promise((resolve) => setTimeout(resolve, 50))
      return computed
    }
    const results = await Promise.all([cache.get('shared', slow), cache.get('shared', slow)])
    expect(computed).toBe(1)
    expect(results.map((r) => r.outcome).sort()).toEqual(['miss', 'shared'])
    expect(results.map((r) => r.value)).toEqual([1, 1])
  })

  it('keeps at most its bound in rows, and computes every time when off', async () => {
    const small = createAnswerCache(store, { maxRows: 2 })
    const value = async () => 1
    for (const key of ['a', 'b', 'c']) expect((await small.get(key, value)).outcome).toBe('miss')
    expect((await small.get('c', value)).outcome).toBe('hit')
    expect((await small.get('a', value)).outcome).toBe('miss')
    // A page of two rows takes the room of both answers kept; one of three is not kept at all.
    const page = (rows: number) => async () => ({
      rows: Array.from({ length: rows }, (_, i) => i),
      total: rows,
    })
    expect((await small.get('two', page(2))).outcome).toBe('miss')
    expect((await small.get('two', page(2))).outcome).toBe('hit')
    expect((await small.get('a', value)).outcome).toBe('miss')
    expect((await small.get('three', page(3))).outcome).toBe('miss')
    expect((await small.get('three', page(3))).outcome).toBe('miss')
    const off = createAnswerCache(store, { maxRows: 0 })
    expect((await off.get('a', value)).outcome).toBe('off')
    expect((await off.get('a', value)).outcome).toBe('off')
  })

  it('every table a statistics statement reads makes the data version', async () => {
    const statements: string[] = []
    const watched = Object.create(store) as Store
    watched.query = (sql, params) => {
      statements.push(sql)
      return store.query(sql, params)
    }
    const audiences = [{}, { icpOnly: true }, { personaOnly: true }, { icpSlug: config.slug }]
    for (const audience of audiences) {
      const asked = { ...query, ...audience }
      await companyStatistics(watched, { ...asked, page })
      await companyStatistics(watched, { ...asked, page, sort: 'sessions' })
      await visitorStatistics(watched, { ...asked, page })
      await visitorStatistics(watched, { ...asked, page: { page: 2, limit: 5 } })
      await visitorStatistics(watched, { ...asked, page, companyId: 'acme' })
      await visitorStatistics(watched, { ...asked, page, domain: 'acme.test' })
      await statisticsTotals(watched, asked)
    }
    await filteredHits(watched, query)
    const ctes = new Set(['identified', 'icp_matched', 'persona_matched', 'slug_matched'])
    const read = new Set(
      statements.flatMap((sql) =>
        [...sql.matchAll(/\b(?:FROM|JOIN)\s+([a-z_][a-z0-9_]*)/gi)].map((match) => match[1]!),
      ),
    )
    const tables = [...read].filter((name) => !ctes.has(name))
    expect(tables.length).toBeGreaterThan(5)
    expect(tables.filter((name) => !(answerTables as readonly string[]).includes(name))).toEqual([])
  })
})
