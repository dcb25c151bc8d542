#!/usr/bin/env node
// The soak benchmark: the all-in-one server, with the memory settings of a 2 GB host, under mixed
// load for a long run on a store of 10 M page views, its RSS sampled every 10 s. Method and
// figures: bench/soak/README.md and RESULTS.md.
//
//   npm run build && flock /tmp/bench.lock node bench/soak/soak.bench.mjs [--minutes 30]
//     [--store DIR] [--page-views 10000000] [--ingest-rate N] [--warmup-minutes 5]
//     [--memory-limit 768MiB] [--heap-mb 384] [--out DIR] [--quick]
//
// --store DIR       the prepared store, filled on the first run and kept (a run works on a copy)
// --ingest-rate N   hits per second; default: half of the capacity measured for 20 s at the start
// --quick           3 minutes (1 of warm-up) on a store of 1 M page views; RESULTS.md and the
//                   plot go to a temporary folder unless --out is given
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { settleFirstHours } from '@visitor-id/core/analytics'
import { migrate } from '@visitor-id/core/store'
import { rssBytes, startServer } from '../analytics/server.mjs'
import { benchSecret, withStore } from '../webhooks/dataset.mjs'
import { startReceiver } from '../webhooks/receivers.mjs'
import { createLoad, percentile } from './load.mjs'
import { writePlot } from './plot.mjs'
import { copyStore, preparedStore } from './prepare.mjs'
import { resultsMarkdown } from './results.mjs'

const { values } = parseArgs({
  options: {
    minutes: { type: 'string' },
    store: { type: 'string' },
    'page-views': { type: 'string' },
    'ingest-rate': { type: 'string' },
    'warmup-minutes': { type: 'string' },
    'memory-limit': { type: 'string', default: '768MiB' },
    'heap-mb': { type: 'string', default: '384' },
    out: { type: 'string' },
    quick: { type: 'boolean', default: false },
  },
})
const quick = values.quick
const minutes = Number(values.minutes ?? (quick ? 3 : 30))
const warmupMinutes = Number(values['warmup-minutes'] ?? (quick ? 1 : 5))
const pageViews = Number(values['page-views'] ?? (quick ? 1_000_000 : 10_000_000))
const storeDir =
  values.store ?? `/work/bench-data/soak-${pageViews >= 1_000_000 ? `${pageViews / 1_000_000}m` : pageViews}`
const outDir = values.out ?? (quick ? mkdtempSync(path.join(os.tmpdir(), 'soak-')) : import.meta.dirname)
const heapMb = Number(values['heap-mb'])
// Long enough for the inserts' parts to be merged as they are in the soak.
const capacitySeconds = quick ? 20 : 60
const mib = 1024 ** 2
const memoryLimitMiB = parseSize(values['memory-limit']) / mib
// The documented bound of the process (README.md, Operations, "Memory"): the engine's limit, the
// Node heap, and 384 MiB for the rest (code, the engine's untracked memory, buffers, stacks).
const capMiB = memoryLimitMiB + heapMb + 384
const log = (message) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${message}`)

/** A `kB` field of /proc/PID/status (VmRSS, VmHWM), or NaN. */
function statusKiB(pid, field) {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return match ? Number(match[1]) : Number.NaN
  } catch {
    return Number.NaN
  }
}

/** The least-squares line through `[x, y]` points: `at(x)` is its value at x. */
function leastSquares(points) {
  const n = points.length
  const mean = (values) => values.reduce((sum, v) => sum + v, 0) / Math.max(n, 1)
  const mx = mean(points.map(([x]) => x))
  const my = mean(points.map(([, y]) => y))
  const sxx = points.reduce((sum, [x]) => sum + (x - mx) ** 2, 0)
  const sxy = points.reduce((sum, [x, y]) => sum + (x - mx) * (y - my), 0)
  const slope = sxx === 0 ? 0 : sxy / sxx
  return { slope, at: (x) => my + slope * (x - mx) }
}

function parseSize(text) {
  const match = /^(\d+)\s*(MiB|GiB)?$/i.exec(text)
  if (!match) throw new Error(`--memory-limit: a size such as 768MiB (got ${text})`)
  return Number(match[1]) * (match[2]?.toLowerCase() === 'gib' ? 1024 ** 3 : match[2] ? mib : 1)
}

const info = await preparedStore(storeDir, { pageViews, log })
const runDir = copyStore(storeDir, `${storeDir}-run`)
// The copy is gigabytes: gone however the run ends (a failed start or check included).
process.once('exit', () => rmSync(runDir, { recursive: true, force: true }))
// The statistics settled up to now before the server starts, as a live store's are: a store
// prepared more than a day ago would otherwise be settled whole during the run. Migrated first: a
// store prepared by an earlier release lacks the tables today's pass writes.
await withStore(runDir, async (store) => {
  const started = performance.now()
  const { applied } = await migrate(store)
  if (applied.length > 0)
    log(`migrated the copy (${applied.join(', ')}) in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  await settleFirstHours(store)
})
const keys = JSON.parse(readFileSync(path.join(runDir, 'bootstrap.json'), 'utf8'))
const receiver = await startReceiver({ secret: benchSecret })
log(
  `starting the server on a copy of ${storeDir} (STORE_MEMORY_LIMIT ${memoryLimitMiB} MiB, heap ${heapMb} MiB)`,
)
const server = await startServer(runDir, ['--role', 'all'], {
  STORE_MEMORY_LIMIT: values['memory-limit'],
  NODE_OPTIONS: `--max-old-space-size=${heapMb}`,
  WEBHOOK_ALLOW_PRIVATE: '1',
  TRUST_PROXY: '1',
  LOG_LEVEL: 'warn',
})
const runStartedAt = new Date().toISOString()
const configured = await fetch(`${server.url}/api/v1/partner/webhooks/identification`, {
  method: 'PUT',
  headers: { 'x-partner-api-key': keys.partnerKey, 'content-type': 'application/json' },
  body: JSON.stringify({ url: receiver.url, secret: benchSecret }),
})
if (configured.status !== 200) throw new Error(`webhook configuration: ${configured.status}`)

