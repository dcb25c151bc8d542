#!/usr/bin/env node
// Analytics benchmark: the company and visitor statistics endpoints (list, totals, charts, CSV) on a
// store of 10 M page views, next to the plain raw-table queries of the same figures measured in the
// same run.
//
//   npm run build && node bench/analytics/analytics.bench.mjs [--page-views 10000000] [--rounds 30]
//     [--data DIR] [--keep] [--visitors N] [--companies 50000] [--days 90] [--role api]
//
// 1. A data directory: --data DIR (filled on first use, reused as it is afterwards), else a temp
//    one, removed at the end unless --keep. The server starts once on it, empty, to write its
//    bootstrap organization and key (DATA_DIR/bootstrap.json), and stops; then dataset.mjs fills
//    the store for that organization (the data directory is locked by one process at a time).
// 2. Baseline: each figure straight from raw `page_views` through the store (raw-queries.mjs), one
//    query at a time, --rounds times each after one warm-up, for everyone and for the ICP audience.
// 3. Endpoints: the server on the filled store (`serve --role api`: a worker's re-scoring would
//    replace the dataset's ICP scores), one request at a time with the bootstrap key, --rounds
//    each after one warm-up, with and without ICPOnly=true. An endpoint answering 404 "Route ...
//    not found" is "not built yet".
// 4. CSV: the visitors download over 90 days, counted line by line as it arrives, with the
//    server's RSS sampled every 100 ms.
//
// Progress goes to stderr; the report (Markdown, for bench/analytics/RESULTS.md) to stdout.
import { execFileSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { settleFirstHours } from '@visitor-id/core/analytics'
import { createStore, lockDataDir, migrate } from '@visitor-id/core/store'
import { benchIcpSlug, waitForMerges } from './dataset.mjs'
import { isRouteNotFound, streamCsv, timedGet } from './http.mjs'
import { prepareDataDir } from './prepare.mjs'
import { rawQueries, rawSql } from './raw-queries.mjs'
import { startServer } from './server.mjs'

const { values } = parseArgs({
  options: {
    'page-views': { type: 'string', default: '10000000' },
    visitors: { type: 'string' },
    companies: { type: 'string', default: '50000' },
    days: { type: 'string', default: '90' },
    rounds: { type: 'string', default: '30' },
    data: { type: 'string' },
    keep: { type: 'boolean', default: false },
    role: { type: 'string', default: 'api' },
  },
})
const pageViews = Number(values['page-views'])
const rounds = Number(values.rounds)
const root = path.resolve(import.meta.dirname, '..', '..')
const progress = (line) => console.error(`[bench] ${line}`)
const loadAverage = () =>
  os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' / ')
const loadAtStart = loadAverage()

// --- The data directory: prepared (--data with a dataset in it), or filled now --------------------
const { dataDir, dataset, reused, removeAtEnd, bootstrap } = await prepareDataDir({
  data: values.data,
  keep: values.keep,
  requested: {
    pageViews,
    visitors: Number(values.visitors ?? Math.round(pageViews / 10)),
    companies: Number(values.companies),
    days: Number(values.days),
  },
  log: progress,
})
const { organizationId, apiKey } = bootstrap

// --- Ranges: the last 30 days, 2 days and 90 days, ending now --------------------------------------
const now = Date.now()
const ago = (days) => new Date(now - days * 86_400_000).toISOString()
const to = new Date(now).toISOString()
const ranges = {
  '30 days': { from: ago(30), to },
  '2 days': { from: ago(2), to },
  '90 days': { from: ago(90), to },
}

const percentile = (sorted, q) => sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]
const summary = (samples) => {
  const sorted = [...samples].sort((a, b) => a - b)
  return { p50: percentile(sorted, 0.5), p90: percentile(sorted, 0.9) }
}

