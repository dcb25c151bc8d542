#!/usr/bin/env node
// The analytics benchmark's dataset: companies, page views, identified visitors and ICP scores,
// written in-engine into the real tables of a data directory while no server runs on it.
//
//   npm run build && node bench/analytics/dataset.mjs --data DIR --organization ID
//     [--page-views 10000000] [--visitors N] [--companies 50000] [--days 90] [--measured-share 0.5]
//
// Page views go through the table's materialized views like ingest's inserts (sessions, visitor
// facts, visitor changes and whatever rollups later migrations add): nothing is written into a
// view's target. Every value is a hash of the row's coordinates (visitor, session, page view), so
// the same arguments give the same data, apart from the time they end at (now).
import { parseArgs } from 'node:util'
import { createMemoryCoordination } from '@visitor-id/core/coordination'
import { createIcpConfig } from '@visitor-id/core/icp'
import { nextVersion } from '@visitor-id/core/ids'
import { createRepositories } from '@visitor-id/core/repositories'
import { createStore, lockDataDir, migrate } from '@visitor-id/core/store'
import { listParams, lists } from './lists.mjs'

/** The slug of the ICP config whose scores the dataset writes (about 20 % of the identified visitors matched). */
export const benchIcpSlug = 'bench-icp'

/** The 20 organizations that share the store with the measured one (the rest of the rows). */
export const otherOrganizationIds = Array.from(
  { length: 20 },
  (_, i) => `00000000-0000-4000-a000-${String(i + 1).padStart(12, '0')}`,
)

// SQL fragments. `hash(...)` is deterministic per coordinates and salt; a `pick` is the 1-based
// index of the list entry the hash draws, by weight.
const hash = (...parts) => `cityHash64(${parts.join(', ')})`
const pick = (name, ...parts) =>
  `arrayFirstIndex(c -> c > ${hash(...parts)} % ${lists[name].cumulative.at(-1)}, {${name}_cum:Array(UInt32)})`
const column = (name, field, index) => `{${name}_${field}:Array(String)}[${index}]`
/** A UUID made of two hashes of the coordinates. */
const uuid = (...parts) =>
  `reinterpretAsUUID(concat(reinterpretAsFixedString(${hash(...parts, "'a'")}), reinterpretAsFixedString(${hash(...parts, "'b'")})))`
const uniform = (...parts) => `(${hash(...parts)} % 1000000) / 1000000`

// Per visitor: 1-5 sessions (mean 2.05); per session: 1-8 page views (mean 3.12); so about 6.4
// page views per visitor, and engagement events fill up the rows to `pageViews / visitors`.
const sessionsPerVisitor = (h) => `arrayFirstIndex(c -> c > ${h} % 100, [45, 70, 85, 95, 100])`
const viewsPerSession = (h) => `arrayFirstIndex(c -> c > ${h} % 100, [30, 50, 65, 75, 83, 90, 95, 100])`
const meanViewsPerVisitor = 2.05 * 3.12
// A session lasts at most 8 page views 2 min apart, the last one's engagement event within 80 s.
const maxSessionMs = 18 * 60_000

/**
 * Page views of the sessions that start in [lo, hi) (ms): visitors -> sessions -> page views ->
 * engagement events, every attribute drawn from a hash of its coordinates.
 */
