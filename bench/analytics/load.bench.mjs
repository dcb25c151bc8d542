#!/usr/bin/env node
// Analytics under load: dashboards' overlapping requests (companies and visitors pages 1-3 of 30
// days, totals of 30, 7 and 1 days, mixed) at a fixed rate over a few connections, on the analytics
// bench's store, by phase: the first minute after a start, alone, beside pixel ingest, the first
// minute after a restart with ingest beside it, and alone with the statistics answer cache off.
// Latency runs from the moment a request was due (open loop), so queueing counts. Each phase
// reports how many answers the cache served. The one-at-a-time p50 of each endpoint with the cache
// off, measured in the same run, is the baseline.
//
//   npm run build && node bench/analytics/load.bench.mjs --data /tmp/analytics-10m
//     [--rate 10] [--connections 4] [--seconds 60] [--ingest-rate 350] [--rounds 20]
//     [--page-views 10000000] [--out bench/analytics/RESULTS.md] [--server-log FILE]
//
// The server runs with its default role (`all`: API, ingest and the worker's passes in one process)
// on the filled store (prepare.mjs; the same dataset as analytics.bench.mjs). Figures go to stdout
// and to the "Under load" section of --out.
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { settleFirstHours } from '@visitor-id/core/analytics'
import { createStore, lockDataDir, migrate } from '@visitor-id/core/store'
import { waitForMerges } from './dataset.mjs'
import { timedGet } from './http.mjs'
import { latencySummary, machineCpuMs, openLoop, processCpuMs, startIngest } from './load.mjs'
import { prepareDataDir } from './prepare.mjs'
import { startServer } from './server.mjs'

const { values } = parseArgs({
  options: {
    'page-views': { type: 'string', default: '10000000' },
    data: { type: 'string' },
    keep: { type: 'boolean', default: false },
    rate: { type: 'string', default: '10' },
    connections: { type: 'string', default: '4' },
    seconds: { type: 'string', default: '60' },
    'ingest-rate': { type: 'string', default: '350' },
    rounds: { type: 'string', default: '20' },
    out: { type: 'string', default: path.join(import.meta.dirname, 'RESULTS.md') },
    'server-log': { type: 'string' },
  },
})
const pageViews = Number(values['page-views'])
const rate = Number(values.rate)
const connections = Number(values.connections)
const seconds = Number(values.seconds)
const ingestRate = Number(values['ingest-rate'])
const rounds = Number(values.rounds)
const progress = (line) => console.error(`[load] ${line}`)
const loadAverage = () =>
  os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' / ')

const { dataDir, dataset, bootstrap } = await prepareDataDir({
  data: values.data,
  keep: values.keep,
  requested: { pageViews, visitors: Math.round(pageViews / 10), companies: 50_000, days: 90 },
  log: progress,
})
const { organizationId, apiKey, trackingKey } = bootstrap

