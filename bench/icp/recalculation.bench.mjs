#!/usr/bin/env node
// Benchmark: recalculating one ICP config over 1 M visitors (10 M page views) on the embedded store,
// next to the time of plainly reading the facts table in the same run.
//
//   npm run build && node bench/icp/recalculation.bench.mjs [--visitors 1000000] [--page-views 10000000] [--rounds 3]
//
// The store is filled through page_views (in-engine INSERT ... SELECT FROM numbers(), so the
// materialized views build sessions and visitor facts as ingest would), with 20,000 imported
// companies and 300,000 identified visitors, then merged (OPTIMIZE), as a store that has run a while.
// Each round measures, in this order:
// - plain read: every column of visitor_facts for the organization, merged (GROUP BY with the
//   -Merge combinators), nothing else: the floor of any scoring;
// - facts query: the same plus the company join, as scoring reads it;
// - first calculation of a new partner config (writes the visitors with something to show);
// - recalculation of that config after its rules changed (writes the visitors whose result changed);
// - recalculation of an organization-level config (company and contact sides) after its filter changed;
// - the same through the recalculation job (lock, status and counts).
// Figures go to stdout and to the "Recalculation" section of bench/icp/RESULTS.md.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { createMemoryCoordination } from '@visitor-id/core/coordination'
import { factsQuery, runRecalculation, scoreConfig } from '@visitor-id/core/icp'
import { bootstrapIfEmpty } from '@visitor-id/core/organizations'
import { createRepositories } from '@visitor-id/core/repositories'
import { createStore, migrate } from '@visitor-id/core/store'

const { values } = parseArgs({
  options: {
    visitors: { type: 'string', default: '1000000' },
    'page-views': { type: 'string', default: '10000000' },
    rounds: { type: 'string', default: '3' },
    out: { type: 'string', default: path.join(import.meta.dirname, 'RESULTS.md') },
  },
})
const visitors = Number(values.visitors)
const pageViews = Number(values['page-views'])
const rounds = Number(values.rounds)
const log = (line) => console.log(`[bench] ${line}`)
const started = Date.now()
const loadAtStart = os.loadavg()

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'vid-bench-icp-'))
const store = createStore({ database: 'default', dataDir })
const repos = createRepositories(store)
const coordination = createMemoryCoordination()