const load = createLoad(server.url, {
  trackingKey: keys.trackingKey,
  apiKey: keys.apiKey,
  organizationId: info.organizationId,
  visitorIds: info.visitorIds,
  contacts: info.contacts,
  maxHits: 20_000_000,
})
const loadBefore = os.loadavg()
// The start's own work first (the first ICP pass re-scores the visitors changed in the last day,
// the statistics settle): the soak measures a running server.
log('waiting until the server answers probe hits within 500 ms for 15 s in a row')
const startSeconds = await load.settled()
log(`settled ${startSeconds.toFixed(0)} s after the start`)
let capacity
if (values['ingest-rate']) capacity = Number(values['ingest-rate']) * 2
else {
  log(
    `measuring capacity for ${capacitySeconds} s: 1,000 clients back to back, 5 % identify hits, 10 API reads/s`,
  )
  capacity = await load.capacity(capacitySeconds)
  await new Promise((resolve) => setTimeout(resolve, 5000))
}
const rates = { ingestRate: Math.round(capacity / 2), identifyRate: 0, readRate: 10 }
rates.identifyRate = Math.max(1, Math.round(rates.ingestRate / 20))
log(
  `capacity ${Math.round(capacity)} hits/s; soak at ${rates.ingestRate} hits/s, ${rates.identifyRate} identify hits/s, ${rates.readRate} API reads/s for ${minutes} min`,
)

// --- The run: load, and a sample every 10 s --------------------------------------------------------
const samples = []
const started = performance.now()
let webhooksSeen = receiver.stats().arrivals.length
const sample = () => {
  const arrivals = receiver.stats().arrivals.length
  const seconds = samples.length === 0 ? 10 : (performance.now() - samples.at(-1).at) / 1000
  samples.push({
    at: performance.now(),
    minute: (performance.now() - started) / 60_000,
    rssMiB: rssBytes(server.pid) / mib,
    ingest: (load.stats.ingest.takeWindow() + load.stats.identify.takeWindow()) / seconds,
    reads: load.stats.reads.takeWindow() / seconds,
    webhooks: (arrivals - webhooksSeen) / seconds,
  })
  webhooksSeen = arrivals
  const last = samples.at(-1)
  if (samples.length % 6 === 1)
    log(
      `${last.minute.toFixed(1)} min: RSS ${last.rssMiB.toFixed(0)} MiB, ${last.ingest.toFixed(0)} hits/s, ${last.reads.toFixed(1)} reads/s, ${last.webhooks.toFixed(1)} webhooks/s`,
    )
}
sample()
load.start(rates)
const sampler = setInterval(sample, 10_000)
await new Promise((resolve) => setTimeout(resolve, minutes * 60_000))
clearInterval(sampler)
sample()
await load.stop()
const loadAfter = os.loadavg()
const deliveredBeforeStop = receiver.stats().perEvent.size
// The highest RSS the process ever had (VmHWM), between the samples too.
const highWaterMiB = statusKiB(server.pid, 'VmHWM') / 1024
log('stopping the server (SIGTERM: it flushes every buffer)')
await server.stop()
await receiver.close()
const serverOutput = server.output()

