#!/usr/bin/env node
// Benchmark: authenticated GET /api/v1/visitor-tracking/{org}/visitors/{id} on a store holding one
// million page views, next to two baselines measured in the same run: the authenticated no-op
// GET /api/v1/ping, and the store's own floor, parameterized point reads of a visitor row per second
// through the same Store at the same concurrency (no HTTP).
//
//   npm run build && node bench/api/visitor-profile.bench.mjs [--rounds 5] [--seconds 5] [--concurrency 16]
//     [--against DIR]
//
// The store is filled in-engine (INSERT ... SELECT FROM numbers(1000000)) and closed. Each round then
// measures the floor in this process (with the store's default sessions, with one session, and through
// the engine's own parameter binder for reference), closes the store, and runs the built server as a
// child process on it while this process drives the load over keep-alive HTTP.
// Figures go to stdout and to bench/api/RESULTS.md.
//
// --against DIR: each round also serves the profile from the server built in another checkout (e.g.
// the commit before a change) on the same data directory, after this checkout's, and reports this
// checkout's profile rate over the other's per round.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { createClient } from '@clickhouse/client'
import { bootstrapIfEmpty } from '@visitor-id/core/organizations'
import { createRepositories } from '@visitor-id/core/repositories'
import { createStore, lockDataDir, migrate } from '@visitor-id/core/store'
import { createChdbConnection } from 'chdb/connection'

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    seconds: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '16' },
    'page-views': { type: 'string', default: '1000000' },
    out: { type: 'string', default: path.join(import.meta.dirname, 'RESULTS.md') },
    against: { type: 'string' },
  },
})
const rounds = Number(values.rounds)
const seconds = Number(values.seconds)
const concurrency = Number(values.concurrency)
const pageViews = Number(values['page-views'])
const visitors = 50_000
const repoRoot = path.resolve(import.meta.dirname, '..', '..')
const againstDir = values.against && path.resolve(values.against)

