#!/usr/bin/env node
// Webhook delivery benchmark: how many queued deliveries per second the server's dispatcher sends
// to a partner's receiver that answers at once, alone and next to another partner whose receiver
// hangs 10 s on every request.
//
//   npm run build && node bench/webhooks/webhooks.bench.mjs [--deliveries 20000] [--hanging 2000]
//     [--repeat 3] [--hold-ms 10000] [--history 0] [--concurrency N] [--end-to-end 2000] [--data DIR]
//     [--keep] [--no-store-costs]
//
// 1. Stores (templates), filled by this process through the service's functions before any server
//    runs on them: partners A and B, an organization each (partner_id set), an enabled
//    identification webhook each (URL of a receiver of this process, a secret), then --deliveries
//    visitor.identified events of A's organization queued with enqueueWebhookEvent (~3 KB
//    identification payloads). Template "solo" has only A's deliveries; template "hanging" is a copy
//    of it plus --hanging events of B's organization. --data DIR keeps the templates there (reused
//    by later runs with the same counts); without it they go to a temp directory removed at the end.
// 2. Rounds: "solo" (A alone) and "hanging" (A and B), alternated, --repeat times each. Each round
//    copies its template to a fresh directory, points the webhooks at this run's receivers, starts
//    the built server on it (`serve --role all`, WEBHOOK_ALLOW_PRIVATE=1) and waits until A's
//    receiver has every event (or nothing new came for 30 s). A answers 200 at once; B holds every
//    request --hold-ms (10 s) before its 200. Measured at A's receiver: deliveries per second from
//    the first to the last arrival, the median of the whole seconds in between, duplicates and
//    missing events by event id, the X-Service-Signature header (checked against the secret); the
//    server's CPU over that window and its peak RSS. The server is then stopped with SIGTERM (its
//    exit after SHUTDOWN_TIMEOUT_MS, 10 s, is noted: a batch to B may still be waiting on B).
//    --history N first adds N delivered deliveries of A to the round's store (a day old, status
//    success), the history a month of traffic leaves (deliveries are kept 30 days).
// 3. Store costs: one dispatcher batch's store work replayed without HTTP on a copy of the "solo"
//    template (store-costs.mjs), step by step: where a batch's time goes (with the same --history).
//
// 4. End to end (--end-to-end N, 0 to skip): N identify hits on /collect of a fresh server whose
//    partner webhook points at A's receiver (end-to-end.mjs): deliveries per second at the receiver,
//    and from the store, how long identification took to write the events and the event queue's
//    consumer to queue their deliveries.
//
// Progress goes to stderr; the report (Markdown, for bench/webhooks/RESULTS.md) to stdout.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { createStore } from '@visitor-id/core/store'
import { rssBytes, startServer } from '../analytics/server.mjs'
import {
  benchSecret,
  createPartners,
  enqueueDeliveries,
  pointWebhooks,
  waitForMerges,
  withStore,
} from './dataset.mjs'
import { endToEnd } from './end-to-end.mjs'
import { startReceiver } from './receivers.mjs'
import { addHistory, measureStoreCosts } from './store-costs.mjs'

const { values } = parseArgs({
  options: {
    deliveries: { type: 'string', default: '20000' },
    hanging: { type: 'string', default: '2000' },
    repeat: { type: 'string', default: '3' },
    'hold-ms': { type: 'string', default: '10000' },
    history: { type: 'string', default: '0' },
    'end-to-end': { type: 'string', default: '2000' },
    concurrency: { type: 'string' },
    data: { type: 'string' },
    keep: { type: 'boolean', default: false },
    'no-store-costs': { type: 'boolean', default: false },
  },
})
const deliveries = Number(values.deliveries)
const hanging = Number(values.hanging)
const repeat = Number(values.repeat)
const holdMs = Number(values['hold-ms'])
const history = Number(values.history)
const endToEndHits = Number(values['end-to-end'])
const concurrency = values.concurrency ? Number(values.concurrency) : 16
const batch = concurrency * 4
const stallMs = 30_000
const progress = (line) => console.error(`[bench] ${line}`)
const loadAverage = () =>
  os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' / ')
const loadAtStart = loadAverage()
const startedAt = new Date()

const baseDir = values.data
  ? path.resolve(values.data)
  : mkdtempSync(path.join(os.tmpdir(), 'vid-bench-webhooks-'))