async function prepare() {
  await migrate(store)
  const { bootstrap } = await bootstrapIfEmpty(repos, dataDir)
  const org = bootstrap.organizationId
  await store.command(`INSERT INTO companies (id, name, domain, industry, size, employee_size_range, revenue_range,
      city, region, postal_code, country, source, created_at, updated_at, version)
    SELECT concat('co_', toString(number)), concat('Company ', toString(number)), concat('co', toString(number), '.test'),
      ['SaaS', 'Fintech', 'Retail', 'Health', 'Manufacturing'][number % 5 + 1], toString(5 + cityHash64(number) % 5000),
      ['1-10', '11-50', '51-200', '201-500', '501-1000'][cityHash64(number, 1) % 5 + 1], ['<1M', '1M-10M', '10M-50M'][number % 3 + 1],
      ['Paris', 'Berlin', 'Austin', 'London'][number % 4 + 1], ['IDF', 'BE', 'TX', 'LDN'][number % 4 + 1], '75001',
      ['FR', 'DE', 'US', 'GB'][number % 4 + 1], 'import', now(), now(), 1
    FROM numbers(20000)`)
  // Visitor v: page views v, v + V, v + 2V, ...; two or three sessions; a company for a third of them.
  const uuid = (expr) =>
    `reinterpretAsUUID(toFixedString(concat(unhex('00000000000040008000'), reverse(unhex(leftPad(hex(${expr}), 12, '0')))), 16))`
  const chunk = 1_000_000
  for (let offset = 0; offset < pageViews; offset += chunk) {
    const t = Date.now()
    await store.command(
      `INSERT INTO page_views (event_id, organization_id, visitor_id, session_id, type, timestamp, received_at, url, path,
         hostname, title, referrer, utm_source, utm_medium, utm_campaign, country, region, city, is_hosting, is_anonymous,
         company_id)
       SELECT generateUUIDv4(), {org:UUID}, ${uuid(`number % ${visitors}`)},
         ${uuid(`(number % ${visitors}) * 4 + intDiv(number, ${visitors}) % (2 + cityHash64(number % ${visitors}) % 2)`)},
         'pageview', now64(3) - toIntervalSecond(cityHash64(number) % 2592000), now64(3),
         concat('https://site.test/p/', toString(cityHash64(number, 2) % 200)), concat('/p/', toString(cityHash64(number, 2) % 200)),
         'site.test', 'Page', '', ['google', 'linkedin', '', 'newsletter', ''][cityHash64(number, 3) % 5 + 1],
         ['cpc', 'social', '', 'email', ''][cityHash64(number, 3) % 5 + 1], ['spring', '', 'launch'][cityHash64(number, 4) % 3 + 1],
         ['US', 'FR', 'DE', 'GB', 'ES'][cityHash64(number % ${visitors}) % 5 + 1], 'Region', 'City',
         cityHash64(number % ${visitors}, 5) % 10 = 0, cityHash64(number % ${visitors}, 6) % 20 = 0,
         if(cityHash64(number % ${visitors}, 1) % 3 = 0, concat('co_', toString(cityHash64(number % ${visitors}) % 20000)), '')
       FROM numbers(${offset}, ${Math.min(chunk, pageViews - offset)})`,
      { org },
    )
    log(
      `page views ${offset + Math.min(chunk, pageViews - offset)} / ${pageViews} (${((Date.now() - t) / 1000).toFixed(1)} s)`,
    )
  }
  const identified = Math.floor(visitors * 0.3)
  await store.command(
    `INSERT INTO visitors (id, organization_id, email, first_name, last_name, job_title, seniority, department, country,
       linkedin_url, company_id, identified_at, first_seen_at, last_seen_at, created_at, updated_at, version)
     SELECT ${uuid('number * 3')}, {org:UUID}, concat('p', toString(number), '@mail.test'), 'Ada', 'Lovelace',
       ['CTO', 'VP Engineering', 'Head of Sales', 'Developer', 'CEO'][number % 5 + 1],
       ['c-level', 'vp', 'director', 'individual'][number % 4 + 1], ['engineering', 'sales', 'marketing'][number % 3 + 1],
       ['US', 'FR', 'DE'][number % 3 + 1], '', concat('co_', toString(number % 20000)), now64(3), now64(3), now64(3),
       now64(3), now64(3), 1
     FROM numbers(${identified})`,
    { org },
  )
  const t = Date.now()
  for (const table of ['visitor_facts', 'sessions', 'visitors', 'companies'])
    await store.command(`OPTIMIZE TABLE ${table} FINAL`)
  log(`merged in ${((Date.now() - t) / 1000).toFixed(1)} s`)
  return org
}

const partnerRules = (pageValue) => ({
  groups: [
    {
      operator: 'AND',
      conditions: [
        { type: 'industry', comparator: 'in', value: ['SaaS', 'Fintech'] },
        { type: 'company_size', comparator: 'gte', value: 200 },
        { type: 'country', comparator: 'in', value: ['US', 'GB', 'DE'] },
        { type: 'is_hosting', comparator: 'equals', value: false },
        { type: 'page_contains', comparator: 'contains', value: pageValue, optional: true },
        { type: 'utm_source', comparator: 'in', value: ['linkedin', 'newsletter'], optional: true },
      ],
    },
    {
      operator: 'AND',
      conditions: [
        { type: 'session_count', comparator: 'gte', value: 3 },
        { type: 'page_view_count', comparator: 'gte', value: 10 },
      ],
    },
  ],
})
const organizationFilter = (countries) => ({
  company: {
    industries: ['SaaS', 'Fintech', 'Health'],
    employee_size_ranges: ['51-200', '201-500'],
    countries,
  },
  contact: { job_titles: ['cto', 'vp'], seniorities: ['c-level', 'vp'] },
})