// The store as a worker leaves it: migrated, first_hours settled, no merge under way.
{
  const lock = lockDataDir(dataDir)
  const store = createStore({ database: 'default', dataDir })
  try {
    await migrate(store)
    const started = performance.now()
    const settled = await settleFirstHours(store)
    progress(
      `first_hours settled (${settled.full ? 'every visitor' : 'changed visitors'}) in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    )
    await waitForMerges(store)
  } finally {
    await store.close()
    lock.release()
  }
}

// The mix: companies, visitors and totals in turn, as dashboards ask for them: each request's range
// ends at the moment it is sent; the lists' pages 1 to 3, the totals over 30, 7 or 1 days (nine
// different answers). The one-at-a-time baseline asks for page 1 and 30 days.
const now = Date.now()
const rangeOf = (days, at = Date.now()) => ({
  from: new Date(at - days * 86_400_000).toISOString(),
  to: new Date(at).toISOString(),
})
const query = (params) => new URLSearchParams(params).toString()
const listPath = (kind, page, range) =>
  `/api/v1/companies${kind === 'visitors' ? '/visitors' : ''}?${query({ organizationId, ...range, page: String(page), limit: '25' })}`
const totalsPath = (range) => `/api/v1/companies/statistic/${organizationId}/total?${query(range)}`
const endpoints = [
  { kind: 'companies', urlPath: listPath('companies', 1, rangeOf(30, now)) },
  { kind: 'visitors', urlPath: listPath('visitors', 1, rangeOf(30, now)) },
  { kind: 'totals', urlPath: totalsPath(rangeOf(30, now)) },
]
const variants = [1, 2, 3]
const totalsDays = [30, 7, 1]
const plan = (i) => {
  const kind = endpoints[i % endpoints.length].kind
  const variant = Math.floor(i / endpoints.length) % variants.length
  const urlPath =
    kind === 'totals'
      ? totalsPath(rangeOf(totalsDays[variant]))
      : listPath(kind, variants[variant], rangeOf(30))
  return { kind, urlPath }
}

const serverEnv = { API_RATE_LIMIT: '1000000000', TRUST_PROXY: '1', LOG_LEVEL: 'info' }
const serverLog = values['server-log']
const start = async (env = {}) => {
  const server = await startServer(dataDir, [], { ...serverEnv, ...env })
  return { ...server, startedAt: performance.now() }
}
const saveLog = (server, label) => {
  if (serverLog) appendFileSync(serverLog, `\n=== ${label} ===\n${server.output()}`)
}

const phases = []
/** One phase of the open loop, with pixel ingest beside it when `ingest`. */
async function phase(server, name, { ingest = false, warmUp = false } = {}) {
  // The first minute after a start passes unmeasured (the worker's first passes).
  if (warmUp) await openLoop({ base: server.url, apiKey, rate, seconds, connections, plan })
  const loadBefore = loadAverage()
  const cpuBefore = { server: processCpuMs(server.pid), machine: machineCpuMs() }
  const started = performance.now()
  const hits = ingest ? startIngest({ base: server.url, trackingKey, rate: ingestRate }) : undefined
  const sinceStart = (performance.now() - server.startedAt) / 1000
  const samples = await openLoop({ base: server.url, apiKey, rate, seconds, connections, plan })
  const ingested = await hits?.stop()
  const ok = samples.filter((s) => s.status === 200)
  // Cores in use over the phase: the server's, and everything else's (this process included).
  const wallMs = performance.now() - started
  const serverMs = processCpuMs(server.pid) - cpuBefore.server
  const cores = {
    server: serverMs / wallMs,
    others: (machineCpuMs() - cpuBefore.machine - serverMs) / wallMs,
  }
  const result = {
    name,
    sinceStart,
    all: latencySummary(samples.map((s) => s.ms)),
    byKind: Object.fromEntries(
      endpoints.map(({ kind }) => [kind, latencySummary(ok.filter((s) => s.kind === kind).map((s) => s.ms))]),
    ),
    failed: samples.length - ok.length,
    cache: cacheCounts(ok),
    failures: [...new Set(samples.filter((s) => s.status !== 200).map((s) => s.error ?? s.status))],
    ingested,
    cores,
    load: `${loadBefore} -> ${loadAverage()}`,
  }
  phases.push(result)
  progress(
    `${name}: p50 ${result.all.p50.toFixed(1)} ms, p99 ${result.all.p99.toFixed(1)} ms, max ${result.all.max.toFixed(0)} ms` +
      `; cache ${cacheText(result.cache)}` +
      `${result.failed ? `, ${result.failed} failed (${result.failures.join(', ')})` : ''}` +
      `; cores: server ${cores.server.toFixed(2)}, others ${cores.others.toFixed(2)}${ingested ? `; ingest ${ingested.rate.toFixed(0)} hits/s accepted of ${ingested.sent} sent, ${ingested.refused} refused, p50 ${ingested.p50?.toFixed(0)} / p99 ${ingested.p99?.toFixed(0)} ms` : ''}; load ${result.load}`,
  )
}

/** How the answer cache served a phase's answers: hits (kept or shared with a request under way). */
function cacheCounts(samples) {
  const counts = { hit: 0, shared: 0, miss: 0, off: 0 }
  for (const sample of samples) if (sample.cache in counts) counts[sample.cache]++
  return counts
}
const cacheText = (c) =>
  c.off > 0 && c.hit + c.shared + c.miss === 0
    ? 'off'
    : `${(((c.hit + c.shared) / Math.max(1, c.hit + c.shared + c.miss)) * 100).toFixed(0)} % (${c.hit} kept, ${c.shared} shared, ${c.miss} computed)`

/** Each endpoint one at a time on `server` (its answers computed: the cache is off there). */
async function oneAtATime(server) {
  for (const { kind, urlPath } of endpoints) {
    await timedGet(server.url, urlPath, apiKey)
    const samples = []
    const cpuBefore = processCpuMs(server.pid)
    for (let i = 0; i < rounds; i++) samples.push((await timedGet(server.url, urlPath, apiKey)).ms)
    // The server's CPU per request (its passes' included, little between phases).
    baseline[kind] = { ...latencySummary(samples), cpuMs: (processCpuMs(server.pid) - cpuBefore) / rounds }
    progress(
      `${kind}, one at a time: p50 ${baseline[kind].p50.toFixed(1)} ms, ${baseline[kind].cpuMs.toFixed(0)} ms of server CPU per request`,
    )
  }
}

const baseline = {}
let server = await start()
try {
  // Right after the start: the worker's first passes run beside the requests.
  await phase(server, 'first minute after a start')
  await phase(server, 'alone')
  await phase(server, `beside ingest (${ingestRate} hits/s)`, { ingest: true })
  saveLog(server, 'first start')
  await server.stop()
  server = await start()
  await phase(server, `first minute after a restart, beside ingest (${ingestRate} hits/s)`, { ingest: true })
  saveLog(server, 'restart')
  await server.stop()
  // The same load with the answer cache off (STATISTICS_CACHE_ROWS=0), then the same run's
  // one-at-a-time baseline on that warm server.
  server = await start({ STATISTICS_CACHE_ROWS: '0' })
  await phase(server, 'alone, answer cache off (after its first minute)', { warmUp: true })
  await oneAtATime(server)
  saveLog(server, 'cache off')
} finally {
  await server.stop()
}

// --- Report ----------------------------------------------------------------------------------------
const ms = (value) => (value === undefined ? '-' : value < 10 ? value.toFixed(2) : value.toFixed(0))
const met = (p) => (p.all.p50 <= 50 && p.all.p99 <= 250 ? 'met' : '**not met**')
const cpus = os.cpus()
const command = `node bench/analytics/load.bench.mjs ${process.argv.slice(2).join(' ')}`.trim()
const section = `## Under load (${dataset.counts.pageViews.toLocaleString('en')} page views)

<!-- load: generated by bench/analytics/load.bench.mjs; rerun it to refresh this section -->

Target: **p50 <= 50 ms and p99 <= 250 ms** at ${rate} requests/s (companies, visitors and totals in
turn, ${connections} keep-alive connections), alone, beside ingest at ${ingestRate} hits/s, and in
the first minute after a start. Open loop: each request is due at a fixed time and timed from then to
the last byte of its answer, so waiting for a connection counts. The server runs with role \`all\`.
Each request's range ends when it is sent: the lists' pages 1, 2 and 3 of the last 30 days, the
totals of the last 30, 7 and 1 days (nine different answers, each asked about once a second). The
statistics answer cache (packages/core/src/analytics/answer-cache.ts) is on (its default) but in
the last phase; "cache hits" counts the answers it served without computing them (kept, or shared
with an identical request under way) among those that went through it.

- Measured ${new Date(now).toISOString().slice(0, 10)}: ${cpus.length} vCPU (${cpus[0]?.model.trim() ?? 'unknown'}), Node ${process.version}
- Command: \`${command}\`; ${seconds} s per phase

One at a time, same run, answer cache off (${rounds} rounds each, page 1, 30 days): ${endpoints.map(({ kind }) => `${kind} p50 ${ms(baseline[kind]?.p50)} ms (${ms(baseline[kind]?.cpuMs)} ms of server CPU)`).join(', ')}.

| phase | requests | p50 ms | p90 ms | p99 ms | max ms | companies p50 / p99 | visitors p50 / p99 | totals p50 / p99 | cache hits | ingest accepted | cores used: server / others | load average | target |
|---|---:|---:|---:|---:|---:|---|---|---|---|---|---|---|---|
${phases
  .map(
    (p) =>
      `| ${p.name} | ${p.all.count}${p.failed ? ` (${p.failed} failed)` : ''} | ${ms(p.all.p50)} | ${ms(p.all.p90)} | ${ms(p.all.p99)} | ${ms(p.all.max)} | ${endpoints.map(({ kind }) => `${ms(p.byKind[kind].p50)} / ${ms(p.byKind[kind].p99)}`).join(' | ')} | ${cacheText(p.cache)} | ${p.ingested ? `${p.ingested.rate.toFixed(0)} hits/s (p50 ${ms(p.ingested.p50)} / p99 ${ms(p.ingested.p99)} ms)${p.ingested.refused ? `, ${p.ingested.refused} refused` : ''}` : '-'} | ${p.cores.server.toFixed(2)} / ${p.cores.others.toFixed(2)} | ${p.load} | ${met(p)} |`,
  )
  .join('\n')}
`
console.log(section)
const file = values.out
let text = readFileSync(file, 'utf8')
const at = text.indexOf('## Under load')
if (at >= 0) {
  const next = text.indexOf('\n## ', at + 1)
  text = text.slice(0, at) + section + (next >= 0 ? text.slice(next) : '')
} else {
  const why = text.indexOf('\n## Why the code is as it is')
  text = why >= 0 ? `${text.slice(0, why)}\n${section}${text.slice(why)}` : `${text}\n${section}`
}
writeFileSync(file, text)
progress(`wrote ${path.relative(process.cwd(), file)}`)
process.exit(phases.some((p) => p.failed > 0) ? 1 : 0)
