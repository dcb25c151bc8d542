// Scoring in ClickHouse equals the ICP engine's evaluate() over the same visitor's facts read back
// (fast-check: random visitors, companies and rule sets, on the real embedded store).
import { evaluate, type Facts, parseRules } from '@visitor-id/icp-engine'
import { tempDir } from '@visitor-id/testing/temp-dir'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newId } from '../ids.js'
import { createStore, type Store } from '../store/client.js'
import { migrate } from '../store/migrate.js'
import { factsQuery } from './facts.js'
import { filterToRules } from './filter-rules.js'
import type { IcpConfigRow } from './rows.js'
import { scoreConfig } from './scoring.js'

const tmp = tempDir('vid-icp-scoring-')
let store: Store

beforeAll(async () => {
  store = createStore({ database: 'default', dataDir: tmp.dir })
  await migrate(store)
})

afterAll(async () => {
  await store?.close()
  tmp.remove()
})

// Small vocabularies, so random rules and random visitors meet often.
const words = {
  utm: ['google', 'LinkedIn', 'news', ''],
  path: ['/', '/pricing', '/Pricing/Team', '/docs', '/blog/ai'],
  country: ['US', 'FR', 'de', ''],
  industry: ['SaaS', 'saas', 'Fintech', 'Retail', ''],
  size: ['120', '51-200', '9', '', '1e3'],
  range: ['1-10', '51-200', '201-500', ''],
  title: ['CTO', 'VP Engineering', 'Chief Technology Officer', ''],
  seniority: ['c-level', 'vp', 'manager', ''],
}
const pick = <T>(list: readonly T[]) => fc.constantFrom(...list)

const companyArb = fc.record({
  industry: pick(words.industry),
  size: pick(words.size),
  employee_size_range: pick(words.range),
  country: pick(words.country),
  city: pick(['Paris', 'Berlin', '']),
})
const visitorArb = fc.record({
  views: fc.array(
    fc.record({
      utm: pick(words.utm),
      path: pick(words.path),
      country: pick(words.country),
      hosting: fc.boolean(),
      session: fc.integer({ min: 0, max: 2 }),
    }),
    { minLength: 0, maxLength: 5 },
  ),
  contact: fc.option(
    fc.record({
      title: pick(words.title),
      seniority: pick(words.seniority),
      country: pick(words.country),
      company: fc.integer({ min: 0, max: 3 }),
    }),
  ),
  ipCompany: fc.option(fc.integer({ min: 0, max: 3 })),
  daysAgo: fc.integer({ min: 0, max: 60 }),
})

type VisitorSpec = typeof visitorArb extends fc.Arbitrary<infer T> ? T : never
type CompanySpec = typeof companyArb extends fc.Arbitrary<infer T> ? T : never

type Comparator =
  | 'equals'
  | 'not_equals'
  | 'contains'
  | 'in'
  | 'not_in'
  | 'exists'
  | 'gte'
  | 'between'
  | 'has_any'