const pageViewsSql = `
INSERT INTO page_views (event_id, organization_id, visitor_id, session_id, type, timestamp, received_at,
  url, path, hostname, title, referrer, referrer_domain, search_engine, search_term,
  utm_source, utm_medium, utm_campaign, utm_term, utm_content, tracking_params,
  screen_width, screen_height, language, timezone, engaged_ms, max_scroll, email, ip,
  country, region, city, isp, asn, connection_type, is_hosting, is_anonymous,
  user_agent, device_type, browser, browser_version, os, os_version, device_model, company_id)
SELECT
  ${uuid('v', 'j', 'm', 'e', "'event'")},
  org, vid, sid,
  if(e = 0, 'pageview', 'engagement'),
  fromUnixTimestamp64Milli(ts, 'UTC'),
  fromUnixTimestamp64Milli(ts + 20 + toInt64(${hash('v', 'j', 'm', 'e', "'lag'")} % 400), 'UTC'),
  concat('https://', hostname, path, if(m = 0, ${column('campaign', 'query', 'ci')}, '')),
  path, hostname, ${column('page', 'title', 'pi')},
  if(m = 0 AND e = 0, ${column('referrer', 'url', 'ri')}, ''),
  if(m = 0 AND e = 0, ${column('referrer', 'domain', 'ri')}, ''),
  if(m = 0 AND e = 0, ${column('referrer', 'engine', 'ri')}, ''),
  if(m = 0 AND e = 0, ${column('referrer', 'term', 'ri')}, ''),
  if(m = 0, ${column('campaign', 'source', 'ci')}, ''),
  if(m = 0, ${column('campaign', 'medium', 'ci')}, ''),
  if(m = 0, ${column('campaign', 'campaign', 'ci')}, ''),
  if(m = 0, ${column('campaign', 'term', 'ci')}, ''),
  if(m = 0, ${column('campaign', 'content', 'ci')}, ''),
  if(m = 0 AND ${column('campaign', 'clickKey', 'ci')} != '',
    map(${column('campaign', 'clickKey', 'ci')}, lower(hex(${hash('v', 'j', "'click'")}))), map()),
  toUInt16(${column('device', 'width', 'di')}), toUInt16(${column('device', 'height', 'di')}),
  ${column('geo', 'language', 'gi')}, ${column('geo', 'timezone', 'gi')},
  if(e = 1, engaged, 0),
  if(e = 1, toUInt8(${hash('v', 'j', 'm', "'scroll'")} % 101), 0),
  '',
  ip,
  ${column('geo', 'country', 'gi')}, ${column('geo', 'region', 'gi')}, ${column('geo', 'city', 'gi')},
  ${column('network', 'isp', 'ni')}, toUInt32(${column('network', 'asn', 'ni')}), ${column('network', 'connection', 'ni')},
  ${column('network', 'hosting', 'ni')} = '1', ${hash('v', "'anonymous'")} % 100 = 0,
  ${column('device', 'userAgent', 'di')}, ${column('device', 'type', 'di')}, ${column('device', 'browser', 'di')},
  ${column('device', 'version', 'di')}, ${column('device', 'os', 'di')}, ${column('device', 'osVersion', 'di')},
  ${column('device', 'model', 'di')},
  company_id
FROM (
  SELECT org, vid, company_id, gi, di, ni, ip, v, j, sid, ri, ci, hostname, m, e,
    if(m = 0, landing, ${pick('page', 'v', 'j', 'm', "'page'")}) AS pi,
    ${column('page', 'path', 'pi')} AS path,
    toInt64(2000 + ${hash('v', 'j', 'm', "'engaged'")} % 78000) AS engaged,
    toInt64(start_ms + m * 120000 + ${hash('v', 'j', 'm', "'gap'")} % 30000 + if(e = 1, engaged, 0)) AS ts
  FROM (
    SELECT org, vid, company_id, gi, di, ni, ip, v, j, start_ms, sid, ri, ci, landing, hostname, m
    FROM (
      SELECT org, vid, company_id, gi, di, ni, ip, v, j,
        starts[j + 1] AS start_ms,
        ${uuid('v', 'j', "'session'")} AS sid,
        ${viewsPerSession(hash('v', 'j', "'views'"))} AS views,
        ${pick('referrer', 'v', 'j', "'referrer'")} AS ri,
        ${pick('campaign', 'v', 'j', "'campaign'")} AS ci,
        ${pick('page', 'v', 'j', "'landing'")} AS landing,
        ${column('host', 'hostname', pick('host', 'v', 'j', "'host'"))} AS hostname
      FROM (
        SELECT
          number AS v,
          if(${hash('v', "'org'")} % 1000000 < {measuredMillionths:UInt32}, {organizationId:UUID},
            {others:Array(UUID)}[1 + ${hash('v', "'other'")} % length({others:Array(UUID)})]) AS org,
          ${uuid('v', "'visitor'")} AS vid,
          if(${hash('v', "'company'")} % 100 < {companyPercent:UInt32},
            concat('co-', leftPad(toString(toUInt64(floor({companies:UInt64} * pow(${uniform('v', "'which'")}, 2)))), 6, '0')),
            '') AS company_id,
          ${pick('geo', 'v', "'geo'")} AS gi,
          ${pick('device', 'v', "'device'")} AS di,
          ${pick('network', 'v', "'network'")} AS ni,
          if(${hash('v', "'v6'")} % 10 = 0,
            lower(concat('2a0', toString(${hash('v', "'ip'")} % 10), ':', hex(toUInt16(${hash('v', "'ip1'")} % 65536)), '::', hex(toUInt16(${hash('v', "'ip2'")} % 65536)))),
            IPv4NumToString(toUInt32(16777216 * (3 + ${hash('v', "'ip'")} % 220) + ${hash('v', "'ip1'")} % 16777216))) AS ip,
          ${sessionsPerVisitor(hash('v', "'sessions'"))} AS sessions,
          arrayMap(j -> {latest:Int64} - toInt64(${hash('v', 'j', "'start'")} % {span:UInt64}), range(sessions)) AS raw_starts,
          -- Fewer visits at night (UTC): most sessions drawn before 07:00 move to 9 hours later.
          arrayMap((s, j) -> if(intDiv(s % 86400000, 3600000) < 7 AND ${hash('v', 'j', "'night'")} % 10 < 6
            AND s + 32400000 <= {latest:Int64}, s + 32400000, s), raw_starts, range(sessions)) AS starts,
          arrayFilter(j -> starts[j + 1] >= {lo:Int64} AND starts[j + 1] < {hi:Int64}, range(sessions)) AS js
        FROM numbers({visitors:UInt64})
        WHERE notEmpty(js)
      )
      ARRAY JOIN js AS j
    )
    ARRAY JOIN range(views) AS m
  )
  ARRAY JOIN if(${hash('v', 'j', 'm', "'engagement'")} % 1000000 < {engagementMillionths:UInt32}, [0, 1], [0]) AS e
)`

