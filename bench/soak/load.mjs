// The soak's load, from the bench process to the server on loopback: ingest hits at a fixed rate,
// identify hits (their identifications become webhook deliveries), and API reads of profiles,
// statistics and lists. Every request is timed to its last byte; each hit's number is unique (its
// path `/b/<n>`), and the numbers of the acknowledged ones (202) are kept for the loss check.
import http from 'node:http'
import { createIdentifyTraffic, createVisitorPool, hitRequest } from '../ingest/traffic.mjs'

// Ingest answers a hit once its batch is written (INGEST_BATCH_MS, 200 ms): a rate of thousands of
// hits per second keeps hundreds of requests waiting, each on its own connection.
const agent = new http.Agent({ keepAlive: true, maxSockets: 4096 })
const maxInFlight = 4096

/** One request; resolves with its status and milliseconds (status 0 for a transport error). */
function send(base, method, urlPath, headers, body) {
  return new Promise((resolve) => {
    const started = performance.now()
    const request = http.request(new URL(urlPath, base), { method, agent, headers }, (response) => {
      response.on('data', () => {})
      response.on('end', () => resolve({ status: response.statusCode, ms: performance.now() - started }))
      response.on('error', () => resolve({ status: 0, ms: performance.now() - started }))
    })
    request.on('error', () => resolve({ status: 0, ms: performance.now() - started }))
    request.end(body)
  })
}

/** Counters of one kind of request: done, failed, slow (over 1 s), the slowest, and a window count. */
function tally() {
  const t = { done: 0, failed: 0, slow: 0, maxMs: 0, window: 0, latencies: [], slowAt: [] }
  t.record = (result, ok) => {
    if (ok) {
      t.done++
      t.window++
    } else t.failed++
    if (result.ms > 1000) {
      t.slow++
      // When they were answered (performance.now()), for the report by minute.
      if (t.slowAt.length < 100_000) t.slowAt.push(performance.now())
    }
    if (result.ms > t.maxMs) t.maxMs = result.ms
    // A bounded reservoir for the percentiles.
    if (t.latencies.length < 200_000) t.latencies.push(result.ms)
    else t.latencies[Math.floor(Math.random() * 200_000)] = result.ms
  }
  t.takeWindow = () => {
    const n = t.window
    t.window = 0
    return n
  }
  return t
}

/**
 * The load against `base`: `start({ ingestRate, identifyRate, readRate })` paces each kind every
 * 100 ms (at most 4,096 requests waiting: the rest of a tick is counted as not sent), `stop()`
 * waits for what is in flight. `acked` holds the numbers of the hits answered 202.
 */
