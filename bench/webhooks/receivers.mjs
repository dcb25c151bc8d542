// The partners' receivers of the webhook benchmark, on 127.0.0.1 in the bench process: one that
// answers 200 at once and records every delivery (event id, arrival time, signature), and one that
// holds every request for a while before its 200 (a partner whose endpoint hangs).
import { createHmac, timingSafeEqual } from 'node:crypto'
import { createServer } from 'node:http'

/**
 * A receiver that answers 200 as soon as the body has arrived. `stats()` is what it saw since the
 * last `reset()`: arrivals (performance.now() ms) in order, deliveries per event id, signatures.
 * @example const a = await startReceiver({ secret }); ...; a.url; a.stats().arrivals.length
 */
export async function startReceiver({ secret, holdMs = 0 }) {
  let state
  const reset = () => {
    state = {
      arrivals: [],
      perEvent: new Map(),
      withoutSignature: 0,
      badSignature: 0,
      withoutEventId: 0,
      bytes: 0,
      held: 0,
    }
  }
  reset()
  const server = createServer((request, response) => {
    const chunks = []
    request.on('data', (chunk) => chunks.push(chunk))
    request.on('end', () => {
      const at = performance.now()
      const raw = Buffer.concat(chunks)
      const eventId = request.headers['x-service-event-id']
      const signature = request.headers['x-service-signature']
      state.bytes += raw.length
      if (typeof eventId !== 'string' || eventId === '') state.withoutEventId++
      else {
        state.arrivals.push(at)
        state.perEvent.set(eventId, (state.perEvent.get(eventId) ?? 0) + 1)
      }
      if (typeof signature !== 'string' || signature === '') state.withoutSignature++
      else if (!sameHmac(secret, raw, signature)) state.badSignature++
      if (holdMs <= 0) return response.end('ok')
      state.held++
      const timer = setTimeout(() => response.end('ok'), holdMs)
      response.on('close', () => clearTimeout(timer))
    })
  })
  server.keepAliveTimeout = 30_000
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${server.address().port}/webhooks/identification`,
    stats: () => state,
    reset,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(resolve)
      }),
  }
}

/** X-Service-Signature: the hex HMAC-SHA256 of the raw body with the partner's secret. */
function sameHmac(secret, raw, given) {
  const expected = createHmac('sha256', secret).update(raw).digest('hex')
  return given.length === expected.length && timingSafeEqual(Buffer.from(given), Buffer.from(expected))
}