const config = (org, id, kind, body) => ({
  id,
  organization_id: org,
  kind,
  slug: id,
  name: id,
  filter: kind === 'organization' ? JSON.stringify(body) : '',
  rules: kind === 'partner' ? JSON.stringify(body) : '',
  priority: 0,
  is_active: true,
  created_at: new Date().toISOString(),
  updated_at: new Date().toISOString(),
})

async function timed(fn) {
  const t = performance.now()
  await fn()
  return (performance.now() - t) / 1000
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

const plainRead = `SELECT visitor_id, groupUniqArrayArray(utm_source), groupUniqArrayArray(utm_medium),
  groupUniqArrayArray(utm_campaign), groupUniqArrayArray(utm_term), groupUniqArrayArray(utm_content),
  groupUniqArrayArray(1000)(pages), sum(page_view_count), uniqExactMerge(sessions), max(last_seen_at),
  argMaxMerge(geo), argMaxMerge(ip_company_id), argMaxMerge(contact)
FROM visitor_facts WHERE organization_id = {organizationId:UUID} GROUP BY visitor_id FORMAT Null`

log(`preparing ${pageViews} page views of ${visitors} visitors in ${dataDir}`)
const prepareStarted = Date.now()
const org = await prepare()
const prepareSeconds = (Date.now() - prepareStarted) / 1000
log(`prepared in ${prepareSeconds.toFixed(0)} s`)

const results = { plain: [], facts: [], first: [], changed: [], organization: [], job: [] }
const counts = {}
const jobLog = { info: (object) => Object.assign(counts, object), warn: (object) => console.error(object) }
await repos.icpConfigs.save(config(org, 'bench-job', 'partner', partnerRules('/p/1')))
for (let round = 1; round <= rounds; round++) {
  const params = { organizationId: org }
  results.plain.push(await timed(() => store.command(plainRead, params)))
  results.facts.push(
    await timed(() =>
      store.command(`SELECT * FROM (${factsQuery()}) FORMAT Null SETTINGS join_use_nulls = 1`, params),
    ),
  )
  const partner = config(org, `bench-partner-${round}`, 'partner', partnerRules('/p/1'))
  results.first.push(await timed(() => scoreConfig(store, partner, { organizationConfigIds: [] })))
  const changed = { ...partner, rules: JSON.stringify(partnerRules('/p/2')) }
  results.changed.push(await timed(() => scoreConfig(store, changed, { organizationConfigIds: [] })))
  const organization = config(
    org,
    `bench-organization-${round}`,
    'organization',
    organizationFilter(['US', 'FR']),
  )
  await scoreConfig(store, organization, { organizationConfigIds: [] })
  const refiltered = { ...organization, filter: JSON.stringify(organizationFilter(['US', 'DE'])) }
  results.organization.push(await timed(() => scoreConfig(store, refiltered, { organizationConfigIds: [] })))
  // The job scores the stored config; alternate its rules so every round re-scores a real change.
  const stored = config(org, 'bench-job', 'partner', partnerRules(round % 2 ? '/p/3' : '/p/1'))
  await repos.icpConfigs.save(stored)
  results.job.push(
    await timed(() =>
      runRecalculation(
        { store, repos, coordination, log: jobLog },
        { organizationId: org, configId: 'bench-job' },
      ),
    ),
  )
  log(
    `round ${round}: plain read ${results.plain.at(-1).toFixed(2)} s, facts query ${results.facts.at(-1).toFixed(2)} s, ` +
      `first calculation ${results.first.at(-1).toFixed(2)} s, after a rules change ${results.changed.at(-1).toFixed(2)} s, ` +
      `organization config ${results.organization.at(-1).toFixed(2)} s, job ${results.job.at(-1).toFixed(2)} s`,
  )
}
const [{ rows: scoreRows }] = await store.query('SELECT count() AS rows FROM icp_scores')
const m = Object.fromEntries(Object.entries(results).map(([k, v]) => [k, median(v)]))
const ratio = (x) => (x / m.plain).toFixed(2)
log(
  `median: plain ${m.plain.toFixed(2)} s; first ${m.first.toFixed(2)} s (${ratio(m.first)}x); changed ${m.changed.toFixed(2)} s (${ratio(m.changed)}x); job ${m.job.toFixed(2)} s (${ratio(m.job)}x)`,
)
await store.close()
rmSync(dataDir, { recursive: true, force: true })

const cpu = os.cpus()[0]?.model ?? 'unknown CPU'
const row = (label, key, note) =>
  `| ${label} | ${m[key].toFixed(2)} | ${results[key].map((x) => x.toFixed(2)).join(' / ')} | ${key === 'plain' ? '1.00' : ratio(m[key])}x | ${note} |`
const section = `## Recalculation in the service (${visitors.toLocaleString('en-US')} visitors, ${pageViews.toLocaleString('en-US')} page views)

<!-- recalculation: generated by bench/icp/recalculation.bench.mjs; rerun it to refresh this section -->

Date: ${new Date().toISOString()}. Machine: ${os.cpus().length} cores (${cpu}), Node ${process.version}. Load average at start: ${loadAtStart.map((x) => x.toFixed(2)).join(' / ')}.

Store: embedded ClickHouse (chdb), filled through \`page_views\` so the materialized views built
sessions and visitor facts as ingest does (${prepareSeconds.toFixed(0)} s), 20,000 imported companies, ${Math.floor(visitors * 0.3).toLocaleString('en-US')} identified
visitors, then merged. Rules: a partner config of two groups (industry, company size, country,
hosting, optional page and UTM conditions; or session and page-view counts), and an
organization-level config (company and contact sides). Median of ${rounds} rounds; every round
scores every visitor.

| measure | median s | rounds s | vs plain read | what it does |
|---|---:|---:|---:|---|
${row('plain read of the facts table', 'plain', 'every column of `visitor_facts`, merged per visitor, nothing else')}
${row('facts query', 'facts', 'the same plus the company join, as scoring reads it')}
${row('first calculation of a new partner config', 'first', 'one INSERT ... SELECT through `toClickHouseSql`; writes the visitors with a match or a score')}
${row('recalculation after a rules change', 'changed', 'writes only the visitors whose result changed')}
${row('organization-level config after a filter change', 'organization', 'company side = match, contact side = persona')}
${row('recalculation job', 'job', 'the same as the route starts it: lock, status and counts')}

**Recalculation job: ${m.job.toFixed(1)} s, ${ratio(m.job)}x the plain read** (targets: 20 s and 3x). Last job counts: ${counts.visitors?.toLocaleString('en-US')} visitors, ${counts.matches?.toLocaleString('en-US')} matched.
${scoreRows.toLocaleString('en-US')} score rows stored after the run. Whole run ${((Date.now() - started) / 1000).toFixed(0)} s.
`
const file = values.out
let text = readFileSync(file, 'utf8')
const start = text.indexOf('## Recalculation in the service')
if (start >= 0) {
  const next = text.indexOf('\n## ', start + 1)
  text = text.slice(0, start) + section + (next >= 0 ? text.slice(next) : '')
} else {
  const notes = text.indexOf('\n## Notes')
  text = notes >= 0 ? `${text.slice(0, notes)}\n${section}${text.slice(notes)}` : `${text}\n${section}`
}
writeFileSync(file, text)
log(`wrote ${path.relative(process.cwd(), file)}`)