const companiesSql = `
INSERT INTO companies (id, name, domain, industry, size, employee_size_range, revenue_range, linkedin_url,
  website_url, description, logo_url, address, city, region, postal_code, country, source, created_at, updated_at, version)
SELECT
  concat('co-', leftPad(toString(number), 6, '0')) AS id,
  concat(${column('companyName', 'prefix', pick('companyName', 'number', "'name'"))}, ' ', ${column('industry', 'name', 'ii')}, ' ', toString(number)) AS name,
  concat('company', leftPad(toString(number), 6, '0'), '.example') AS domain,
  ${column('industry', 'name', 'ii')},
  ${column('size', 'employees', 'si')},
  ${column('size', 'range', 'si')},
  ${column('size', 'revenue', 'si')},
  concat('https://www.linkedin.com/company/company', toString(number)),
  concat('https://', domain),
  concat(name, ' makes things for ', lower(${column('industry', 'name', 'ii')}), ' customers.'),
  concat('https://logo.example/', domain, '.png'),
  concat(toString(1 + number % 900), ' Market Street'),
  ${column('companyPlace', 'city', 'pi')}, ${column('companyPlace', 'region', 'pi')},
  ${column('companyPlace', 'postal', 'pi')}, ${column('companyPlace', 'country', 'pi')},
  'import', now64(3), now64(3), {version:UInt64}
FROM (
  SELECT number,
    ${pick('industry', 'number', "'industry'")} AS ii,
    ${pick('size', 'number', "'size'")} AS si,
    ${pick('companyPlace', 'number', "'place'")} AS pi
  FROM numbers({companies:UInt64})
)`

/**
 * About `identifiedPercent` % of the measured organization's visitors, identified: contact fields,
 * their company (the page views' company, else one drawn like theirs), first and last seen from
 * their page views, identified at a moment in between.
 */