const log = (line) => console.log(`[bench] ${line}`)
const visitorUuid = (n) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`

/** Fills a fresh data directory: bootstrap organization and `pageViews` page views. */
async function prepare(dataDir) {
  const lock = lockDataDir(dataDir)
  // The fill is one statement of a million rows through every view on page_views: it takes more
  // than a server's default statement limit (STORE_MEMORY_LIMIT / 2), and a benchmark's host has it.
  const store = createStore({ database: 'default', dataDir, memoryLimit: 8 * 1024 ** 3 })
  try {
    await migrate(store)
    const result = await bootstrapIfEmpty(createRepositories(store), dataDir)
    if (!result.created) throw new Error('bootstrap did not run on the fresh data directory')
    const { organizationId } = result.bootstrap
    const started = Date.now()
    // 50k visitors, two sessions each (~100k sessions), 20 page views per visitor over 30 days.
    await store.command(
      `INSERT INTO page_views (event_id, organization_id, visitor_id, session_id, type, timestamp, received_at,
         url, path, hostname, title, referrer, utm_source, tracking_params, screen_width, screen_height, language,
         ip, country, region, city, isp, asn, connection_type, user_agent, device_type, browser, os)
       SELECT
         generateUUIDv4(),
         {org:UUID},
         toUUID(concat('00000000-0000-4000-8000-', leftPad(toString(number % {visitors:UInt32}), 12, '0'))),
         toUUID(concat('00000000-0000-4000-9000-', leftPad(toString((number % {visitors:UInt32}) * 2 + intDiv(number, {visitors:UInt32}) % 2), 12, '0'))),
         'pageview',
         now64(3) - toIntervalSecond(intDiv(number, {visitors:UInt32}) * 3600 + number % 997),
         now64(3),
         concat('https://shop.example/p/', toString(number % 500), '?utm_source=news'),
         concat('/p/', toString(number % 500)),
         'shop.example',
         concat('Product ', toString(number % 500)),
         'https://www.google.com/',
         'news',
         map('gclid', toString(number % 1000)),
         1920, 1080, 'en-US',
         concat('203.0.', toString(number % 250), '.', toString(number % 200)),
         'DE', 'Berlin', 'Berlin', 'Deutsche Telekom AG', 3320, 'isp',
         'Mozilla/5.0 (X11; Linux x86_64) Chrome/126.0', 'desktop', 'Chrome', 'Linux'
       FROM numbers({n:UInt64})`,
      { org: organizationId, visitors, n: pageViews },
    )
    // Half the visitors are identified: they have a visitor row (the other half only sessions).
    await store.command(
      `INSERT INTO visitors (id, organization_id, email, first_name, job_title, identified_at, first_seen_at,
         last_seen_at, created_at, updated_at, version)
       SELECT toUUID(concat('00000000-0000-4000-8000-', leftPad(toString(number * 2), 12, '0'))), {org:UUID},
         concat('person', toString(number), '@example.com'), 'Ada', 'CTO', now64(3), now64(3) - toIntervalDay(30),
         now64(3), now64(3), now64(3), 1
       FROM numbers({n:UInt64})`,
      { org: organizationId, n: visitors / 2 },
    )
    // A store that has run for a while has its parts merged by background merges; merge now, so
    // every round reads the steady state rather than however far the merges got.
    for (const table of ['page_views', 'sessions', 'visitors'])
      await store.command(`OPTIMIZE TABLE ${table} FINAL`)
    const [{ n }] = await store.query('SELECT count() AS n FROM page_views')
    const [{ s }] = await store.query(
      "SELECT uniqExact(session_id) AS s FROM sessions WHERE session_id != toUUID('00000000-0000-0000-0000-000000000000')",
    )
    log(`inserted ${n} page views in ${((Date.now() - started) / 1000).toFixed(1)} s (${s} sessions)`)
    return { ...result.bootstrap, pageViewCount: n, sessionCount: s }
  } finally {
    await store.close()
    lock.release()
  }
}

/** Starts `visitor-id serve --role api` on the data directory and resolves with its URL. */
async function startServer(dataDir, checkout = repoRoot) {
  const child = spawn(
    process.execPath,
    [path.join(checkout, 'packages/server/dist/main.js'), 'serve', '--role', 'api'],
    {
      cwd: checkout,
      env: {
        ...process.env,
        DATA_DIR: dataDir,
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        // The benchmark measures serving, not the limiter's refusals.
        API_RATE_LIMIT: '1000000000',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  )
  let output = ''
  child.stdout.on('data', (chunk) => (output += chunk))
  child.stderr.on('data', (chunk) => (output += chunk))
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server not ready:\n${output}`)), 60_000)
    child.stdout.on('data', () => {
      const match = /running at (http:\/\/\S+)/.exec(output)
      if (match) {
        clearTimeout(timer)
        resolve(match[1])
      }
    })
    child.once('exit', (code) => reject(new Error(`server exited with ${code}:\n${output}`)))
  })
  return { child, url, output: () => output }
}

/** Keeps `concurrency` requests in flight for `ms`; returns throughput and latency percentiles. */
async function load(base, pathOf, apiKey, ms, connections = concurrency) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections })
  const latencies = []
  let errors = 0
  const deadline = performance.now() + ms
  const send = (urlPath) =>
    new Promise((resolve) => {
      const started = performance.now()
      const request = http.get(
        new URL(urlPath, base),
        { agent, headers: { 'x-api-key': apiKey } },
        (response) => {
          response.resume()
          response.on('end', () => {
            if (response.statusCode !== 200) errors += 1
            latencies.push(performance.now() - started)
            resolve()
          })
        },
      )
      request.on('error', () => {
        errors += 1
        resolve()
      })
    })
  const worker = async () => {
    while (performance.now() < deadline) await send(pathOf())
  }
  const started = performance.now()
  await Promise.all(Array.from({ length: connections }, worker))
  const elapsed = (performance.now() - started) / 1000
  agent.destroy()
  latencies.sort((a, b) => a - b)
  const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? Number.NaN
  return { rps: latencies.length / elapsed, p50: at(0.5), p99: at(0.99), requests: latencies.length, errors }
}

