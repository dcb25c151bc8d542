#!/usr/bin/env node
// Ingest benchmark: POST /collect on the all-in-one server (embedded ClickHouse) against a no-op
// Fastify route measured in the same run, then a count in ClickHouse proving zero loss.
//
//   npm run build && node bench/ingest/ingest.bench.mjs [--rounds 5] [--duration 10] [--connections 2000]
//     [--batch-ms MS] [--batch-rows N] [--profile DIR] [--bots SHARE] [--against DIR]
//     [--identify SHARE [--contacts N] [--first-share F] [--hashed H] [--unknown U] [--store-timing]]
//
// --profile writes a V8 CPU profile of the ingest server to DIR (open it in Chrome DevTools).
//
// --bots SHARE (e.g. 0.2): that share of the requests are hits ingest filters out (a third each: a
// known crawler's user agent, a headless browser's, navigator.webdriver; botHitRequest in
// traffic.mjs). None may be stored; the bench prints how many the organization's filtered-hit
// counts (dropped_hits) hold, which is at least the bot hits acknowledged.
//
// --against DIR: the same server from another checkout (built there), in the same rounds, the two
// in alternating order; prints this checkout's rate over the other's per round (against.mjs).
// --against-env K=V,K=V: settings for that server only (--against . --against-env INGEST_ACK=store
// compares this build's two acknowledgement modes).
//
// --identify SHARE (e.g. 0.1) measures identify hits instead of the no-op route: before the
// server starts, its store gets N contacts (--contacts, default 1,000,000 with --identify; written
// in-engine, contact_keys filled by its view, both merged), and the bootstrap organization opens
// with INITIAL_CREDITS=100000000 so identification never runs out. Rounds then alternate the pure
// traffic (the default hits, no identify hits) and the mix (SHARE of the requests identify hits of
// logged-in visitors, the rest the same hits), against the same server, and print the mix's rate
// over the pure rate per round and for the medians (target >= 90 %). Emails: a contact's (the
// rest), an address no contact has (--unknown, 0.15), the SHA-256 of a contact's (--hashed, 0.05).
// --first-share (0.1): about that share of identify hits identify their visitor for the first time
// (see createIdentifyTraffic in traffic.mjs). /metrics counts what identification did per round.
// --store-timing preloads store-timing.mjs into the server and prints, for pure and mix rounds, the
// server's Store calls by kind: calls per second, milliseconds per call, seconds in calls per second;
// then the engine's counters per second (system.events: rows and bytes read, merges, query CPU).
// With --identify, each round and the summary also print the server's CPU per request by thread
// (thread-cpu.mjs: main thread, Node's other threads, engine, merges) and the load generator's own.
//
// Both servers run as child processes; autocannon drives them alternately, round by round, with
// the same connections. Throughput is 2xx answers / duration (autocannon's per-second average
// skips the ramp-up and reads high). Every hit has a unique path; each acknowledged (202) one
// must be stored exactly once. CPU time of each server process is read from /proc (Linux).
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { findContactsByKeys } from '@visitor-id/core/identification'
import { createStore, lockDataDir, migrate } from '@visitor-id/core/store'
import autocannon from 'autocannon'
import { comparisonLines, startAgainst } from './against.mjs'
import { perUnitUs, threadCpuMs, threadGroups } from './thread-cpu.mjs'
import {
  botHitRequest,
  contactEmail,
  createIdentifyTraffic,
  createVisitorPool,
  hitRequest,
  insertContacts,
} from './traffic.mjs'

const root = path.resolve(import.meta.dirname, '..', '..')
const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '2000' },
    'batch-ms': { type: 'string' },
    'batch-rows': { type: 'string' },
    keep: { type: 'boolean', default: false },
    profile: { type: 'string' },
    'store-timing': { type: 'boolean', default: false },
    identify: { type: 'string' },
    contacts: { type: 'string' },
    'first-share': { type: 'string', default: '0.1' },
    hashed: { type: 'string', default: '0.05' },
    unknown: { type: 'string', default: '0.15' },
    bots: { type: 'string', default: '0' },
    against: { type: 'string' },
    'against-env': { type: 'string' },
  },
})
const rounds = Number(values.rounds)
const duration = Number(values.duration)
const connections = Number(values.connections)
const identifyShare = Number(values.identify ?? 0)
const identifyMode = identifyShare > 0
const contactCount = Number(values.contacts ?? (identifyMode ? 1_000_000 : 0))
const botShare = Number(values.bots)