mkdirSync(baseDir, { recursive: true })
const removeAtEnd = !values.data && !values.keep
process.on('exit', () => {
  if (removeAtEnd) rmSync(baseDir, { recursive: true, force: true })
})

// --- Receivers --------------------------------------------------------------------------------------
const receiverA = await startReceiver({ secret: benchSecret })
const receiverB = await startReceiver({ secret: benchSecret, holdMs })
const urls = { A: receiverA.url, B: receiverB.url }

// --- Templates --------------------------------------------------------------------------------------
const templates = {
  solo: path.join(baseDir, 'template-solo'),
  hanging: path.join(baseDir, 'template-hanging'),
}
const metaFile = path.join(baseDir, 'templates.json')
let meta = existsSync(metaFile) ? JSON.parse(readFileSync(metaFile, 'utf8')) : undefined
if (meta && (meta.deliveries !== deliveries || meta.hanging !== hanging)) {
  throw new Error(
    `${baseDir} holds templates of ${meta.deliveries} + ${meta.hanging} deliveries; use another --data or the same counts`,
  )
}
if (meta) progress(`reusing the templates of ${baseDir} (filled ${meta.filledAt})`)
else {
  for (const dir of Object.values(templates)) rmSync(dir, { recursive: true, force: true })
  progress(`filling ${templates.solo}: partners A and B, ${deliveries} deliveries for A`)
  const { partners } = await createPartners(templates.solo, ['A', 'B'], urls)
  const soloSeconds = await enqueueDeliveries(templates.solo, partners.A, deliveries, { log: progress })
  progress(`queued ${deliveries} in ${soloSeconds.toFixed(1)} s; copying to ${templates.hanging}`)
  cpSync(templates.solo, templates.hanging, { recursive: true })
  const hangingSeconds = await enqueueDeliveries(templates.hanging, partners.B, hanging, { log: progress })
  progress(`queued ${hanging} for B in ${hangingSeconds.toFixed(1)} s`)
  meta = { deliveries, hanging, partners, soloSeconds, hangingSeconds, filledAt: new Date().toISOString() }
  writeFileSync(metaFile, `${JSON.stringify(meta, null, 2)}\n`)
}
const { partners } = meta

// --- Rounds -----------------------------------------------------------------------------------------
const percentile = (sorted, q) => sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]
const median = (samples) =>
  percentile(
    [...samples].sort((a, b) => a - b),
    0.5,
  )

/** utime + stime of a process in seconds (Linux /proc; NaN elsewhere). */
function cpuSeconds(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return Number.NaN
  }
}

/** The figures of one round from A's receiver. */
function analyse(stats) {
  const arrivals = stats.arrivals
  const first = arrivals[0]
  const last = arrivals.at(-1)
  const seconds = (last - first) / 1000
  const perSecond = []
  for (const at of arrivals) {
    const slot = Math.floor((at - first) / 1000)
    perSecond[slot] = (perSecond[slot] ?? 0) + 1
  }
  // Whole seconds only: the last one is cut short by the end of the queue.
  const whole = perSecond.slice(0, -1).map((n) => n ?? 0)
  // The dispatcher sends a batch (4 rounds of the concurrency), then writes, then reads the next.
  const spans = []
  const gaps = []
  for (let start = 0; start + batch <= arrivals.length; start += batch) {
    spans.push(arrivals[start + batch - 1] - arrivals[start])
    if (start + batch < arrivals.length) gaps.push(arrivals[start + batch] - arrivals[start + batch - 1])
  }
  let duplicates = 0
  for (const n of stats.perEvent.values()) duplicates += n - 1
  return {
    received: arrivals.length,
    unique: stats.perEvent.size,
    duplicates,
    missing: deliveries - stats.perEvent.size,
    withoutSignature: stats.withoutSignature,
    badSignature: stats.badSignature,
    seconds,
    rate: (arrivals.length - 1) / seconds,
    perSecondP50: whole.length > 0 ? median(whole) : Number.NaN,
    batchSpanP50: median(spans),
    batchGapP50: median(gaps),
    firstAfterReadyMs: first - stats.readyAt,
  }
}