// --- Baseline: raw queries on page_views ----------------------------------------------------------
const rawPlan = [
  { key: 'companies', range: '30 days' },
  { key: 'visitors', range: '30 days' },
  { key: 'companyVisitors', range: '30 days' },
  { key: 'totals', range: '30 days' },
  { key: 'dailyChart', range: '30 days' },
  { key: 'hourlyChart', range: '2 days' },
]
const raw = {}
let engineVersion = ''
let topCompany = ''
let migrated = { applied: [], seconds: 0 }
let mergesMs = 0
let settle = { full: false, seconds: 0 }
{
  const lock = lockDataDir(dataDir)
  const store = createStore({ database: 'default', dataDir })
  try {
    engineVersion = (await store.query('SELECT version() AS v'))[0].v
    // A reused store gets the migrations added since its fill now, not in the server's start-up
    // (a rollup's backfill from page_views takes a while on 10 M rows).
    const started = performance.now()
    migrated = { applied: (await migrate(store)).applied, seconds: (performance.now() - started) / 1000 }
    if (migrated.applied.length > 0) {
      progress(`applied ${migrated.applied.join(', ')} in ${migrated.seconds.toFixed(1)} s`)
    }
    // The distinct counts read first_hours, which the worker's settling pass keeps up to date; the
    // server serves as `api` here, so the pass runs now (every visitor after a fill or the
    // migration that adds the table, else the few changed since the last pass).
    const settleStarted = performance.now()
    const settled = await settleFirstHours(store)
    settle = { full: settled.full, seconds: (performance.now() - settleStarted) / 1000 }
    progress(
      `first_hours settled (${settled.full ? 'every visitor' : 'changed visitors'}) in ${settle.seconds.toFixed(1)} s`,
    )
    // Merges left over (a fill or a migration cut short by its process's end) would run meanwhile.
    mergesMs = await waitForMerges(store)
    const [config] = await store.query(
      'SELECT id FROM icp_configs FINAL WHERE organization_id = {organizationId:UUID} AND slug = {slug:String}',
      { organizationId, slug: benchIcpSlug },
    )
    // The company the company endpoint lists: the one with the most visitors in 30 days.
    const [top] = await store.query(rawSql('companies', false), { organizationId, ...ranges['30 days'] })
    topCompany = top?.company_id ?? ''
    for (const { key, range } of rawPlan) {
      for (const icp of [false, true]) {
        const params = {
          organizationId,
          ...ranges[range],
          icpConfigId: config?.id ?? '',
          companyId: topCompany,
        }
        const sql = rawSql(key, icp)
        const rows = (await store.query(sql, params)).length
        const samples = []
        for (let i = 0; i < rounds; i++) {
          const started = performance.now()
          await store.query(sql, params)
          samples.push(performance.now() - started)
        }
        raw[`${key}${icp ? ':icp' : ''}`] = { ...summary(samples), rows }
        progress(`raw ${key}${icp ? ' (ICP)' : ''}: p50 ${summary(samples).p50.toFixed(1)} ms`)
      }
    }
  } finally {
    await store.close()
    lock.release()
  }
}