function start(script, args, env, nodeArgs = [], cwd = root) {
  const child = spawn(process.execPath, [...nodeArgs, script, ...args], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', (chunk) => {
    output += chunk
  })
  child.stderr.on('data', (chunk) => {
    output += chunk
  })
  const url = new Promise((resolve, reject) => {
    child.stdout.on('data', () => {
      const match = /running at (http:\/\/\S+)/.exec(output)
      if (match) resolve(match[1])
    })
    child.on('exit', (code) => reject(new Error(`${script} exited with ${code}:\n${output}`)))
  })
  return { child, url, output: () => output }
}

/** CPU milliseconds used so far by a process (all its threads), or NaN off Linux. */
function cpuMs(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
    return (Number(fields[11]) + Number(fields[12])) * (1000 / 100)
  } catch {
    return Number.NaN
  }
}

async function drive(target, request, onAck) {
  const { url, pid } = target
  const cpuBefore = cpuMs(pid)
  // Answers other than 202, by the kind of request ('hit' or an identify email's kind) and status.
  const refused = {}
  const result = await autocannon({
    url,
    connections,
    duration,
    requests: [
      {
        method: 'POST',
        path: '/collect',
        setupRequest: (req, context) => {
          const next = request()
          context.n = next.n
          context.kind = next.kind
          return { ...req, headers: next.headers, body: next.body }
        },
        onResponse: (status, _body, context) => {
          if (status === 202) onAck?.(context.n, context.kind)
          else {
            const key = `${context.kind ?? 'hit'} ${status}`
            refused[key] = (refused[key] ?? 0) + 1
          }
        },
      },
    ],
  })
  return {
    rps: result['2xx'] / duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    ok: result['2xx'],
    errors: result.errors + result.timeouts + result.non2xx,
    cpuPerRequestUs: ((cpuMs(pid) - cpuBefore) * 1000) / Math.max(1, result['2xx']),
    refused,
  }
}

const median = (list) => {
  const sorted = [...list].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

/**
 * Writes `count` contacts into the data directory's store, in-engine, before the server opens it:
 * contact `n` is contactEmail(n) at company<n % 20000>.test; the view fills contact_keys (email
 * and its SHA-256). Both tables are merged, like a store whose import finished a while ago.
 */
async function fillContacts(dataDir, count) {
  const lock = lockDataDir(dataDir)
  const store = createStore({ database: 'default', dataDir })
  try {
    await migrate(store)
    const started = performance.now()
    await insertContacts(store, count)
    const inserted = performance.now()
    for (const table of ['contacts', 'contact_keys']) await store.command(`OPTIMIZE TABLE ${table} FINAL`)
    const [{ contacts, keys }] = await store.query(
      'SELECT (SELECT count() FROM contacts) AS contacts, (SELECT count() FROM contact_keys) AS keys',
    )
    // The lookup the server will run must find them: by email and by SHA-256.
    const sample = [contactEmail(0), contactEmail(count - 1)]
    const hash = (
      await store.query(`SELECT email_sha256 AS h FROM contacts WHERE id = {id:String}`, {
        id: sample[1],
      })
    )[0]?.h
    const found = await findContactsByKeys(store, [...sample, hash])
    if (found.size !== 3) throw new Error(`the contacts lookup found ${found.size} of 3 sample keys`)
    console.log(
      `contacts: ${Number(contacts).toLocaleString('en')} contacts, ${Number(keys).toLocaleString('en')} keys, ` +
        `inserted in ${((inserted - started) / 1000).toFixed(1)} s, merged in ${((performance.now() - inserted) / 1000).toFixed(1)} s`,
    )
  } finally {
    await store.close()
    lock.release()
  }
}

/** `--against-env K=V,K=V`: settings of the --against server only (e.g. INGEST_ACK=store, to compare modes of one build). */
function againstEnv(list) {
  return Object.fromEntries(
    (list ?? '')
      .split(',')
      .filter(Boolean)
      .map((pair) => pair.split('=')),
  )
}

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'vid-bench-ingest-'))
const storeTimingFile = path.join(dataDir, 'store-timing.json')
if (contactCount > 0) await fillContacts(dataDir, contactCount)
const serverEnv = {
  PORT: '0',
  HOST: '127.0.0.1',
  LOG_LEVEL: 'warn',
  TRUST_PROXY: '1',
  // The server's own batch bounds unless the command line sets them.
  ...(values['batch-ms'] ? { INGEST_BATCH_MS: values['batch-ms'] } : {}),
  ...(values['batch-rows'] ? { INGEST_BATCH_ROWS: values['batch-rows'] } : {}),
  // Identification never runs out of credits (1 per visitor identified as a person).
  ...(identifyMode ? { INITIAL_CREDITS: '100000000' } : {}),
}
const server = start(
  path.join(root, 'packages/server/dist/main.js'),
  ['serve'],
  {
    ...serverEnv,
    DATA_DIR: dataDir,
    ...(values['store-timing'] ? { STORE_TIMING_FILE: storeTimingFile } : {}),
  },
  [
    ...(values.profile ? ['--cpu-prof', '--cpu-prof-dir', values.profile] : []),
    ...(values['store-timing'] ? ['--import', path.join(import.meta.dirname, 'store-timing.mjs')] : []),
  ],
)
// The no-op baseline runs only without --identify (which compares the ingest server with itself).
const noop = identifyMode ? undefined : start(path.join(import.meta.dirname, 'noop-server.mjs'), [], {})
const [serverUrl, noopUrl] = await Promise.all([server.url, noop?.url])
const ingestTarget = { url: serverUrl, pid: server.child.pid }
const noopTarget = noop && { url: noopUrl, pid: noop.child.pid }
const { trackingKey } = JSON.parse(readFileSync(path.join(dataDir, 'bootstrap.json'), 'utf8'))
const against =
  values.against && !identifyMode
    ? await startAgainst(values.against, start, { ...serverEnv, ...againstEnv(values['against-env']) })
    : undefined

