import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { eventIdOf } from '@visitor-id/core/events'
import { createRepositories } from '@visitor-id/core/repositories'
import { createStore } from '@visitor-id/core/store'
import { enqueueWebhookEvent } from '@visitor-id/core/webhooks'
import { killServerProcess, type ServerProcess, startServerProcess } from '@visitor-id/testing/server-process'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BootstrapKeys, collect, pixelHit } from './fixtures/hits.js'

// Partner webhooks and kill -9: a real server (role all, the default memory coordination), a
// receiver on loopback that answers 200 only after 300 ms, so with 16 deliveries in flight 200 of
// them take several seconds and the kill lands while most are pending, some in flight (sent, not
// answered). The server restarts on the same DATA_DIR; every event queued for the partner must then
// reach the receiver at least once (by X-Service-Event-Id). Duplicates are allowed, at most one batch (4 rounds of
// WEBHOOK_CONCURRENCY): a batch's results are written when it ends, so the batch under way at the
// kill is sent again.
const secret = 'a-partner-secret-for-the-crash-test'
const events = 200
const concurrency = 16
const environment = (dataDir: string) => ({
  DATA_DIR: dataDir,
  WEBHOOK_ALLOW_PRIVATE: '1',
  WEBHOOK_RETRY_SCHEDULE: '1',
  WEBHOOK_CONCURRENCY: String(concurrency),
  INGEST_BATCH_MS: '20',
  IDENTIFY_BATCH_MS: '20',
})
const dirs = [tempDir('vid-webhook-crash-outbox-'), tempDir('vid-webhook-crash-identify-')]
let server: ServerProcess | undefined
let receiver: Server
let receiverUrl = ''
/** Deliveries per event id, and requests the receiver has not answered yet. */
const received = new Map<string, number>()
let answering = 0

