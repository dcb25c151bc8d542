// The webhook benchmark's end-to-end step: identify hits on /collect to a partner's receiver, all
// through a running server (identification stores visitor.identified events, the event dispatcher
// hands them to the job queue, its consumer queues the webhook deliveries, the dispatcher sends
// them). After the server stops, the store says when the events and the deliveries were written,
// so the step in front of the outbox is timed apart from the sending.
import { randomUUID } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { startServer } from '../analytics/server.mjs'
import { withStore } from './dataset.mjs'

const userAgent =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36'

/**
 * Sends `count` identify hits (100 at a time) to a fresh server whose bootstrap partner's
 * identification webhook points at `receiver`, and waits for every delivery (or 30 s without one).
 */
export async function endToEnd(receiver, secret, count, log) {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'vid-bench-webhooks-e2e-'))
  try {
    const server = await startServer(dataDir, ['--role', 'all'], {
      WEBHOOK_ALLOW_PRIVATE: '1',
      INGEST_BATCH_MS: '50',
      IDENTIFY_BATCH_MS: '50',
    })
    const keys = JSON.parse(readFileSync(path.join(dataDir, 'bootstrap.json'), 'utf8'))
    let sendSeconds
    let started
    try {
      const configured = await fetch(`${server.url}/api/v1/partner/webhooks/identification`, {
        method: 'PUT',
        headers: { 'x-partner-api-key': keys.partnerKey, 'content-type': 'application/json' },
        body: JSON.stringify({ url: receiver.url, secret }),
      })
      if (configured.status !== 200) throw new Error(`webhook configuration: ${configured.status}`)
      receiver.reset()
      started = performance.now()
      for (let sent = 0; sent < count; sent += 100) {
        const answers = await Promise.all(
          Array.from({ length: Math.min(100, count - sent) }, (_, i) =>
            fetch(`${server.url}/collect`, {
              method: 'POST',
              headers: { 'content-type': 'text/plain;charset=UTF-8', 'user-agent': userAgent },
              body: JSON.stringify({
                k: keys.trackingKey,
                e: 'id',
                v: randomUUID(),
                s: randomUUID(),
                u: 'https://shop.example/pricing',
                ts: Date.now(),
                em: `person${sent + i}@end-to-end.example`,
              }),
            }),
          ),
        )
        if (answers.some((answer) => answer.status !== 202)) throw new Error('an identify hit was refused')
      }
      sendSeconds = (performance.now() - started) / 1000
      let seen = 0
      let lastNew = performance.now()
      let lastLog = performance.now()
      const current = receiver.stats()
      while (current.perEvent.size < count && performance.now() - lastNew < 30_000) {
        await new Promise((resolve) => setTimeout(resolve, 100))
        if (current.perEvent.size !== seen) {
          seen = current.perEvent.size
          lastNew = performance.now()
        }
        if (performance.now() - lastLog > 5000) {
          lastLog = performance.now()
          log(`end to end: ${current.perEvent.size} of ${count} delivered`)
        }
      }
    } finally {
      await server.stop()
    }
    const final = receiver.stats()
    const arrivals = final.arrivals
    const [events, deliveries] = await withStore(dataDir, (store) =>
      Promise.all([
        store.query(`SELECT count() AS n, dateDiff('millisecond', min(created_at), max(created_at)) AS span_ms
                     FROM events FINAL WHERE type = 'visitor.identified'`),
        store.query(`SELECT count() AS n, dateDiff('millisecond', min(created_at), max(created_at)) AS span_ms
                     FROM webhook_deliveries FINAL`),
      ]),
    )
    return {
      count,
      sendSeconds,
      delivered: final.perEvent.size,
      firstAfterMs: arrivals[0] - started,
      lastAfterMs: arrivals.at(-1) - started,
      rate: (arrivals.length - 1) / ((arrivals.at(-1) - arrivals[0]) / 1000),
      events: { n: Number(events[0].n), spanMs: Number(events[0].span_ms) },
      deliveries: { n: Number(deliveries[0].n), spanMs: Number(deliveries[0].span_ms) },
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
}