export function createLoad(base, { trackingKey, apiKey, organizationId, visitorIds, contacts, maxHits }) {
  const pool = createVisitorPool(20_000)
  const identify = createIdentifyTraffic(pool, { contacts })
  const acked = new Uint8Array(maxHits)
  const stats = { ingest: tally(), identify: tally(), reads: tally(), notSent: 0 }
  const inFlight = new Set()
  let next = 0
  let timers = []
  const track = (promise) => {
    inFlight.add(promise)
    promise.finally(() => inFlight.delete(promise))
  }
  const hit = (kind, request) => {
    const n = next++
    if (n >= maxHits) return
    const { headers, body } = request(n)
    track(
      send(base, 'POST', '/collect', headers, body).then((result) => {
        const ok = result.status === 202
        if (ok) acked[n] = 1
        stats[kind].record(result, ok)
      }),
    )
  }
  const day = 86_400_000
  const range = (days) =>
    `from=${new Date(Date.now() - days * day).toISOString()}&to=${new Date().toISOString()}`
  const reads = [
    () =>
      `/api/v1/visitor-tracking/${organizationId}/visitors/${visitorIds[Math.floor(Math.random() * visitorIds.length)]}`,
    () => `/api/v1/companies/statistic/${organizationId}/total?${range(30)}`,
    () => `/api/v1/companies/statistic/${organizationId}/visitors/chart?${range(30)}`,
    () => `/api/v1/companies?organizationId=${organizationId}&${range(30)}&page=1&limit=25`,
    () => `/api/v1/companies/visitors?organizationId=${organizationId}&${range(2)}&page=1&limit=25`,
  ]
  let readTurn = 0
  const read = () => {
    const urlPath = reads[readTurn++ % reads.length]()
    track(
      send(base, 'GET', urlPath, { 'x-api-key': apiKey }).then((result) =>
        stats.reads.record(result, result.status === 200),
      ),
    )
  }
  const every100ms = (perSecond, fire) => {
    let owed = 0
    return setInterval(() => {
      owed += perSecond / 10
      while (owed >= 1) {
        owed--
        if (inFlight.size >= maxInFlight) stats.notSent++
        else fire()
      }
    }, 100)
  }
  return {
    stats,
    acked,
    get sent() {
      return Math.min(next, maxHits)
    },
    start({ ingestRate, identifyRate, readRate }) {
      timers = [
        every100ms(ingestRate, () => hit('ingest', (n) => hitRequest(pool, trackingKey, n))),
        every100ms(identifyRate, () => hit('identify', (n) => identify.request(trackingKey, n))),
        every100ms(readRate, read),
      ]
    },
    async stop() {
      for (const timer of timers) clearInterval(timer)
      timers = []
      while (inFlight.size > 0) await Promise.allSettled([...inFlight])
    },
    /**
     * Waits until the server answers: one probe hit a second until `quietSeconds` in a row were
     * answered within `underMs`, at most `maxSeconds`; returns the seconds waited.
     */
    async settled({ quietSeconds = 15, underMs = 500, maxSeconds = 600 } = {}) {
      const started = performance.now()
      let quiet = 0
      while (quiet < quietSeconds && performance.now() - started < maxSeconds * 1000) {
        const n = next++
        const { headers, body } = hitRequest(pool, trackingKey, n)
        const result = await send(base, 'POST', '/collect', headers, body)
        if (result.status === 202) acked[n] = 1
        quiet = result.status === 202 && result.ms < underMs ? quiet + 1 : 0
        await new Promise((resolve) => setTimeout(resolve, 1000))
      }
      return (performance.now() - started) / 1000
    },
    /**
     * The hits acknowledged per second when `connections` clients send back to back for `seconds`,
     * with the rest of the soak's mix beside them: one hit in `1 + 1 / identifyShare` an identify
     * hit, and API reads at `readRate` a second. So the capacity is the whole mix's, not ingest's
     * alone. The reads are not part of the soak's latencies; their answers are counted.
     */
    async capacity(seconds, { connections = 1000, identifyShare = 0.05, readRate = 10 } = {}) {
      const until = performance.now() + seconds * 1000
      let acknowledged = 0
      const reading = every100ms(readRate, read)
      await Promise.all(
        Array.from({ length: connections }, async () => {
          while (performance.now() < until && next < maxHits) {
            const n = next++
            const identifying = Math.random() < identifyShare / (1 + identifyShare)
            const { headers, body } = identifying
              ? identify.request(trackingKey, n)
              : hitRequest(pool, trackingKey, n)
            const result = await send(base, 'POST', '/collect', headers, body)
            // Not part of the soak's latencies: at full load every request queues.
            if (result.status === 202) {
              acked[n] = 1
              acknowledged++
            }
          }
        }),
      )
      clearInterval(reading)
      while (inFlight.size > 0) await Promise.allSettled([...inFlight])
      // The soak's counts start after this.
      stats.reads = tally()
      stats.notSent = 0
      return acknowledged / seconds
    },
  }
}

/** The p-th percentile of a list of milliseconds. */
export function percentile(values, p) {
  if (values.length === 0) return 0
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
}