const pointReadSql =
  'SELECT * FROM visitors FINAL WHERE organization_id = {org:UUID} AND id = {id:UUID} LIMIT 1'
const randomVisitor = () => visitorUuid(Math.floor(Math.random() * visitors))

/** Keeps `concurrency` point reads in flight for `ms` through `read`; returns reads per second and latencies. */
async function loadReads(read, ms, connections = concurrency) {
  const latencies = []
  const deadline = performance.now() + ms
  const worker = async () => {
    while (performance.now() < deadline) {
      const started = performance.now()
      await read(randomVisitor())
      latencies.push(performance.now() - started)
    }
  }
  const started = performance.now()
  await Promise.all(Array.from({ length: connections }, worker))
  const elapsed = (performance.now() - started) / 1000
  latencies.sort((a, b) => a - b)
  const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? Number.NaN
  return {
    rps: latencies.length / elapsed,
    p50: at(0.5),
    p99: at(0.99),
    requests: latencies.length,
    errors: 0,
  }
}

/**
 * The store's floors, in this process while no server holds the data directory: point reads through
 * the Store (its default sessions, values bound as literals), through a Store of one session, and
 * through the engine's own parameter binder (4 connections, values sent as query parameters).
 */
async function measureFloors(dataDir, organizationId, ms) {
  const lock = lockDataDir(dataDir)
  const store = createStore({ database: 'default', dataDir })
  const single = createStore({ database: 'default', dataDir, sessions: 1 })
  const engine = Array.from({ length: 4 }, () =>
    createClient({ connection: createChdbConnection({ path: path.join(dataDir, 'clickhouse') }) }),
  )
  let next = 0
  const viaStore = (s) => (id) => s.query(pointReadSql, { org: organizationId, id })
  const viaEngineBinder = async (id) => {
    const client = engine[next++ % engine.length]
    const result = await client.query({
      query: pointReadSql,
      query_params: { org: organizationId, id },
      format: 'JSONEachRow',
    })
    return result.json()
  }
  try {
    // Warm-up, and a check that the read finds an identified visitor.
    const [row] = await store.query(pointReadSql, { org: organizationId, id: visitorUuid(0) })
    if (!row?.email) throw new Error('the point read found no visitor row')
    await loadReads(viaStore(store), 500)
    return {
      floor: await loadReads(viaStore(store), ms),
      floorOneSession: await loadReads(viaStore(single), ms),
      engineBinder: await loadReads(viaEngineBinder, ms),
    }
  } finally {
    await Promise.all([store.close(), single.close(), ...engine.map((client) => client.close())])
    lock.release()
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(s.length / 2)
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2
}

async function stopServer(server) {
  if (server && server.child.exitCode === null) {
    server.child.kill('SIGTERM')
    await once(server.child, 'exit')
  }
}

const fmt = (r) =>
  `${r.rps.toFixed(0).padStart(6)} req/s  p50 ${r.p50.toFixed(1)} ms  p99 ${r.p99.toFixed(1)} ms  (${r.requests} requests, ${r.errors} errors)`

async function main() {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'vid-bench-api-'))
  const runStarted = Date.now()
  let server
  try {
    log(`preparing ${pageViews} page views in ${dataDir}`)
    const boot = await prepare(dataDir)
    const profilePath = () => `/api/v1/visitor-tracking/${boot.organizationId}/visitors/${randomVisitor()}`
    const pingPath = () => '/api/v1/ping'
    const results = { floor: [], floorOneSession: [], engineBinder: [], ping: [], profile: [], against: [] }
    let sequential
    for (let round = 1; round <= rounds; round++) {
      // The floors need the data directory, so they run while no server holds it; then the server.
      const floors = await measureFloors(dataDir, boot.organizationId, seconds * 1000)
      for (const [name, r] of Object.entries(floors)) {
        results[name].push(r)
        log(`round ${round} ${name.padEnd(15)} ${fmt(r)}`)
      }
      server = await startServer(dataDir)
      if (round === 1) {
        // A visitor profile must be a real one: check the shape once before measuring.
        const sample = await fetch(new URL(profilePath(), server.url), {
          headers: { 'x-api-key': boot.apiKey },
        })
        const profile = await sample.json()
        if (
          sample.status !== 200 ||
          profile.sessions.length !== 2 ||
          profile.pageViews.length !== pageViews / visitors
        ) {
          throw new Error(`unexpected profile (${sample.status}): ${JSON.stringify(profile).slice(0, 300)}`)
        }
        log(
          `server at ${server.url}; profile: ${profile.sessions.length} sessions, ${profile.pageViews.length} page views`,
        )
      }
      await load(server.url, pingPath, boot.apiKey, 1000) // warm-up: JIT, key cache, connections
      await load(server.url, profilePath, boot.apiKey, 1000)
      for (const [name, pathOf] of [
        ['ping', pingPath],
        ['profile', profilePath],
      ]) {
        const r = await load(server.url, pathOf, boot.apiKey, seconds * 1000)
        results[name].push(r)
        log(`round ${round} ${name.padEnd(15)} ${fmt(r)}`)
        if (r.errors > 0) throw new Error(`${name}: ${r.errors} failed requests`)
      }
      if (round === rounds) {
        // Unqueued latency: one request at a time.
        sequential = {}
        for (const [name, pathOf] of [
          ['ping', pingPath],
          ['profile', profilePath],
        ]) {
          sequential[name] = await load(server.url, pathOf, boot.apiKey, seconds * 1000, 1)
          log(
            `sequential ${name.padEnd(7)} p50 ${sequential[name].p50.toFixed(1)} ms  p99 ${sequential[name].p99.toFixed(1)} ms`,
          )
        }
      }
      await stopServer(server)
      if (againstDir) {
        // The other checkout's server on the same data directory, warmed up as this one was.
        server = await startServer(dataDir, againstDir)
        await load(server.url, profilePath, boot.apiKey, 1000)
        const r = await load(server.url, profilePath, boot.apiKey, seconds * 1000)
        results.against.push(r)
        log(`round ${round} ${'against'.padEnd(15)} ${fmt(r)}`)
        if (r.errors > 0) throw new Error(`against: ${r.errors} failed requests`)
        await stopServer(server)
      }
    }
    if (!againstDir) delete results.against
    const summary = Object.fromEntries(
      Object.entries(results).map(([name, rs]) => [
        name,
        {
          rps: median(rs.map((r) => r.rps)),
          p50: median(rs.map((r) => r.p50)),
          p99: median(rs.map((r) => r.p99)),
        },
      ]),
    )
    const ratio = summary.profile.rps / summary.floor.rps
    const roundRatios = results.profile.map((p, i) => p.rps / results.floor[i].rps)
    log(
      `median profile ${summary.profile.rps.toFixed(0)} req/s; floor ${summary.floor.rps.toFixed(0)} reads/s; ` +
        `ratio profile/floor ${ratio.toFixed(2)} (rounds ${roundRatios.map((r) => r.toFixed(2)).join(' / ')}); ` +
        `ping ${summary.ping.rps.toFixed(0)} req/s` +
        (summary.against
          ? `; --against ${summary.against.rps.toFixed(0)} req/s p99 ${summary.against.p99.toFixed(1)} ms`
          : ''),
    )
    writeResults(values.out, {
      boot,
      results,
      sequential,
      summary,
      ratio,
      roundRatios,
      runSeconds: (Date.now() - runStarted) / 1000,
    })
    log(`wrote ${path.relative(repoRoot, values.out)}`)
  } finally {
    await stopServer(server)
    rmSync(dataDir, { recursive: true, force: true })
  }
}