async function runRound(kind, n) {
  const dir = path.join(baseDir, `round-${kind}-${n}`)
  rmSync(dir, { recursive: true, force: true })
  cpSync(templates[kind], dir, { recursive: true })
  await pointWebhooks(dir, partners, urls)
  if (history > 0) {
    const { parts } = await withStore(dir, (store) =>
      addHistory(store, partners.A.partnerId, history, waitForMerges),
    )
    progress(`${kind} #${n}: added ${history} delivered rows of history (${parts} active parts)`)
  }
  receiverA.reset()
  receiverB.reset()
  const env = {
    WEBHOOK_ALLOW_PRIVATE: '1',
    ...(values.concurrency ? { WEBHOOK_CONCURRENCY: values.concurrency } : {}),
  }
  const server = await startServer(dir, ['--role', 'all'], env)
  const a = receiverA.stats()
  a.readyAt = performance.now()
  progress(`${kind} #${n}: server ready (pid ${server.pid}); waiting for ${deliveries} deliveries at A`)
  let rssPeak = rssBytes(server.pid)
  let cpuAtFirst
  let cpuAtLast = Number.NaN
  let lastCount = 0
  let lastProgress = performance.now()
  let lastLog = performance.now()
  const cpuAtReady = cpuSeconds(server.pid)
  while (a.perEvent.size < deliveries) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    rssPeak = Math.max(rssPeak, rssBytes(server.pid))
    if (cpuAtFirst === undefined && a.arrivals.length > 0) cpuAtFirst = cpuSeconds(server.pid)
    if (a.arrivals.length !== lastCount) {
      lastCount = a.arrivals.length
      lastProgress = performance.now()
    } else if (performance.now() - lastProgress > stallMs) {
      progress(
        `${kind} #${n}: nothing new for ${stallMs / 1000} s; ${a.perEvent.size} of ${deliveries} arrived`,
      )
      break
    }
    if (performance.now() - lastLog > 5000) {
      lastLog = performance.now()
      progress(`${kind} #${n}: ${a.perEvent.size} at A, ${receiverB.stats().arrivals.length} requests at B`)
    }
  }
  cpuAtLast = cpuSeconds(server.pid)
  // Late duplicates have a moment to arrive before the count is taken.
  await new Promise((resolve) => setTimeout(resolve, 2000))
  const figures = analyse(a)
  figures.cpuSeconds = cpuAtLast - (cpuAtFirst ?? cpuAtReady)
  figures.cpuShare = figures.cpuSeconds / figures.seconds
  figures.rssPeakMb = rssPeak / 1024 / 1024
  figures.bRequests = receiverB.stats().arrivals.length
  // The server's CPU once A has nothing left (B, in its rounds, still has deliveries under way):
  // the periodic passes over the table cost this much with nothing to send.
  const idleFrom = cpuSeconds(server.pid)
  await new Promise((resolve) => setTimeout(resolve, 5000))
  figures.idleCpuShare = (cpuSeconds(server.pid) - idleFrom) / 5
  const stopping = performance.now()
  await server.stop()
  figures.stopSeconds = (performance.now() - stopping) / 1000
  figures.stopForced = /shutdown took too long/.test(server.output())
  const warnings = server
    .output()
    .split('\n')
    .filter((line) => {
      // pino's JSON lines: the ones whose message is about webhooks.
      try {
        return /webhook/i.test(JSON.parse(line).msg ?? '')
      } catch {
        return false
      }
    })
  figures.serverWebhookWarnings = warnings.length
  if (warnings.length > 0) progress(`${kind} #${n}: server said ${warnings.slice(0, 3).join(' | ')}`)
  figures.log = await withStore(dir, (store) =>
    store.query(
      `SELECT if(partner_id = {a:UUID}, 'A', 'B') AS partner, status, count() AS n
       FROM webhook_attempts GROUP BY partner, status ORDER BY partner, status`,
      { a: partners.A.partnerId },
    ),
  )
  if (!values.keep) rmSync(dir, { recursive: true, force: true })
  progress(
    `${kind} #${n}: ${figures.rate.toFixed(0)}/s (median second ${figures.perSecondP50}), ${figures.unique} of ${deliveries}, ` +
      `${figures.duplicates} duplicates, CPU ${(figures.cpuShare * 100).toFixed(0)} %, B got ${figures.bRequests} requests`,
  )
  return figures
}

const rounds = { solo: [], hanging: [] }
for (let n = 1; n <= repeat; n++) {
  for (const kind of ['solo', 'hanging']) rounds[kind].push(await runRound(kind, n))
}

// --- End to end ------------------------------------------------------------------------------------
let e2e
if (endToEndHits > 0) {
  progress(`end to end: ${endToEndHits} identify hits`)
  e2e = await endToEnd(receiverA, benchSecret, endToEndHits, progress)
  progress(`end to end: ${e2e.delivered} of ${endToEndHits} delivered, ${e2e.rate.toFixed(0)}/s`)
}