const visitorsSql = `
INSERT INTO visitors (id, organization_id, email, first_name, last_name, job_title, seniority, department,
  country, linkedin_url, company_id, identified_at, first_seen_at, last_seen_at, created_at, updated_at, version)
SELECT
  visitor_id, organization_id,
  lower(concat(${column('person', 'first', 'pi')}, '.', ${column('person', 'last', 'pi')}, toString(${hash('visitor_id', "'n'")} % 10000),
    '@company', substring(company, 4), '.example')),
  ${column('person', 'first', 'pi')}, ${column('person', 'last', 'pi')}, ${column('person', 'title', 'pi')},
  ${column('person', 'seniority', 'pi')}, ${column('person', 'department', 'pi')},
  country,
  concat('https://www.linkedin.com/in/', lower(${column('person', 'first', 'pi')}), '-', toString(${hash('visitor_id', "'n'")} % 100000)),
  company,
  identified_at, first_seen, last_seen, first_seen, identified_at, {version:UInt64}
FROM (
  SELECT *,
    ${pick('person', 'visitor_id', "'person'")} AS pi,
    if(seen_company != '', seen_company,
      concat('co-', leftPad(toString(toUInt64(floor({companies:UInt64} * pow(${uniform('visitor_id', "'which'")}, 2)))), 6, '0'))) AS company,
    fromUnixTimestamp64Milli(toUnixTimestamp64Milli(first_seen)
      + toInt64((toUnixTimestamp64Milli(last_seen) - toUnixTimestamp64Milli(first_seen)) * ${uniform('visitor_id', "'identified_at'")}), 'UTC') AS identified_at
  FROM (
    SELECT organization_id, visitor_id, min(timestamp) AS first_seen, max(timestamp) AS last_seen,
      argMaxIf(company_id, timestamp, company_id != '') AS seen_company, any(country) AS country
    FROM page_views
    WHERE organization_id = {organizationId:UUID} AND ${hash('visitor_id', "'identified'")} % 100 < {identifiedPercent:UInt32}
    GROUP BY organization_id, visitor_id
  )
)`

/** Scores of the bench config: about `matchedPercent` % of the identified visitors matched, half of those persona too. */
const scoresSql = `
INSERT INTO icp_scores (organization_id, config_id, visitor_id, matched, persona, score, computed_at, version)
SELECT organization_id, {configId:String}, id, 1, persona, if(persona = 1, 100, 50), now64(3), {version:UInt64}
FROM (
  SELECT organization_id, id, toUInt8(${hash('id', "'persona'")} % 2) AS persona
  FROM visitors FINAL
  WHERE organization_id = {organizationId:UUID} AND identified_at IS NOT NULL
    AND ${hash('id', "'icp'")} % 100 < {matchedPercent:UInt32}
)`