function writeResults(file, { boot, results, sequential, summary, ratio, roundRatios, runSeconds }) {
  const row = (name, r, unit = 'req/s') =>
    `| ${name} | ${r.rps.toFixed(0)} ${unit} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} |`
  const roundRows = results.profile
    .map((p, i) => {
      const f = results.floor[i]
      return `| ${i + 1} | ${f.rps.toFixed(0)} | ${results.floorOneSession[i].rps.toFixed(0)} | ${results.engineBinder[i].rps.toFixed(0)} | ${results.ping[i].rps.toFixed(0)} | ${p.rps.toFixed(0)} | ${p.p99.toFixed(1)} | ${roundRatios[i].toFixed(2)} |`
    })
    .join('\n')
  const cpu = os.cpus()
  const text = `# API benchmark: visitor profile

Generated by \`node bench/api/visitor-profile.bench.mjs\` on ${new Date().toISOString().slice(0, 10)}; rerun it to
refresh this file (see "Reading the figures" below for what the numbers mean).

- Store: embedded ClickHouse (chdb), ${boot.pageViewCount.toLocaleString('en')} page views of one organization (parts merged, as on a store that has run for a while),
  ${visitors.toLocaleString('en')} visitors (half of them identified, with a visitor row), ${boot.sessionCount.toLocaleString('en')} sessions
  (20 page views and 2 sessions per visitor).
- Server: \`visitor-id serve --role api\` as a child process; the load generator (this script) runs on the same machine.
- Load: ${concurrency} concurrent requests, ${rounds} rounds of ${seconds} s per measure. Each round measures the store's
  floors in this process, then starts the server and measures the no-op and the profile (after a 1 s warm-up each).
  Every request is authenticated with the bootstrap admin key (rate limit raised so it never refuses); each
  profile request and each point read asks for a random one of the ${visitors.toLocaleString('en')} visitors.
- Floor: \`${pointReadSql}\` through \`Store.query\` at the same concurrency, no HTTP.
- Machine: ${cpu.length} x ${cpu[0]?.model ?? 'unknown CPU'}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GB, Node ${process.version}, ${os.platform()} ${os.release()}.
- Whole run: ${runSeconds.toFixed(0)} s.

## Medians over the rounds

| measure | throughput | p50 ms | p99 ms |
|---|---|---|---|
${row('store floor: point reads through the Store (4 sessions, literal binding)', summary.floor, 'reads/s')}
${row('point reads through a Store of 1 session', summary.floorOneSession, 'reads/s')}
${row("point reads through the engine's parameter binder (4 connections)", summary.engineBinder, 'reads/s')}
${row('GET /api/v1/ping (authenticated no-op)', summary.ping)}
${row('GET /api/v1/visitor-tracking/{org}/visitors/{id}', summary.profile)}${
  summary.against
    ? `\n${row(`the same from --against ${path.basename(againstDir)} (another checkout's server, same store)`, summary.against)}`
    : ''
}

**Profile throughput / store floor: ${ratio.toFixed(2)}** (per round: ${roundRatios.map((r) => r.toFixed(2)).join(', ')}).
Profile / no-op: ${(summary.profile.rps / summary.ping.rps).toFixed(3)}.${
    summary.against
      ? `\nProfile / --against's profile: ${(summary.profile.rps / summary.against.rps).toFixed(2)} (per round: ${results.profile
          .map((p, i) => (p.rps / results.against[i].rps).toFixed(2))
          .join(', ')}); its profile / floor ${(summary.against.rps / summary.floor.rps).toFixed(2)}.`
      : ''
  }

One request at a time (no queueing), ${seconds} s per route, last round:

| route | p50 ms | p99 ms |
|---|---|---|
| ping | ${sequential.ping.p50.toFixed(1)} | ${sequential.ping.p99.toFixed(1)} |
| visitor profile | ${sequential.profile.p50.toFixed(1)} | ${sequential.profile.p99.toFixed(1)} |

## Rounds

| round | floor reads/s | 1 session reads/s | engine binder reads/s | ping req/s | profile req/s | profile p99 ms | profile / floor |
|---|---|---|---|---|---|---|---|
${roundRows}
`
  writeFileSync(file, `${text}\n${readingTheFigures}`)
}

// Kept by hand: what the figures mean and the decisions they support (rewritten with each run above).
const readingTheFigures = readFileSync(path.join(import.meta.dirname, 'READING.md'), 'utf8')

main().catch((error) => {
  console.error('[bench] failed:', error)
  process.exit(1)
})