// --- Endpoints -------------------------------------------------------------------------------------
const query = (params) => new URLSearchParams(params).toString()
const endpointPlan = [
  {
    label: 'GET /companies',
    baseline: 'companies',
    url: (r) => `/api/v1/companies?${query({ organizationId, ...r, page: '1', limit: '25' })}`,
  },
  {
    label: 'GET /companies/visitors',
    baseline: 'visitors',
    url: (r) => `/api/v1/companies/visitors?${query({ organizationId, ...r, page: '1', limit: '25' })}`,
  },
  {
    label: 'GET /companies/{id}/visitors',
    baseline: 'companyVisitors',
    url: (r) =>
      `/api/v1/companies/${encodeURIComponent(topCompany)}/visitors?${query({ organizationId, ...r, page: '1', limit: '25' })}`,
  },
  {
    label: 'GET /companies/statistic/{org}/total',
    baseline: 'totals',
    url: (r) => `/api/v1/companies/statistic/${organizationId}/total?${query(r)}`,
  },
  {
    label: 'GET /companies/statistic/{org}/visitors/chart, 30 days',
    baseline: 'dailyChart',
    url: (r) => `/api/v1/companies/statistic/${organizationId}/visitors/chart?${query(r)}`,
  },
  {
    label: 'GET /companies/statistic/{org}/visitors/chart, 2 days',
    baseline: 'hourlyChart',
    range: '2 days',
    url: (r) => `/api/v1/companies/statistic/${organizationId}/visitors/chart?${query(r)}`,
  },
]
const endpoints = []
const server = await startServer(dataDir, ['--role', values.role], { API_RATE_LIMIT: '1000000000' })
/** The CSV downloads, one after the other. */
const csvRuns = []
let csvPath = ''
try {
  for (const icp of [false, true]) {
    for (const plan of endpointPlan) {
      const range = ranges[plan.range ?? '30 days']
      const urlPath = plan.url(icp ? { ...range, ICPOnly: 'true' } : range)
      const label = `${plan.label}${icp ? ', ICPOnly' : ''}`
      const baseline = raw[`${plan.baseline}${icp ? ':icp' : ''}`]
      const first = await timedGet(server.url, urlPath, apiKey)
      if (isRouteNotFound(first.status, first.body)) {
        endpoints.push({ label, urlPath, state: 'not built yet', baseline })
        progress(`${label}: not built yet`)
        continue
      }
      if (first.status !== 200) {
        endpoints.push({
          label,
          urlPath,
          state: `failed: ${first.status} ${first.body.slice(0, 200)}`,
          baseline,
        })
        progress(`${label}: ${first.status} ${first.body.slice(0, 200)}`)
        continue
      }
      const samples = []
      let failure
      for (let i = 0; i < rounds && !failure; i++) {
        const answer = await timedGet(server.url, urlPath, apiKey)
        if (answer.status !== 200) failure = `failed: ${answer.status} ${answer.body.slice(0, 200)}`
        samples.push(answer.ms)
      }
      endpoints.push({
        label,
        urlPath,
        state: failure ?? 'ok',
        ...summary(samples),
        baseline,
      })
      progress(`${label}: p50 ${summary(samples).p50.toFixed(1)} ms`)
    }
  }

  const download = (statisticType) =>
    `/api/v1/companies/download?${query({ organizationId, statisticType, ...ranges['90 days'] })}`
  csvPath = download('visitors')
  // Let the server settle after the timed requests, so "before" is its resting RSS.
  await new Promise((resolve) => setTimeout(resolve, 1000))
  // The visitors twice: the first download is also the engine's first pass over the rows (its
  // caches and the allocator's arenas grow once, and stay); the second shows what a download itself
  // holds. Then the companies.
  for (const [name, urlPath] of [
    ['Visitors, first download', csvPath],
    ['Visitors, second download', csvPath],
    ['Companies', download('companies')],
  ]) {
    const result = { name, ...(await streamCsv(server.url, urlPath, apiKey, server.pid)) }
    csvRuns.push(result)
    progress(`CSV ${name}: ${result.status}, ${result.rows} rows in ${(result.totalMs / 1000).toFixed(1)} s`)
    if (csvState(result) !== 'ok') break
  }
} finally {
  await server.stop()
}
if (!removeAtEnd) progress(`the data directory stays: ${dataDir} (reuse it with --data)`)