// --- Store costs --------------------------------------------------------------------------------------
let costs
if (!values['no-store-costs']) {
  const dir = path.join(baseDir, 'store-costs')
  rmSync(dir, { recursive: true, force: true })
  cpSync(templates.solo, dir, { recursive: true })
  progress('store costs: replaying dispatcher batches without HTTP')
  costs = await withStore(dir, async (store) => {
    if (history > 0) await addHistory(store, partners.A.partnerId, history, waitForMerges)
    // Every replayed batch a full one: as many as the queued deliveries fill, at most 40.
    return measureStoreCosts(store, partners.A.partnerId, {
      batch,
      batches: Math.min(40, Math.floor(deliveries / batch)),
    })
  })
  rmSync(dir, { recursive: true, force: true })
}
let engineVersion = ''
{
  const dir = path.join(baseDir, 'version-probe')
  cpSync(templates.solo, dir, { recursive: true })
  const store = createStore({ database: 'default', dataDir: dir })
  engineVersion = (await store.query('SELECT version() AS v'))[0].v
  await store.close()
  rmSync(dir, { recursive: true, force: true })
}
await receiverA.close()
await receiverB.close()

// --- Report -------------------------------------------------------------------------------------------
const fmt = (value, digits = 0) =>
  Number.isFinite(value)
    ? value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
    : 'n/a'