const pool = createVisitorPool(20_000)
let counter = 0
/** The requests of the server whose bootstrap tracking key is `key`. */
const requestsWith = (key) => () => {
  const n = counter++
  if (botShare > 0 && Math.random() < botShare) return { n, kind: 'bot', ...botHitRequest(pool, key, n) }
  return { n, ...hitRequest(pool, key, n) }
}
const request = requestsWith(trackingKey)
const againstRequest = against && requestsWith(against.trackingKey)
const acknowledged = new Set()
let botsAcknowledged = 0
const ack = (n, kind) => {
  if (kind === 'bot') botsAcknowledged += 1
  else acknowledged.add(n)
}

console.log(
  `ingest benchmark: ${rounds} rounds x ${duration} s, ${connections} connections, bot share ${botShare}, INGEST_BATCH_MS=${values['batch-ms'] ?? 'default'}, INGEST_BATCH_ROWS=${values['batch-rows'] ?? 'default'}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown'}), Node ${process.version}`,
)
console.log(
  `load average at start: ${os
    .loadavg()
    .map((load) => load.toFixed(2))
    .join(' ')}`,
)

/** Stops the servers (a clean stop flushes every buffered hit), then counts what ClickHouse holds. */
async function stopAndCount() {
  noop?.child.kill('SIGTERM')
  server.child.kill('SIGTERM')
  const [exitCode, signal] = await once(server.child, 'exit')
  if (exitCode !== 0) throw new Error(`server exited with ${exitCode ?? signal}:\n${server.output()}`)
  const store = createStore({ database: 'default', dataDir })
  const rows = await store.query(
    "SELECT path, count() AS n FROM page_views WHERE startsWith(path, '/b/') GROUP BY path",
  )
  const bots = await botCounts(store)
  const identification = identifyMode
    ? (
        await store.query(
          `SELECT
             (SELECT count() FROM visitors FINAL) AS visitors,
             (SELECT countIf(contact_id != '') FROM visitors FINAL) AS persons,
             (SELECT count() FROM events FINAL WHERE type = 'visitor.identified') AS events,
             (SELECT countIf(kind = 'charge') FROM credit_ledger FINAL) AS charges`,
        )
      )[0]
    : undefined
  await store.close()
  const stored = new Map(rows.map((row) => [Number(row.path.split('/')[2]), Number(row.n)]))
  const duplicated = [...stored.values()].filter((count) => count > 1).length
  const lostOf = (set) => {
    let lost = 0
    for (const n of set) if (stored.get(n) !== 1) lost += 1
    return lost
  }
  return { stored, duplicated, lostOf, identification, bots }
}

