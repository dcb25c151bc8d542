// The load side of the analytics load benchmark: an open loop of API requests on a fixed schedule
// (each timed from the moment it was due, so time spent waiting for a free connection counts), and
// pixel hits at a fixed rate beside it (bench/ingest/traffic.mjs).
import { readFileSync } from 'node:fs'
import http from 'node:http'
import { createVisitorPool, hitRequest } from '../ingest/traffic.mjs'

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** One GET on `agent`; resolves with the status once the last byte of the body has arrived. */
function get(agent, base, urlPath, headers) {
  return new Promise((resolve) => {
    const request = http.get(new URL(urlPath, base), { agent, headers }, (response) => {
      response.on('data', () => {})
      // How the statistics answer cache served it (hit, shared, miss, off), when it went through it.
      response.on('end', () =>
        resolve({ status: response.statusCode, cache: response.headers['x-statistics-cache'] }),
      )
      response.on('error', (error) => resolve({ status: 0, error: error.message }))
    })
    request.on('error', (error) => resolve({ status: 0, error: error.message }))
  })
}

/**
 * Sends `rate` requests a second for `seconds` over `connections` keep-alive connections, whatever
 * the answers take: request i is due at start + i / rate, and its latency runs from then to the last
 * byte of its answer. `plan(i)` names request i: `{ kind, urlPath }` (called when it is due). Resolves
 * with every sample (`kind`, `ms`, `status`, `cache`) once the last answer has arrived.
 * @example await openLoop({ base, apiKey, rate: 10, seconds: 60, connections: 4, plan })
 */
export async function openLoop({ base, apiKey, rate, seconds, connections, plan }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections })
  const headers = { 'x-api-key': apiKey }
  const total = Math.round(rate * seconds)
  const start = performance.now() + 20
  const answers = []
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate
    const wait = due - performance.now()
    if (wait > 0) await sleep(wait)
    const { kind, urlPath } = plan(i)
    answers.push(
      get(agent, base, urlPath, headers).then((answer) => ({ kind, ...answer, ms: performance.now() - due })),
    )
  }
  const samples = await Promise.all(answers)
  agent.destroy()
  return samples
}

/**
 * Pixel hits (POST /collect) for the bootstrap tracking key at `rate` a second, until `stop()`:
 * open loop too, a tick every 10 ms sends the hits due by then. `stop()` resolves with the hits
 * sent, the 2xx answers, the others and the answers' p50 / p99 in ms.
 * @example const ingest = startIngest({ base, trackingKey, rate: 350 }); ...; const counts = await ingest.stop()
 */
export function startIngest({ base, trackingKey, rate, connections = 256 }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections })
  const pool = createVisitorPool(20_000)
  const url = new URL('/collect', base)
  const counts = { sent: 0, accepted: 0, refused: 0 }
  const latencies = []
  const pending = new Set()
  const send = (n) => {
    const { headers, body } = hitRequest(pool, trackingKey, n)
    const started = performance.now()
    const done = new Promise((resolve) => {
      const request = http.request(url, { method: 'POST', agent, headers }, (response) => {
        response.on('data', () => {})
        response.on('end', () => {
          if (response.statusCode >= 200 && response.statusCode < 300) counts.accepted++
          else counts.refused++
          latencies.push(performance.now() - started)
          resolve()
        })
      })
      request.on('error', () => {
        counts.refused++
        resolve()
      })
      request.end(body)
    })
    pending.add(done)
    done.then(() => pending.delete(done))
  }
  const started = performance.now()
  const timer = setInterval(() => {
    const due = Math.floor(((performance.now() - started) / 1000) * rate)
    while (counts.sent < due) send(counts.sent++)
  }, 10)
  return {
    async stop() {
      clearInterval(timer)
      await Promise.all(pending)
      agent.destroy()
      const seconds = (performance.now() - started) / 1000
      const sorted = latencies.sort((a, b) => a - b)
      return {
        ...counts,
        seconds,
        rate: counts.accepted / seconds,
        p50: percentile(sorted, 0.5),
        p99: percentile(sorted, 0.99),
      }
    },
  }
}

/** The `q` quantile of sorted numbers (nearest rank). */
export const percentile = (sorted, q) => sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]

/** p50, p90, p99 and max of a list of milliseconds, and its length. */
export function latencySummary(values) {
  const sorted = [...values].sort((a, b) => a - b)
  return {
    count: sorted.length,
    p50: percentile(sorted, 0.5),
    p90: percentile(sorted, 0.9),
    p99: percentile(sorted, 0.99),
    max: sorted.at(-1),
  }
}

/** CPU milliseconds used so far by a process (all its threads), or NaN off Linux. */
export function processCpuMs(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return Number.NaN
  }
}

/** CPU milliseconds used so far by the whole machine (every core, user and system), or NaN off Linux. */
export function machineCpuMs() {
  try {
    const [, user, nice, system] = readFileSync('/proc/stat', 'utf8')
      .split('\n')[0]
      .trim()
      .split(/\s+/)
      .map(Number)
    return (user + nice + system) * 10
  } catch {
    return Number.NaN
  }
}