const soloRates = rounds.solo.map((r) => r.rate)
const hangingRates = rounds.hanging.map((r) => r.rate)
const soloMedian = median(soloRates)
const hangingMedian = median(hangingRates)
const ratio = hangingMedian / soloMedian
const allComplete = [...rounds.solo, ...rounds.hanging].every((r) => r.missing === 0)
const duplicates = [...rounds.solo, ...rounds.hanging].reduce((sum, r) => sum + r.duplicates, 0)
const signaturesOk = [...rounds.solo, ...rounds.hanging].every(
  (r) => r.withoutSignature === 0 && r.badSignature === 0,
)
const cpus = os.cpus()
const lines = [
  `## Run of ${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC`,
  '',
  `- Command: \`node bench/webhooks/webhooks.bench.mjs --deliveries ${deliveries} --hanging ${hanging} --repeat ${repeat}` +
    `${history > 0 ? ` --history ${history}` : ''}` +
    `${values.concurrency ? ` --concurrency ${values.concurrency}` : ''}\``,
  `- Machine: ${cpus.length} vCPU (${cpus[0]?.model.trim() ?? 'unknown'}), Node ${process.version}, ClickHouse (chdb) ${engineVersion}; ` +
    `load average ${loadAtStart} at the start, ${loadAverage()} at the end`,
  `- Server: \`serve --role all\`, WEBHOOK_ALLOW_PRIVATE=1, WEBHOOK_CONCURRENCY ${concurrency} (batches of ${batch}), ` +
    `receivers on 127.0.0.1 in the bench process (A answers 200 at once; B holds each request ${holdMs / 1000} s, then 200)`,
  `- Queued with \`enqueueWebhookEvent\` before the server starts: ${fmt(deliveries)} events for A ` +
    `(${fmt(meta.soloSeconds, 1)} s, ${fmt(deliveries / meta.soloSeconds)}/s), plus ${fmt(hanging)} for B in the "hanging" rounds ` +
    `(${fmt(meta.hangingSeconds, 1)} s); payloads ~3 KB` +
    `${history > 0 ? `; plus ${fmt(history)} delivered rows of A's history in each round's store` : ''}`,
  '',
  '| round | A deliveries/s (first to last) | median of whole seconds | A received / unique / missing / duplicates | signatures | batch sent in (p50) | between batches (p50) | server CPU | CPU once A is done | peak RSS | requests at B |',
  '|---|---:|---:|---|---|---:|---:|---:|---:|---:|---:|',
]
for (let n = 0; n < repeat; n++) {
  for (const kind of ['solo', 'hanging']) {
    const r = rounds[kind][n]
    lines.push(
      `| ${kind === 'solo' ? 'A alone' : 'A + B hanging'} #${n + 1} | ${fmt(r.rate)} | ${fmt(r.perSecondP50)} | ` +
        `${fmt(r.received)} / ${fmt(r.unique)} / ${fmt(r.missing)} / ${fmt(r.duplicates)} | ` +
        `${r.withoutSignature === 0 && r.badSignature === 0 ? 'all valid' : `${r.withoutSignature} missing, ${r.badSignature} wrong`} | ` +
        `${fmt(r.batchSpanP50)} ms | ${fmt(r.batchGapP50)} ms | ${fmt(r.cpuShare * 100)} % of a core | ${fmt(r.idleCpuShare * 100)} % | ${fmt(r.rssPeakMb)} MB | ${fmt(r.bRequests)} |`,
    )
  }
}
lines.push(
  '',
  `**A alone: ${fmt(soloMedian)} deliveries/s** (median of ${repeat}; rounds ${soloRates.map((r) => fmt(r)).join(', ')}; target >= 500): ` +
    `${soloMedian >= 500 ? 'met' : 'missed'}.`,
  '',
  `**A next to B hanging: ${fmt(hangingMedian)} deliveries/s, ${fmt(ratio * 100, 1)} % of A alone** ` +
    `(rounds ${hangingRates.map((r) => fmt(r)).join(', ')}; pairwise ${rounds.hanging
      .map((r, i) => `${fmt((r.rate / rounds.solo[i].rate) * 100, 1)} %`)
      .join(', ')}; target >= 90 %): ${ratio >= 0.9 ? 'met' : 'missed'}.`,
  '',
  `Every event arrived: ${allComplete ? 'yes' : 'NO'}; duplicates: ${duplicates}; signatures: ${signaturesOk ? 'present and valid on every delivery' : 'NOT all valid'}.`,
  '',
  'Delivery log after each round (webhook_attempts by partner and status):',
  '',
)
for (let n = 0; n < repeat; n++) {
  for (const kind of ['solo', 'hanging']) {
    const log = rounds[kind][n].log.map((row) => `${row.partner} ${row.status} ${row.n}`).join(', ')
    const r = rounds[kind][n]
    lines.push(
      `- ${kind} #${n + 1}: ${log || 'none'} (SIGTERM to exit ${fmt(r.stopSeconds, 1)} s` +
        `${r.stopForced ? ', "shutdown took too long: exiting" (exit 1)' : ''}` +
        `${r.serverWebhookWarnings > 0 ? `; ${r.serverWebhookWarnings} webhook warnings in the server log` : ''})`,
    )
  }
}
if (costs) {
  lines.push(
    '',
    `Store costs of one batch of ${costs.batch} (the dispatcher's store work replayed without HTTP, ` +
      `${costs.batches} batches from a store of ${fmt(costs.rows)} deliveries, ${fmt(deliveries)} of them due, ` +
      `${costs.parts} active parts; p50 ms):`,
    '',
    '| pass query (partners with due deliveries) | due query (with bodies) | due query (ids only) | two config reads | attempts insert | deliveries insert | store time per batch | ceiling |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|',
    `| ${fmt(costs.p50.pass, 1)} | ${fmt(costs.p50.due, 1)} | ${fmt(costs.p50.dueIds, 1)} | ${fmt(costs.p50.configs, 1)} | ` +
      `${fmt(costs.p50.attemptsInsert, 1)} | ${fmt(costs.p50.deliveriesInsert, 1)} | ${fmt(costs.perBatchMs, 1)} | ${fmt(costs.ceilingPerSecond)}/s |`,
  )
}
if (e2e) {
  lines.push(
    '',
    `End to end: ${fmt(e2e.count)} identify hits on /collect (sent in ${fmt(e2e.sendSeconds, 1)} s, all 202) to a fresh server ` +
      `whose partner webhook points at A's receiver: **${fmt(e2e.delivered)} delivered, ${fmt(e2e.rate)}/s** from the first ` +
      `(${fmt(e2e.firstAfterMs / 1000, 1)} s after the first hit) to the last (${fmt(e2e.lastAfterMs / 1000, 1)} s). ` +
      `Identification wrote the ${fmt(e2e.events.n)} visitor.identified events within ${fmt(e2e.events.spanMs / 1000, 1)} s; ` +
      `the event queue's consumer queued the ${fmt(e2e.deliveries.n)} deliveries over ${fmt(e2e.deliveries.spanMs / 1000, 1)} s ` +
      `(${fmt(e2e.deliveries.n / (e2e.deliveries.spanMs / 1000))}/s).`,
  )
}
console.log(lines.join('\n'))