/** Bot hits stored as page views (must be none), and the filtered hits counted (none before dropped_hits). */
async function botCounts(store) {
  const [{ stored }] = await store.query(
    "SELECT count() AS stored FROM page_views WHERE startsWith(path, '/bot/')",
  )
  const [{ counted }] = await store.query(
    "SELECT count() AS counted FROM system.tables WHERE database = currentDatabase() AND name = 'dropped_hits'",
  )
  const filtered =
    Number(counted) > 0
      ? Number((await store.query('SELECT sum(hits) AS n FROM dropped_hits'))[0].n)
      : undefined
  return { stored: Number(stored), filtered }
}

const summary = (list) =>
  `median ${median(list.map((r) => r.rps)).toFixed(0)} req/s, p50 ${median(list.map((r) => r.p50))} ms, ` +
  `p99 ${median(list.map((r) => r.p99))} ms, ${median(list.map((r) => r.cpuPerRequestUs)).toFixed(0)} µs server CPU per request`
const finish = (ok) => {
  if (!values.keep) rmSync(dataDir, { recursive: true, force: true })
  else console.log(`data kept in ${dataDir}`)
  process.exit(ok ? 0 : 1)
}

if (!identifyMode) {
  // Warm-up (JIT, caches, first parts): acknowledged warm-up hits are checked like the others.
  await drive(noopTarget, request)
  await drive(ingestTarget, request, ack)
  if (against) await drive(against.target, againstRequest)

  const results = { noop: [], ingest: [], against: [] }
  for (let round = 1; round <= rounds; round++) {
    const base = await drive(noopTarget, request)
    // With --against, the two checkouts take turns going first.
    const other = against && round % 2 === 0 ? await drive(against.target, againstRequest) : undefined
    const ingest = await drive(ingestTarget, request, ack)
    const otherAfter = against && round % 2 === 1 ? await drive(against.target, againstRequest) : other
    results.noop.push(base)
    results.ingest.push(ingest)
    if (otherAfter) results.against.push(otherAfter)
    console.log(
      `round ${round}: no-op ${base.rps.toFixed(0)} req/s (p50 ${base.p50} ms, p99 ${base.p99} ms, ${base.cpuPerRequestUs.toFixed(0)} µs CPU/req) | ` +
        `/collect ${ingest.rps.toFixed(0)} req/s (p50 ${ingest.p50} ms, p99 ${ingest.p99} ms, ${ingest.cpuPerRequestUs.toFixed(0)} µs CPU/req, ${ingest.errors} non-2xx/errors)` +
        (otherAfter
          ? ` | --against ${otherAfter.rps.toFixed(0)} req/s (${otherAfter.cpuPerRequestUs.toFixed(0)} µs CPU/req, ${otherAfter.errors} non-2xx/errors)`
          : ''),
    )
  }
  await against?.stop()

  const { stored, duplicated, lostOf, bots } = await stopAndCount()
  const lost = lostOf(acknowledged)
  const noopRps = median(results.noop.map((r) => r.rps))
  const ingestRps = median(results.ingest.map((r) => r.rps))
  console.log('')
  console.log(`no-op Fastify route    ${summary(results.noop)}`)
  console.log(`POST /collect (ingest) ${summary(results.ingest)}`)
  if (against) {
    console.log(`--against ${against.checkout}: ${summary(results.against)}`)
    for (const line of comparisonLines(results.ingest, results.against, median)) console.log(line)
  }
  const roundRatios = results.ingest.map((r, i) => ((r.rps / results.noop[i].rps) * 100).toFixed(1))
  console.log(
    `ratio                 ${((ingestRps / noopRps) * 100).toFixed(1)} % of the no-op rate (target >= 25 %); ` +
      `per round ${roundRatios.join(' / ')} %`,
  )
  console.log(
    `loss check            ${acknowledged.size} acknowledged, ${stored.size} stored, ${lost} lost, ${duplicated} duplicated`,
  )
  if (botShare > 0) {
    console.log(
      `bot hits              ${botsAcknowledged} acknowledged, ${bots.stored} stored as page views, ` +
        `${bots.filtered ?? 'no dropped_hits table:'} counted as filtered`,
    )
  }
  const botsOk = bots.stored === 0 && (bots.filtered === undefined || bots.filtered >= botsAcknowledged)
  finish(lost === 0 && duplicated === 0 && botsOk)
}

