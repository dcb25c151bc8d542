#!/usr/bin/env node
// Ingest benchmark: POST /collect on the all-in-one server (embedded ClickHouse) against a no-op
// Fastify route measured in the same run, then a count in ClickHouse proving zero loss.
//
//   npm run build && node bench/ingest/ingest.bench.mjs [--rounds 5] [--duration 10] [--connections 2000]
//     [--batch-ms MS] [--batch-rows N] [--profile DIR]
//
// --profile writes a V8 CPU profile of the ingest server to DIR (open it in Chrome DevTools).
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
import { createStore } from '@visitor-id/core'
import autocannon from 'autocannon'
import { createVisitorPool, hitRequest } from './traffic.mjs'

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
  },
})
const rounds = Number(values.rounds)
const duration = Number(values.duration)
const connections = Number(values.connections)

function start(script, args, env, nodeArgs = []) {
  const child = spawn(process.execPath, [...nodeArgs, script, ...args], {
    cwd: root,
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
          return { ...req, headers: next.headers, body: next.body }
        },
        onResponse: (status, _body, context) => {
          if (status === 202) onAck?.(context.n)
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
  }
}

const median = (list) => {
  const sorted = [...list].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'vid-bench-ingest-'))
const server = start(
  path.join(root, 'packages/server/dist/main.js'),
  ['serve'],
  {
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    TRUST_PROXY: '1',
    // The server's own batch bounds unless the command line sets them.
    ...(values['batch-ms'] ? { INGEST_BATCH_MS: values['batch-ms'] } : {}),
    ...(values['batch-rows'] ? { INGEST_BATCH_ROWS: values['batch-rows'] } : {}),
  },
  values.profile ? ['--cpu-prof', '--cpu-prof-dir', values.profile] : [],
)
const noop = start(path.join(import.meta.dirname, 'noop-server.mjs'), [], {})
const [serverUrl, noopUrl] = await Promise.all([server.url, noop.url])
const ingestTarget = { url: serverUrl, pid: server.child.pid }
const noopTarget = { url: noopUrl, pid: noop.child.pid }
const { trackingKey } = JSON.parse(readFileSync(path.join(dataDir, 'bootstrap.json'), 'utf8'))

const pool = createVisitorPool(20_000)
let counter = 0
const request = () => {
  const n = counter++
  return { n, ...hitRequest(pool, trackingKey, n) }
}
const acknowledged = new Set()
const ack = (n) => acknowledged.add(n)

console.log(
  `ingest benchmark: ${rounds} rounds x ${duration} s, ${connections} connections, INGEST_BATCH_MS=${values['batch-ms'] ?? 'default'}, INGEST_BATCH_ROWS=${values['batch-rows'] ?? 'default'}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown'}), Node ${process.version}`,
)
// Warm-up (JIT, caches, first parts): acknowledged warm-up hits are checked like the others.
await drive(noopTarget, request)
await drive(ingestTarget, request, ack)

const results = { noop: [], ingest: [] }
for (let round = 1; round <= rounds; round++) {
  const base = await drive(noopTarget, request)
  const ingest = await drive(ingestTarget, request, ack)
  results.noop.push(base)
  results.ingest.push(ingest)
  console.log(
    `round ${round}: no-op ${base.rps.toFixed(0)} req/s (p50 ${base.p50} ms, p99 ${base.p99} ms, ${base.cpuPerRequestUs.toFixed(0)} µs CPU/req) | ` +
      `/collect ${ingest.rps.toFixed(0)} req/s (p50 ${ingest.p50} ms, p99 ${ingest.p99} ms, ${ingest.cpuPerRequestUs.toFixed(0)} µs CPU/req, ${ingest.errors} non-2xx/errors)`,
  )
}

// A clean stop flushes every buffered hit; then count what ClickHouse holds.
noop.child.kill('SIGTERM')
server.child.kill('SIGTERM')
const [exitCode] = await once(server.child, 'exit')
if (exitCode !== 0) throw new Error(`server exited with ${exitCode}:\n${server.output()}`)
const store = createStore({ database: 'default', dataDir })
const rows = await store.query(
  "SELECT path, count() AS n FROM page_views WHERE startsWith(path, '/b/') GROUP BY path",
)
await store.close()
const stored = new Map(rows.map((row) => [Number(row.path.split('/')[2]), Number(row.n)]))
let lost = 0
for (const n of acknowledged) if (stored.get(n) !== 1) lost += 1
const duplicated = [...stored.values()].filter((count) => count > 1).length

const noopRps = median(results.noop.map((r) => r.rps))
const ingestRps = median(results.ingest.map((r) => r.rps))
console.log('')
const summary = (list) =>
  `median ${median(list.map((r) => r.rps)).toFixed(0)} req/s, p50 ${median(list.map((r) => r.p50))} ms, ` +
  `p99 ${median(list.map((r) => r.p99))} ms, ${median(list.map((r) => r.cpuPerRequestUs)).toFixed(0)} µs server CPU per request`
console.log(`no-op Fastify route    ${summary(results.noop)}`)
console.log(`POST /collect (ingest) ${summary(results.ingest)}`)
const roundRatios = results.ingest.map((r, i) => ((r.rps / results.noop[i].rps) * 100).toFixed(1))
console.log(
  `ratio                 ${((ingestRps / noopRps) * 100).toFixed(1)} % of the no-op rate (target >= 25 %); ` +
    `per round ${roundRatios.join(' / ')} %`,
)
console.log(
  `loss check            ${acknowledged.size} acknowledged, ${stored.size} stored, ${lost} lost, ${duplicated} duplicated`,
)
if (!values.keep) rmSync(dataDir, { recursive: true, force: true })
else console.log(`data kept in ${dataDir}`)
process.exit(lost === 0 && duplicated === 0 ? 0 : 1)