// --- The checks ------------------------------------------------------------------------------------
const stored = await withStore(runDir, async (store) => {
  const text = await store.text(
    `SELECT toString(toUInt64(extract(path, '^/b/(\\d+)'))) FROM page_views WHERE path LIKE '/b/%'`,
  )
  const [icp] = await store.query(
    `SELECT count() AS rows, uniqExact(computed_at) AS runs FROM icp_scores
     WHERE computed_at >= {since:DateTime64(3, 'UTC')}`,
    { since: runStartedAt },
  )
  const [pageViewCount] = await store.query('SELECT count() AS n FROM page_views')
  return { text, icp, pageViews: Number(pageViewCount.n) }
})
const seen = new Uint8Array(load.acked.length)
let duplicates = 0
for (const line of stored.text.split('\n')) {
  if (line === '') continue
  const n = Number(line)
  if (seen[n]) duplicates++
  seen[n] = 1
}
let acked = 0
let lost = 0
for (let n = 0; n < load.sent; n++) {
  if (!load.acked[n]) continue
  acked++
  if (!seen[n]) lost++
}
const afterWarmup = samples.filter((s) => s.minute >= warmupMinutes)
// Growth is the trend of RSS after the warm-up: a least-squares line through its samples, from its
// value at the first sample to its value at the last. RSS swings by a tenth minute to minute (the
// engine's caches and parts come and go), so two single minutes would measure the swing, not drift.
const trend = leastSquares(afterWarmup.map((s) => [s.minute, s.rssMiB]))
const startRss = trend.at(afterWarmup[0]?.minute ?? warmupMinutes)
const endRss = trend.at(afterWarmup.at(-1)?.minute ?? minutes)
const fiveMinutes = (from, to) =>
  percentile(
    afterWarmup.filter((s) => s.minute >= from && s.minute <= to).map((s) => s.rssMiB),
    50,
  )
const medians = {
  first: fiveMinutes(warmupMinutes, warmupMinutes + 5),
  last: fiveMinutes(minutes - 5, minutes),
}
const warmupEnds = started + warmupMinutes * 60_000
const requests = ['ingest', 'identify', 'reads'].map((kind) => {
  const t = load.stats[kind]
  return {
    kind,
    done: t.done,
    failed: t.failed,
    slow: t.slow,
    slowInWarmup: t.slowAt.filter((at) => at < warmupEnds).length,
    p50: percentile(t.latencies, 50),
    p99: percentile(t.latencies, 99),
    maxMs: t.maxMs,
  }
})
const figures = {
  date: new Date().toISOString().slice(0, 10),
  machine: `${os.cpus().length} vCPU ${os.cpus()[0]?.model ?? ''}`.trim(),
  node: process.version,
  load: { before: loadBefore.map((v) => v.toFixed(2)), after: loadAfter.map((v) => v.toFixed(2)) },
  minutes,
  warmupMinutes,
  store: { pageViews: info.pageViews, stored: stored.pageViews },
  settings: { memoryLimitMiB, queryMemoryLimitMiB: memoryLimitMiB / 2, heapMb, capMiB },
  capacity: Math.round(capacity),
  startSeconds: Math.round(startSeconds),
  rates,
  rss: {
    startRss,
    endRss,
    growth: (endRss - startRss) / startRss,
    medians,
    peak: Math.max(...samples.map((s) => s.rssMiB)),
    highWater: highWaterMiB,
  },
  loss: { acked, lost, duplicates },
  requests,
  notSent: load.stats.notSent,
  webhooks: { delivered: deliveredBeforeStop, arrivals: receiver.stats().arrivals.length },
  icp: { rows: Number(stored.icp.rows), runs: Number(stored.icp.runs) },
  memoryRefusals: (serverOutput.match(/refused for memory/g) ?? []).length,
  serverErrors: (serverOutput.match(/"level":50/g) ?? []).length,
  samples: samples.length,
}
const targets = [
  ['RSS growth after warm-up < 5 %', figures.rss.growth < 0.05],
  [`peak RSS < ${capMiB} MiB`, Math.max(figures.rss.peak, highWaterMiB || 0) < capMiB],
  ['0 acknowledged hits lost', lost === 0 && duplicates === 0],
  ['no request slower than 1 s', requests.every((r) => r.slow === 0)],
]
mkdirSync(outDir, { recursive: true })
writePlot(path.join(outDir, 'soak.png'), {
  samples,
  capMiB,
  warmupMinutes,
  title: `SOAK ${minutes} MIN, ${info.pageViews / 1_000_000} M PAGE VIEWS, ${figures.date}`,
})
writeFileSync(path.join(outDir, 'RESULTS.md'), resultsMarkdown(figures, targets, samples))
for (const [name, ok] of targets) log(`${ok ? 'PASS' : 'FAIL'} ${name}`)
log(
  `RSS ${startRss.toFixed(0)} -> ${endRss.toFixed(0)} MiB (${(figures.rss.growth * 100).toFixed(2)} %), peak ${figures.rss.peak.toFixed(0)} MiB; ` +
    `${acked} hits acknowledged, ${lost} lost, ${duplicates} duplicated; slowest request ${Math.max(...requests.map((r) => r.maxMs)).toFixed(0)} ms`,
)
log(`wrote ${path.join(outDir, 'RESULTS.md')} and soak.png`)
process.exit(targets.every(([, ok]) => ok) ? 0 : 1)