// --identify: pure rounds (the default hits) against mix rounds (SHARE identify hits), same server.
const identifyTraffic = createIdentifyTraffic(pool, {
  contacts: contactCount,
  hashed: Number(values.hashed),
  unknown: Number(values.unknown),
  firstShare: Number(values['first-share']),
})
const mixRequest = () => {
  const n = counter++
  if (Math.random() < identifyShare) return { n, ...identifyTraffic.request(trackingKey, n) }
  return { n, kind: 'hit', ...hitRequest(pool, trackingKey, n) }
}
const acknowledgedMix = new Set()
let identifyAcked = 0
const ackMix = (n, kind) => {
  acknowledgedMix.add(n)
  if (kind !== 'hit') identifyAcked += 1
}

/** The server's identification counters (/metrics): person, first, dropped. */
async function identifications() {
  const text = await (await fetch(`${serverUrl}/metrics`)).text()
  const counts = { person: 0, first: 0, dropped: 0 }
  for (const [, outcome, value] of text.matchAll(
    /^vid_ingest_identifications_total\{outcome="(\w+)"\} (\d+)$/gm,
  ))
    counts[outcome] = Number(value)
  return counts
}
/** --store-timing: the server's Store call totals so far (store-timing.mjs writes them on SIGUSR2). */
let timingSequence = 0
async function storeTimings() {
  if (!values['store-timing']) return { totals: {}, engine: {} }
  timingSequence += 1
  server.child.kill('SIGUSR2')
  for (let wait = 0; wait < 100; wait++) {
    await new Promise((resolve) => setTimeout(resolve, 20))
    try {
      const { sequence, totals, engine } = JSON.parse(readFileSync(storeTimingFile, 'utf8'))
      if (sequence === timingSequence) return { totals, engine: engine ?? {} }
    } catch {}
  }
  throw new Error('the server wrote no store timings (--store-timing)')
}
const timingsOf = { pure: {}, mix: {} }
/** The engine's counters (system.events) over the measured rounds of each kind. */
const engineOf = { pure: {}, mix: {} }
const addTimings = (kind, before, after) => {
  for (const [label, { calls, ms }] of Object.entries(after.totals)) {
    timingsOf[kind][label] ??= { calls: 0, ms: 0 }
    const entry = timingsOf[kind][label]
    entry.calls += calls - (before.totals[label]?.calls ?? 0)
    entry.ms += ms - (before.totals[label]?.ms ?? 0)
  }
  for (const [counter, value] of Object.entries(after.engine)) {
    engineOf[kind][counter] = (engineOf[kind][counter] ?? 0) + value - (before.engine[counter] ?? value)
  }
}
/**
 * Ends a round the same way for both kinds: once the server has identified every identify hit it
 * acknowledged (the mix's identification follows the acknowledgement), and then SETTLE_MS more,
 * so each round's background work (identification, merges) is counted in its own CPU per request
 * and neither kind starts on the other's leftovers. Returns the drain's bytes and time.
 */
const settleMs = 2000
async function settle() {
  const queuedBytes = await identifyQueueBytes()
  const drainStarted = performance.now()
  while ((await identifyQueueBytes()) > 0) await new Promise((resolve) => setTimeout(resolve, 50))
  const drainMs = performance.now() - drainStarted
  await new Promise((resolve) => setTimeout(resolve, settleMs))
  return { queuedBytes, drainMs }
}
/**
 * A round's CPU: the server's (the whole process, and by thread) from now until `perRequest`, and
 * the load generator's own while it drives (until `driven`), each per acknowledged request.
 */