// --- Report ----------------------------------------------------------------------------------------
const ms = (value) => (value === undefined ? '-' : value < 10 ? value.toFixed(2) : value.toFixed(1))
const n = (value) => Number(value).toLocaleString('en')
const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(0)} MB`
const git = (...args) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim()
const dirty = git('status', '--porcelain', '--', 'packages').length > 0
const migrations = readdirSync(path.join(root, 'packages/core/migrations')).filter((name) =>
  name.endsWith('.sql'),
)
const cpus = os.cpus()
const { counts } = dataset
const command = `node bench/analytics/analytics.bench.mjs ${process.argv.slice(2).join(' ')}`.trim()

const lines = [
  `### ${new Date(now).toISOString().slice(0, 10)}, ${n(counts.pageViews)} page views, ${rounds} rounds`,
  '',
  `- Machine: ${cpus.length} vCPU (${cpus[0]?.model.trim() ?? 'unknown'}), ${mb(os.totalmem())} RAM, Node ${process.version}, ClickHouse (chdb) ${engineVersion}; load average ${loadAtStart} at the start, ${loadAverage()} at the end`,
  `- Code: ${git('rev-parse', '--short', 'HEAD')}${dirty ? ' with uncommitted changes under packages/' : ''}; migrations up to ${migrations.sort().at(-1)}`,
  `- Command: \`${command}\``,
  `- Dataset (${reused ? 'reused' : `filled in ${dataset.fillSeconds.toFixed(0)} s`}, ending ${dataset.endedAt}): ` +
    `${n(counts.pageViews)} page views (${n(counts.pageViewRows)} pageview, the rest engagement; ${(counts.attributedShare * 100).toFixed(0)} % with a company), ` +
    `${n(counts.measuredPageViews)} of them in the measured organization; ${n(counts.distinctVisitors)} visitors, ${n(counts.sessions)} sessions, ` +
    `${n(counts.companies)} companies; ${n(counts.identifiedVisitors)} identified visitors, ${n(counts.icpMatched)} matched by \`${dataset.icpSlug}\`` +
    (!reused
      ? `; page views inserted in ${(dataset.times.pageViews / 1000).toFixed(0)} s, background merges done ${(dataset.times.merges / 1000).toFixed(0)} s later, ${n(counts.activeParts)} active parts in page_views`
      : ''),
  `- Before the baseline: ${(mergesMs / 1000).toFixed(0)} s of waiting for merges (3 s without any is the least)`,
  `- Before the baseline: first_hours settled (${settle.full ? 'every visitor' : 'the visitors changed since the last pass'}) in ${settle.seconds.toFixed(1)} s${settle.full ? ' (with the merge of its parts that follows a full settle)' : ''}`,
  ...(migrated.applied.length > 0
    ? [
        `- Migrations applied to the reused store before measuring: ${migrated.applied.join(', ')} (${migrated.seconds.toFixed(0)} s)`,
      ]
    : []),
  `- Company of \`/companies/{id}/visitors\`: \`${topCompany}\` (the most visitors in 30 days)`,
  '',
  'Raw queries on `page_views` (the baseline), one at a time, ms:',
  '',
  '| query | range | rows | p50 | p90 | ICP only: p50 | ICP only: p90 |',
  '|---|---|---:|---:|---:|---:|---:|',
  ...rawPlan.map(({ key, range }) => {
    const all = raw[key]
    const icp = raw[`${key}:icp`]
    return `| ${rawQueries[key].label} | ${range} | ${all.rows} | ${ms(all.p50)} | ${ms(all.p90)} | ${ms(icp.p50)} | ${ms(icp.p90)} |`
  }),
  '',
  'Endpoints, one request at a time, ms (target: p50 <= 50 ms):',
  '',
  '| endpoint | p50 | p90 | raw p50 | p50 / raw p50 | target |',
  '|---|---:|---:|---:|---:|---|',
  ...endpoints.map((e) =>
    e.state === 'ok'
      ? `| ${e.label} | ${ms(e.p50)} | ${ms(e.p90)} | ${ms(e.baseline.p50)} | ${(e.p50 / e.baseline.p50).toFixed(2)} | ${e.p50 <= 50 ? 'met' : '**not met**'} |`
      : `| ${e.label} | ${e.state.replaceAll('|', '\\|').replaceAll('\n', ' ')} | | ${ms(e.baseline.p50)} | | |`,
  ),
  '',
  'CSV downloads (`statisticType=visitors`, then `companies`, 90 days; target: >= 100,000 rows/s, flat memory):',
  '',
  ...csvReport(),
]
console.log(lines.join('\n'))
const failed =
  endpoints.some((e) => e.state.startsWith('failed')) ||
  csvRuns.some((result) => csvState(result).startsWith('failed'))
process.exit(failed ? 1 : 0)

function csvState(result) {
  if (isRouteNotFound(result.status, result.errorBody)) return 'not built yet'
  if (result.status !== 200) return `failed: ${result.status} ${result.errorBody.slice(0, 200)}`
  return 'ok'
}

/** The target is the visitors download's (its rows are the many); the companies' is one slice here. */
function targetNote(csv) {
  if (!csv.name.startsWith('Visitors')) return ''
  return csv.rows / (csv.totalMs / 1000) >= 100_000 ? ' (target met)' : ' (**target not met**)'
}

function csvReport() {
  if (csvRuns.length === 0) return ['- not run']
  const lines = [`- \`GET ${csvPath.replace(organizationId, '{org}')}\``]
  for (const csv of csvRuns) {
    const state = csvState(csv)
    const name = csv.name
    if (state !== 'ok') {
      lines.push(`- ${name}: ${state}`)
      continue
    }
    const seconds = csv.totalMs / 1000
    // The RSS when a quarter, half, three quarters of the rows had arrived: flat memory is the same
    // figure at each, whatever the row count.
    const at = (share) => csv.samples.find((sample) => sample.lines >= share * csv.rows)?.rss ?? csv.rssAfter
    lines.push(
      `- ${name}: ${n(csv.rows)} rows, ${mb(csv.bytes)} (${csv.contentType}) in ${seconds.toFixed(2)} s: **${n(Math.round(csv.rows / seconds))} rows/s**${targetNote(csv)}; headers after ${ms(csv.headersMs)} ms, first byte of the body after ${ms(csv.firstByteMs)} ms`,
      `  - Server RSS: ${mb(csv.rssBefore)} before, peak ${mb(csv.rssPeak)} during (+${mb(csv.rssPeak - csv.rssBefore)}), ${mb(csv.rssAfter)} after; at 25 / 50 / 75 % of the rows: ${[0.25, 0.5, 0.75].map((share) => mb(at(share))).join(' / ')}`,
    )
  }
  return lines
}