const conditionArb = fc.oneof(
  fc
    .record({
      type: pick([
        'utm_source',
        'country',
        'industry',
        'job_title',
        'seniority',
        'employee_size_range',
        'company_country',
      ]),
      comparator: pick<Comparator>(['equals', 'not_equals', 'contains', 'in', 'not_in', 'has_any']),
      value: pick(
        [...words.utm, ...words.country, ...words.industry, ...words.title, ...words.range].filter(Boolean),
      ),
    })
    .map((c) => (['in', 'not_in', 'has_any'].includes(c.comparator) ? { ...c, value: [c.value] } : c)),
  fc.record({
    type: pick(['page_contains', 'page_equals']),
    comparator: pick<Comparator>(['contains', 'equals', 'not_contains' as Comparator]),
    value: pick(words.path),
  }),
  fc.record({
    type: pick(['page_view_count', 'session_count', 'company_size', 'last_seen_days']),
    comparator: pick<Comparator>(['gte', 'equals']),
    value: fc.integer({ min: 0, max: 40 }),
  }),
  fc.record({
    type: pick(['company_size', 'page_view_count']),
    comparator: fc.constant<Comparator>('between'),
    value: fc.tuple(fc.integer({ min: 0, max: 10 }), fc.integer({ min: 10, max: 500 })),
  }),
  fc.record({
    type: pick(['is_hosting', 'is_anonymous']),
    comparator: fc.constant<Comparator>('equals'),
    value: fc.boolean(),
  }),
  fc.record({
    type: pick(['industry', 'job_title', 'company_size', 'is_hosting', 'utm_source']),
    comparator: fc.constant<Comparator>('exists'),
    value: fc.boolean(),
  }),
)
const rulesArb = fc.record({
  groups: fc.array(
    fc.record({
      operator: pick(['AND', 'OR'] as const),
      conditions: fc.array(
        fc
          .record({ condition: conditionArb, optional: fc.boolean() })
          .map(({ condition, optional }) => ({ ...condition, optional })),
        { minLength: 1, maxLength: 4 },
      ),
    }),
    { minLength: 1, maxLength: 3 },
  ),
})
const filterArb = fc.record(
  {
    company: fc.record(
      {
        industries: fc.subarray(words.industry.filter(Boolean)),
        employee_size_ranges: fc.subarray(words.range.filter(Boolean)),
        countries: fc.subarray(words.country.filter(Boolean)),
      },
      { requiredKeys: [] },
    ),
    contact: fc.record(
      {
        job_titles: fc.subarray(['cto', 'vp', 'chief']),
        seniorities: fc.subarray(words.seniority.filter(Boolean)),
      },
      { requiredKeys: [] },
    ),
  },
  { requiredKeys: ['company', 'contact'] },
)

/** Writes a dataset for a fresh organization; returns its id. */
async function writeDataset(visitors: VisitorSpec[], companies: CompanySpec[]) {
  const org = newId()
  const companyId = (i: number) => `${org}-co-${i}`
  const at = new Date().toISOString()
  await store.insert(
    'companies',
    companies.map((c, i) => ({
      id: companyId(i),
      name: `Co ${i}`,
      ...c,
      source: 'import',
      created_at: at,
      updated_at: at,
      version: 1,
    })),
  )
  const ids = visitors.map(() => newId())
  const views = visitors.flatMap((v, n) => {
    const sessions = [newId(), newId(), newId()]
    const time = Date.now() - v.daysAgo * 86_400_000
    return v.views.map((view, i) => ({
      event_id: newId(),
      organization_id: org,
      visitor_id: ids[n],
      session_id: sessions[view.session],
      type: 'pageview',
      timestamp: new Date(time - i * 1000).toISOString(),
      received_at: at,
      url: `https://s.test${view.path}`,
      path: view.path,
      utm_source: view.utm,
      country: view.country,
      is_hosting: view.hosting,
      company_id: v.ipCompany === null ? '' : companyId(v.ipCompany),
      title: `v${n}`,
    }))
  })
  if (views.length > 0) await store.insert('page_views', views)
  const rows = visitors.flatMap((v, n) =>
    v.contact
      ? [
          {
            id: ids[n],
            organization_id: org,
            email: `p${n}@x.test`,
            job_title: v.contact.title,
            seniority: v.contact.seniority,
            country: v.contact.country,
            company_id: companyId(v.contact.company),
            first_seen_at: at,
            last_seen_at: at,
            created_at: at,
            updated_at: at,
            version: 1,
          },
        ]
      : [],
  )
  if (rows.length > 0) await store.insert('visitors', rows)
  return org
}

interface FactsRow extends Record<string, unknown> {
  visitor_id: string
}

async function factsOf(org: string): Promise<Map<string, Facts>> {
  const rows = await store.query<FactsRow>(`SELECT * FROM (${factsQuery()}) SETTINGS join_use_nulls = 1`, {
    organizationId: org,
  })
  return new Map(
    rows.map(({ visitor_id, ...columns }) => {
      const facts: Record<string, unknown> = {}
      for (const [key, value] of Object.entries(columns)) if (value !== null) facts[key] = value
      return [visitor_id, facts as Facts]
    }),
  )
}

async function scoresOf(org: string, configId: string) {
  const rows = await store.query<{ visitor_id: string; matched: number; persona: number; score: number }>(
    'SELECT visitor_id, matched, persona, score FROM icp_scores FINAL WHERE organization_id = {org:UUID} AND config_id = {id:String}',
    { org, id: configId },
  )
  return new Map(rows.map((r) => [r.visitor_id, r]))
}