function cpuMeter(pid) {
  const server = cpuMs(pid)
  const threads = threadCpuMs(pid)
  const generator = process.cpuUsage()
  let generatorUs = 0
  return {
    driven() {
      const used = process.cpuUsage(generator)
      generatorUs = used.user + used.system
    },
    perRequest(ok) {
      return {
        cpuPerRequestUs: ((cpuMs(pid) - server) * 1000) / Math.max(1, ok),
        threadUs: perUnitUs(threads, threadCpuMs(pid), ok),
        benchUs: generatorUs / Math.max(1, ok),
      }
    },
  }
}
const drivePure = async (timed) => {
  const timingsBefore = timed ? await storeTimings() : undefined
  const cpu = cpuMeter(ingestTarget.pid)
  const result = await drive(ingestTarget, request, ack)
  cpu.driven()
  await settle()
  if (timed) addTimings('pure', timingsBefore, await storeTimings())
  return { ...result, ...cpu.perRequest(result.ok) }
}
/** Bytes of identify hits the server has acknowledged and not identified yet (its queue). */
async function identifyQueueBytes() {
  const text = await (await fetch(`${serverUrl}/metrics`)).text()
  return Number(/^vid_ingest_identify_queue_bytes (\d+)$/m.exec(text)?.[1] ?? Number.NaN)
}
const driveMix = async (timed) => {
  const before = await identifications()
  const timingsBefore = timed ? await storeTimings() : undefined
  const ackedBefore = identifyAcked
  const cpu = cpuMeter(ingestTarget.pid)
  const result = await drive(ingestTarget, mixRequest, ackMix)
  cpu.driven()
  const { queuedBytes, drainMs } = await settle()
  if (timed) addTimings('mix', timingsBefore, await storeTimings())
  const after = await identifications()
  return {
    ...result,
    ...cpu.perRequest(result.ok),
    queuedBytes,
    drainMs,
    identifyAcked: identifyAcked - ackedBefore,
    person: after.person - before.person,
    first: after.first - before.first,
    dropped: after.dropped - before.dropped,
  }
}
const refusedText = (refused) =>
  Object.entries(refused)
    .map(([key, count]) => `${count} ${key}`)
    .join(', ') || 'none'

console.log(
  `identify mix: ${identifyShare * 100} % identify hits from ${identifyTraffic.loggedIn} logged-in visitors of ${pool.length}, ` +
    `${Number(values.hashed) * 100} % of emails hashed, ${Number(values.unknown) * 100} % unknown, ` +
    `first-identification share ${values['first-share']}, ${contactCount.toLocaleString('en')} contacts`,
)
// Warm-up: the pure hits once, then the mix until its logged-in visitors are identified (the
// steady state: first identifications down to about --first-share of the identify hits), at most
// 12 rounds.
const warmPure = await drive(ingestTarget, request, ack)
console.log(`warm-up: pure ${warmPure.rps.toFixed(0)} req/s`)
for (let warm = 1; warm <= 12; warm++) {
  const warmMix = await driveMix()
  console.log(
    `warm-up: mix ${warmMix.rps.toFixed(0)} req/s, ${warmMix.identifyAcked} identify hits acknowledged, ` +
      `${warmMix.first} first identifications, ${warmMix.person} persons`,
  )
  if (warmMix.first <= 2 * Number(values['first-share']) * warmMix.identifyAcked + 10) break
}

const results = { pure: [], mix: [] }
for (let round = 1; round <= rounds; round++) {
  // Alternate which goes first, so neither always follows the other's background merges.
  let pure
  let mix
  if (round % 2 === 1) {
    pure = await drivePure(true)
    mix = await driveMix(true)
  } else {
    mix = await driveMix(true)
    pure = await drivePure(true)
  }
  results.pure.push(pure)
  results.mix.push(mix)
  console.log(
    `round ${round}${round % 2 === 1 ? ' (pure first)' : ' (mix first)'}: pure ${pure.rps.toFixed(0)} req/s (p50 ${pure.p50} ms, p99 ${pure.p99} ms, ${pure.cpuPerRequestUs.toFixed(0)} µs CPU/req) | ` +
      `mix ${mix.rps.toFixed(0)} req/s (p50 ${mix.p50} ms, p99 ${mix.p99} ms, ${mix.cpuPerRequestUs.toFixed(0)} µs CPU/req; ` +
      `${mix.identifyAcked} identify hits acknowledged, ${mix.first} first identifications, ${mix.person} persons, ${mix.dropped} dropped, ` +
      `${(mix.queuedBytes / 1024).toFixed(0)} KB left to identify at the end, identified ${mix.drainMs.toFixed(0)} ms later; ` +
      `not 202: ${refusedText(mix.refused)}) | ratio ${((mix.rps / pure.rps) * 100).toFixed(1)} %`,
  )
  console.log(
    `  CPU per request by thread: pure ${threadGroups.map((g) => `${g} ${pure.threadUs[g].toFixed(0)}`).join(', ')} | mix ${threadGroups.map((g) => `${g} ${mix.threadUs[g].toFixed(0)}`).join(', ')} µs`,
  )
}
console.log(
  `load average at end: ${os
    .loadavg()
    .map((load) => load.toFixed(2))
    .join(' ')}`,
)