const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`
const count = (n) => Number(n).toLocaleString('en')

/**
 * Writes the analytics dataset into the store of `dataDir` (no server may run on it: the data
 * directory is locked). Returns the counts, the times and the ids the benchmark needs. Beyond the
 * sizes: `companyShare` (0.6) of the visitors, so of the rows, carry a company; `identifiedShare`
 * (0.1) of the measured organization's visitors are identified, `matchedShare` (0.2) of those
 * matched; `chunkRows` (1 M) rows per insert, `memoryLimit` (8 GiB) for the engine of the fill.
 * @example await fillAnalyticsDataset(dir, { pageViews: 200_000, organizationId: bootstrap.organizationId })
 */
export async function fillAnalyticsDataset(dataDir, options) {
  const {
    pageViews = 10_000_000,
    visitors = 1_000_000,
    companies = 50_000,
    days = 90,
    measuredShare = 0.5,
    organizationId,
    chunkRows = 1_000_000,
    companyShare = 0.6,
    identifiedShare = 0.1,
    matchedShare = 0.2,
    // A fill is no served process: an insert of 1 M rows through the views needs more than a served
    // process's STORE_MEMORY_LIMIT, and the host of a benchmark has it.
    memoryLimit = 8 * 1024 ** 3,
    log = console.log,
  } = options
  if (!organizationId) throw new Error('fillAnalyticsDataset: organizationId is required')
  const engagement = pageViews / visitors / meanViewsPerVisitor - 1
  if (engagement < 0 || engagement > 1) {
    log(
      `dataset: ${count(pageViews)} rows for ${count(visitors)} visitors is outside 6.4-12.8 rows per visitor; ` +
        'the page views will miss the target',
    )
  }
  const lock = lockDataDir(dataDir)
  const store = createStore({ database: 'default', dataDir, memoryLimit })
  const coordination = createMemoryCoordination()
  const times = {}
  const timed = async (name, work) => {
    const started = performance.now()
    const result = await work()
    times[name] = performance.now() - started
    return result
  }
  try {
    await timed('migrate', () => migrate(store))
    const params = { ...listParams(), organizationId, companies, version: nextVersion() }

    await timed('companies', () => store.command(companiesSql, params))
    log(`dataset: ${count(companies)} companies in ${seconds(times.companies)}`)

    // Sessions by start time, oldest first, about `chunkRows` rows per insert: each insert holds a
    // stretch of time, as ingest's do, and memory stays bounded.
    const now = Date.now()
    const latest = now - maxSessionMs
    const span = days * 86_400_000 - maxSessionMs
    const chunks = Math.max(1, Math.ceil(pageViews / chunkRows))
    const pageViewParams = {
      ...params,
      others: otherOrganizationIds,
      measuredMillionths: Math.round(measuredShare * 1_000_000),
      companyPercent: Math.round(companyShare * 100),
      engagementMillionths: Math.round(Math.min(1, Math.max(0, engagement)) * 1_000_000),
      visitors,
      latest,
      span,
    }
    times.pageViews = 0
    for (let chunk = 0; chunk < chunks; chunk++) {
      const lo = latest - span + Math.floor((span * chunk) / chunks)
      const hi = chunk === chunks - 1 ? latest + 1 : latest - span + Math.floor((span * (chunk + 1)) / chunks)
      const started = performance.now()
      await store.command(pageViewsSql, { ...pageViewParams, lo, hi })
      const ms = performance.now() - started
      times.pageViews += ms
      log(
        `dataset: page views, insert ${chunk + 1}/${chunks} (${new Date(lo).toISOString().slice(0, 10)}) in ${seconds(ms)}`,
      )
    }

    const identifiedPercent = Math.round(identifiedShare * 100)
    await timed('visitors', () => store.command(visitorsSql, { ...params, identifiedPercent }))

    // The config through the service (a valid filter, a free slug), its scores in-engine. A worker's
    // incremental re-scoring would replace them with the filter's results (every visitor written in
    // the last day counts as changed), so the benchmark serves with `--role api`, no worker.
    const repos = createRepositories(store)
    const [existing] = await repos.icpConfigs.find({ organization_id: organizationId, slug: benchIcpSlug })
    const config =
      existing ??
      (await createIcpConfig(repos, coordination.locks, organizationId, 'organization', {
        name: 'Bench ICP',
        slug: benchIcpSlug,
        filter: {
          company: { industries: ['Software'] },
          contact: { seniorities: ['vp', 'c_suite', 'director'] },
        },
      }))
    await timed('icpScores', () =>
      store.command(scoresSql, {
        ...params,
        configId: config.id,
        matchedPercent: Math.round(matchedShare * 100),
        version: nextVersion(),
      }),
    )

    // No OPTIMIZE: the background merges the inserts started finish, as they would in a live store
    // between its writes, and the parts stay as they leave them.
    times.merges = await waitForMerges(store)
    log(`dataset: background merges done ${seconds(times.merges)} after the last insert`)
    const counts = await datasetCounts(store, organizationId)
    log(
      `dataset: ${count(counts.pageViews)} page views (${count(counts.measuredPageViews)} in the measured organization, ` +
        `${count(counts.pageViewRows)} pageview rows, ${(counts.attributedShare * 100).toFixed(1)} % with a company) ` +
        `in ${seconds(times.pageViews)}; ${count(counts.distinctVisitors)} visitors, ${count(counts.sessions)} sessions`,
    )
    log(
      `dataset: ${count(counts.identifiedVisitors)} identified visitors in ${seconds(times.visitors)}, ` +
        `${count(counts.icpMatched)} matched by ${benchIcpSlug} in ${seconds(times.icpScores)}; ` +
        `${count(counts.activeParts)} active parts in page_views`,
    )
    return {
      organizationId,
      icpConfigId: config.id,
      icpSlug: benchIcpSlug,
      counts,
      times,
      endedAt: new Date(now).toISOString(),
    }
  } finally {
    await coordination.close()
    await store.close()
    lock.release()
  }
}

/**
 * Waits until the store has run no merge for `quietMs`, at most `maxMs`; returns the milliseconds
 * waited. Closing the store stops merges under way, and the next process would run them while it
 * measures.
 */
export async function waitForMerges(store, { quietMs = 3000, maxMs = 600_000 } = {}) {
  const started = performance.now()
  let quietSince = started
  while (performance.now() - started < maxMs) {
    const [{ merges }] = await store.query(
      'SELECT count() AS merges FROM system.merges WHERE database = currentDatabase()',
    )
    if (Number(merges) > 0) quietSince = performance.now()
    else if (performance.now() - quietSince >= quietMs) break
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  return performance.now() - started
}

/** What a filled store holds (whole store, and the measured organization). */
export async function datasetCounts(store, organizationId) {
  const [row] = await store.query(
    `SELECT
      (SELECT count() FROM page_views) AS page_views,
      (SELECT countIf(type = 'pageview') FROM page_views) AS page_view_rows,
      (SELECT countIf(company_id != '') / count() FROM page_views) AS attributed_share,
      (SELECT count() FROM page_views WHERE organization_id = {organizationId:UUID}) AS measured_page_views,
      (SELECT uniqExact(visitor_id) FROM page_views) AS distinct_visitors,
      (SELECT uniqExact(session_id) FROM page_views) AS sessions,
      (SELECT count() FROM companies FINAL) AS companies,
      (SELECT count() FROM visitors FINAL WHERE organization_id = {organizationId:UUID} AND identified_at IS NOT NULL) AS identified,
      (SELECT count() FROM icp_scores FINAL WHERE organization_id = {organizationId:UUID} AND matched = 1) AS icp_matched,
      (SELECT count() FROM system.parts WHERE database = currentDatabase() AND table = 'page_views' AND active) AS active_parts`,
    { organizationId },
  )
  return {
    pageViews: Number(row.page_views),
    pageViewRows: Number(row.page_view_rows),
    attributedShare: Number(row.attributed_share),
    measuredPageViews: Number(row.measured_page_views),
    distinctVisitors: Number(row.distinct_visitors),
    sessions: Number(row.sessions),
    companies: Number(row.companies),
    identifiedVisitors: Number(row.identified),
    icpMatched: Number(row.icp_matched),
    activeParts: Number(row.active_parts),
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      data: { type: 'string' },
      organization: { type: 'string' },
      'page-views': { type: 'string', default: '10000000' },
      visitors: { type: 'string' },
      companies: { type: 'string', default: '50000' },
      days: { type: 'string', default: '90' },
      'measured-share': { type: 'string', default: '0.5' },
    },
  })
  if (!values.data || !values.organization) {
    console.error('usage: node bench/analytics/dataset.mjs --data DIR --organization ID [--page-views N] ...')
    process.exit(2)
  }
  const pageViews = Number(values['page-views'])
  await fillAnalyticsDataset(values.data, {
    organizationId: values.organization,
    pageViews,
    visitors: Number(values.visitors ?? Math.round(pageViews / 10)),
    companies: Number(values.companies),
    days: Number(values.days),
    measuredShare: Number(values['measured-share']),
  })
}