const config = (
  org: string,
  kind: IcpConfigRow['kind'],
  body: { rules?: unknown; filter?: unknown },
): IcpConfigRow => ({
  id: `icp_${newId().slice(0, 8)}`,
  organization_id: org,
  kind,
  slug: 's',
  name: 'n',
  filter: kind === 'organization' ? JSON.stringify(body.filter) : '',
  rules: kind === 'partner' ? JSON.stringify(body.rules) : '',
  priority: 0,
  is_active: true,
  created_at: '',
  updated_at: '',
})

// Outcomes seen across a property's runs: a property that never saw a match (or a miss) tests little.
const seen = { matched: 0, missed: 0, persona: 0 }
const tally = (matched: boolean, persona = false) => {
  seen[matched ? 'matched' : 'missed']++
  if (persona) seen.persona++
}

describe('scoring in ClickHouse', () => {
  it('partner rules: the stored match and score equal evaluate() over the facts read back', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(visitorArb, { minLength: 1, maxLength: 8 }),
        fc.array(companyArb, { minLength: 4, maxLength: 4 }),
        fc.array(rulesArb, { minLength: 1, maxLength: 3 }),
        async (visitors, companies, ruleSets) => {
          const org = await writeDataset(visitors, companies)
          const facts = await factsOf(org)
          expect(facts.size).toBe(visitors.filter((v) => v.views.length > 0 || v.contact).length)
          for (const input of ruleSets) {
            // One config scored again with each rule set: only changed results are written, so this
            // checks that a visitor who stops matching is written too.
            const row = { ...config(org, 'partner', { rules: input }), id: `icp_${org.slice(0, 8)}` }
            await scoreConfig(store, row, { organizationConfigIds: [] })
            const scores = await scoresOf(org, row.id)
            const rules = parseRules(input)
            for (const [visitor, visitorFacts] of facts) {
              const expected = evaluate(rules, visitorFacts)
              tally(expected.matched)
              const stored = scores.get(visitor)
              expect(
                { matched: stored?.matched === 1, score: stored?.score ?? 0 },
                JSON.stringify({ input, visitorFacts }),
              ).toEqual({ matched: expected.matched, score: expected.score })
            }
          }
        },
      ),
      { numRuns: 25 },
    )
  }, 240_000)

  it('organization filters: company side = match, contact side = persona, as evaluate() says', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(visitorArb, { minLength: 1, maxLength: 8 }),
        fc.array(companyArb, { minLength: 4, maxLength: 4 }),
        filterArb,
        async (visitors, companies, filter) => {
          const org = await writeDataset(visitors, companies)
          const facts = await factsOf(org)
          const row = config(org, 'organization', { filter })
          await scoreConfig(store, row, { organizationConfigIds: [] })
          const scores = await scoresOf(org, row.id)
          const sides = filterToRules(filter)
          for (const [visitor, visitorFacts] of facts) {
            const company = sides.company ? evaluate(parseRules(sides.company), visitorFacts) : undefined
            const contact = sides.contact ? evaluate(parseRules(sides.contact), visitorFacts) : undefined
            const best = (e: typeof company) => (e ? Math.max(...e.groups.map((g) => g.score)) : undefined)
            const sideScores = [best(company), best(contact)].filter((s): s is number => s !== undefined)
            const score =
              sideScores.length === 0
                ? 0
                : Math.floor(
                    (2 * sideScores.reduce((a, b) => a + b, 0) + sideScores.length) / (2 * sideScores.length),
                  )
            const stored = scores.get(visitor)
            tally(company?.matched === true, contact?.matched === true)
            expect(
              { matched: stored?.matched ?? 0, persona: stored?.persona ?? 0, score: stored?.score ?? 0 },
              JSON.stringify({ filter, visitorFacts }),
            ).toEqual({
              matched: company?.matched ? 1 : 0,
              persona: contact?.matched ? 1 : 0,
              score,
            })
          }
        },
      ),
      { numRuns: 25 },
    )
    expect(seen.matched).toBeGreaterThan(5)
    expect(seen.missed).toBeGreaterThan(5)
    expect(seen.persona).toBeGreaterThan(0)
  }, 240_000)
})