const metricsTotal = await identifications()
const { stored, duplicated, lostOf, identification } = await stopAndCount()
const lostPure = lostOf(acknowledged)
const lostMix = lostOf(acknowledgedMix)
const pureRps = median(results.pure.map((r) => r.rps))
const mixRps = median(results.mix.map((r) => r.rps))
const roundRatios = results.mix.map((r, i) => ((r.rps / results.pure[i].rps) * 100).toFixed(1))
console.log('')
console.log(`pure (no identify hits)      ${summary(results.pure)}`)
console.log(`mix (${identifyShare * 100} % identify hits) ${summary(results.mix)}`)
console.log(
  `ratio                        ${((mixRps / pureRps) * 100).toFixed(1)} % of the pure rate (medians; target >= 90 %); ` +
    `per round ${roundRatios.join(' / ')} %, median of the rounds ${median(roundRatios.map(Number)).toFixed(1)} %`,
)
// Where the CPU of a request went, by thread (thread-cpu.mjs), and the load generator's own.
const threadMedians = (list) =>
  threadGroups.map((group) => `${group} ${median(list.map((r) => r.threadUs[group])).toFixed(0)}`).join(', ')
console.log(
  `CPU per request by thread     pure: ${threadMedians(results.pure)} µs; mix: ${threadMedians(results.mix)} µs (medians of rounds); ` +
    `the load generator: pure ${median(results.pure.map((r) => r.benchUs)).toFixed(0)}, mix ${median(results.mix.map((r) => r.benchUs)).toFixed(0)} µs`,
)
console.log(
  `identification lag           the mix's identify hits all identified ${median(results.mix.map((r) => r.drainMs)).toFixed(0)} ms ` +
    `after its round ended (median; IDENTIFY_BATCH_MS ${process.env.IDENTIFY_BATCH_MS ?? '3000, the default'}); CPU per request counts each round's work until ${settleMs} ms after that`,
)
console.log(
  `loss check                   pure: ${acknowledged.size} acknowledged, ${lostPure} lost; ` +
    `mix: ${acknowledgedMix.size} acknowledged, ${lostMix} lost; ${stored.size} stored, ${duplicated} duplicated`,
)
console.log(
  `identification               /metrics: ${metricsTotal.first} first identifications, ${metricsTotal.person} persons, ` +
    `${metricsTotal.dropped} dropped; store: ${identification.visitors} visitor rows (${identification.persons} persons), ` +
    `${identification.events} visitor.identified events, ${identification.charges} credit charges`,
)
if (values['store-timing']) {
  // Per second of measured rounds: calls, and seconds spent in calls (overlapping calls add up).
  const seconds = rounds * duration
  console.log('')
  console.log(
    'server Store calls (--store-timing)          pure: calls/s  ms/call  in-call s/s | mix: calls/s  ms/call  in-call s/s',
  )
  const labels = [...new Set([...Object.keys(timingsOf.pure), ...Object.keys(timingsOf.mix)])]
    .filter((label) => timingsOf.pure[label]?.calls || timingsOf.mix[label]?.calls)
    .sort((a, b) => (timingsOf.mix[b]?.ms ?? 0) - (timingsOf.mix[a]?.ms ?? 0))
  const cells = (entry) =>
    entry?.calls
      ? `${(entry.calls / seconds).toFixed(1).padStart(13)} ${(entry.ms / entry.calls).toFixed(1).padStart(8)} ${(entry.ms / 1000 / seconds).toFixed(2).padStart(12)}`
      : `${'-'.padStart(13)} ${''.padStart(8)} ${''.padStart(12)}`
  for (const label of labels) {
    console.log(`  ${label.padEnd(42)} ${cells(timingsOf.pure[label])} | ${cells(timingsOf.mix[label])}`)
  }
  // What the engine did per second, whoever asked (merges included): work, not waiting.
  console.log('')
  console.log(
    `${'server engine counters (system.events) per second'.padEnd(54)} ${'pure'.padStart(12)} | ${'mix'.padStart(12)}`,
  )
  for (const counter of Object.keys(engineOf.mix)) {
    const perSecond = (kind) =>
      Math.round((engineOf[kind][counter] ?? 0) / seconds)
        .toLocaleString('en-US')
        .padStart(12)
    console.log(`  ${counter.padEnd(52)} ${perSecond('pure')} | ${perSecond('mix')}`)
  }
}
finish(lostPure === 0 && lostMix === 0 && duplicated === 0)