beforeAll(async () => {
  receiver = createServer((request, response) => {
    request.resume()
    request.on('end', () => {
      const eventId = String(request.headers['x-service-event-id'] ?? '')
      received.set(eventId, (received.get(eventId) ?? 0) + 1)
      answering++
      setTimeout(() => {
        answering--
        response.end('ok')
      }, 300)
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`
})

afterAll(async () => {
  await killServerProcess(server)
  receiver?.closeAllConnections()
  await new Promise((resolve) => receiver?.close(resolve))
  for (const dir of dirs) dir.remove()
})

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Starts the server on the directory, with the partner's identification webhook pointed at the receiver. */
async function startConfigured(dataDir: string) {
  server = await startServerProcess(environment(dataDir))
  const keys = JSON.parse(readFileSync(path.join(dataDir, 'bootstrap.json'), 'utf8')) as BootstrapKeys
  const configured = await fetch(`${server.url}/api/v1/partner/webhooks/identification`, {
    method: 'PUT',
    headers: { 'x-partner-api-key': keys.partnerKey, 'content-type': 'application/json' },
    body: JSON.stringify({ url: receiverUrl, secret }),
  })
  expect(configured.status, await configured.text()).toBe(200)
  return keys
}

/** Waits until `count` events have arrived, then kills the server with SIGKILL; what had arrived then. */
async function killAfter(count: number) {
  const deadline = Date.now() + 30_000
  while (received.size < count && Date.now() < deadline) await sleep(20)
  const atKill = { arrived: received.size, inFlight: answering }
  server!.child.kill('SIGKILL')
  await server!.exit
  return atKill
}

/**
 * Waits until every expected event has arrived, or nothing has arrived for 5 s with nothing in
 * flight (at least 8 s after the start: a restart and its first passes), at most 30 s. The missing ones.
 */
async function settle(expected: readonly string[]) {
  const missing = () => expected.filter((eventId) => !received.has(eventId))
  const started = Date.now()
  let seen = -1
  let quietSince = Date.now()
  while (missing().length > 0 && Date.now() - started < 30_000) {
    const total = [...received.values()].reduce((sum, n) => sum + n, 0)
    if (total !== seen || answering > 0) {
      seen = total
      quietSince = Date.now()
    } else if (Date.now() - quietSince > 5_000 && Date.now() - started > 8_000) break
    await sleep(100)
  }
  return missing()
}

/** SIGTERM (exit 0), then the events' and deliveries' state from the store. */
async function stopAndRead(dataDir: string, organizationId: string) {
  server!.child.kill('SIGTERM')
  expect((await server!.exit).code).toBe(0)
  const store = createStore({ database: 'default', dataDir })
  try {
    const [row] = await store.query<Record<string, number>>(
      `SELECT
         (SELECT uniqExact(event_id) FROM events
          WHERE organization_id = {organizationId:UUID} AND type = 'visitor.identified') AS events,
         (SELECT uniqExact(event_id) FROM event_marks WHERE event_id IN (SELECT event_id FROM events
          WHERE organization_id = {organizationId:UUID})) AS dispatched,
         (SELECT count() FROM webhook_deliveries FINAL WHERE organization_id = {organizationId:UUID}) AS queued,
         (SELECT count() FROM webhook_deliveries FINAL
          WHERE organization_id = {organizationId:UUID} AND status = 'success') AS delivered`,
      { organizationId },
    )
    return Object.fromEntries(Object.entries(row!).map(([key, value]) => [key, Number(value)]))
  } finally {
    await store.close()
  }
}

const duplicatesOf = (expected: readonly string[]) =>
  expected.reduce((sum, eventId) => sum + Math.max(0, (received.get(eventId) ?? 0) - 1), 0)

describe('kill -9 with webhook deliveries pending', () => {
  it('sends every queued delivery at least once after the restart', { timeout: 90_000 }, async () => {
    // The deliveries are written to the outbox the way producers write them (enqueueWebhookEvent),
    // by this process while the server is stopped (the embedded store is one process's at a time):
    // the outbox alone is under test here, not the event queue in front of it (next test).
    received.clear()
    const dataDir = dirs[0]!.dir
    const keys = await startConfigured(dataDir)
    server!.child.kill('SIGTERM')
    expect((await server!.exit).code).toBe(0)
    const expected: string[] = []
    const store = createStore({ database: 'default', dataDir })
    try {
      const deps = { store, repos: createRepositories(store) }
      for (let n = 0; n < events; n++) {
        const visitorId = randomUUID()
        const eventId = eventIdOf('visitor.identified', keys.organizationId, visitorId)
        const payload = {
          event_type: 'visitor.identified',
          timestamp: new Date().toISOString(),
          organization_id: keys.organizationId,
          visitor: {
            id: visitorId,
            email: `person${n}@crash.test`,
            first_name: 'Ada',
            last_name: 'Lovelace',
          },
          company: { id: 'crash.test', name: 'Crash Test Inc.', domain: 'crash.test' },
          page_views: [{ url: 'https://shop.test/pricing', visited_at: new Date().toISOString() }],
        }
        const queued = await enqueueWebhookEvent(deps, {
          organizationId: keys.organizationId,
          eventId,
          eventType: 'visitor.identified',
          payload,
        })
        expect(queued).toBeDefined()
        expected.push(eventId)
      }
    } finally {
      await store.close()
    }

    server = await startServerProcess(environment(dataDir))
    const atKill = await killAfter(20)
    expect(atKill.arrived).toBeLessThan(events)
    server = await startServerProcess(environment(dataDir))
    const missing = await settle(expected)
    const state = await stopAndRead(dataDir, keys.organizationId)
    const duplicates = duplicatesOf(expected)
    console.info(
      `webhook crash (outbox): ${atKill.arrived} of ${events} arrived and ${atKill.inFlight} in flight at the kill; ` +
        `after the restart ${events - missing.length} arrived, ${duplicates} duplicates; store ${JSON.stringify(state)}`,
    )
    expect(missing).toEqual([])
    expect([...received.keys()].sort()).toEqual([...expected].sort())
    expect(duplicates).toBeLessThanOrEqual(concurrency * 4)
    expect(state).toMatchObject({ queued: events, delivered: events })
  })

  // The events come from identify hits on /collect, as in production, with the default memory
  // coordination: the event queue is in memory and dies with the process. Events are marked
  // dispatched only once their consumers ran, so the restarted server queues the rest again from the
  // store; every one must reach the receiver. The kill comes as soon as the first delivery arrives.
  it('identify hits: every visitor.identified event is delivered after the restart', {
    timeout: 90_000,
  }, async () => {
    received.clear()
    const dataDir = dirs[1]!.dir
    const keys = await startConfigured(dataDir)
    const visitors = Array.from({ length: events }, () => randomUUID())
    const expected = visitors.map((visitor) => eventIdOf('visitor.identified', keys.organizationId, visitor))
    const answers = await Promise.all(
      visitors.map((visitor, n) =>
        collect(
          server!.url,
          pixelHit(keys.trackingKey, { v: visitor, e: 'id', em: `person${n}@crash.test` }),
        ),
      ),
    )
    expect(answers.map((answer) => answer.status)).toEqual(visitors.map(() => 202))
    const atKill = await killAfter(1)
    server = await startServerProcess(environment(dataDir))
    const missing = await settle(expected)
    const state = await stopAndRead(dataDir, keys.organizationId)
    console.info(
      `webhook crash (identify hits): ${atKill.arrived} of ${events} arrived at the kill; after the restart ` +
        `${events - missing.length} arrived, ${duplicatesOf(expected)} duplicates; store ${JSON.stringify(state)}`,
    )
    expect(missing).toEqual([])
    expect(state).toMatchObject({ events, dispatched: events, queued: events, delivered: events })
  })
})
