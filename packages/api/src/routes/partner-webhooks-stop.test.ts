// Stopping the server while a partner's receiver hangs: the requests under way get a 3 s grace to be
// answered, then are aborted (the stop does not wait for 10 s timeouts), no attempt is logged for
// them, and their deliveries stay due, so the next start sends them.
import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { loadConfig } from '@visitor-id/core/config'
import { appendEvents, eventIdOf } from '@visitor-id/core/events'
import type { BootstrapFile } from '@visitor-id/core/organizations'
import { createStore } from '@visitor-id/core/store'
import { startServer } from '@visitor-id/server'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const data = tempDir('vid-webhook-stop-')
let receiver: Server
let receiverUrl = ''
const arrived: string[] = []

beforeAll(async () => {
  // Reads the request, never answers.
  receiver = createServer((request) => {
    request.resume()
    request.on('end', () => arrived.push(String(request.headers['x-service-event-id'])))
  })
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`
})

afterAll(async () => {
  receiver?.closeAllConnections()
  await new Promise((resolve) => receiver?.close(resolve))
  data.remove()
})

describe('webhook deliveries at stop', () => {
  it('a stop aborts, after its grace, the requests a hanging receiver holds; their deliveries stay due, unlogged', async () => {
    const config = loadConfig({
      DATA_DIR: data.dir,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      WEBHOOK_ALLOW_PRIVATE: '1',
    })
    const server = await startServer(config)
    const boot = JSON.parse(readFileSync(server.bootstrapFile, 'utf8')) as BootstrapFile
    const configured = await server.app.inject({
      method: 'PUT',
      url: '/api/v1/partner/webhooks/identification',
      headers: { 'x-partner-api-key': boot.partnerKey },
      payload: { url: receiverUrl, secret: 'a-secret-for-the-stop-test' },
    })
    expect(configured.statusCode).toBe(200)
    const eventIds = Array.from({ length: 3 }, () => {
      const visitorId = crypto.randomUUID()
      return { visitorId, eventId: eventIdOf('visitor.identified', boot.organizationId, visitorId) }
    })
    await appendEvents(
      server.store,
      eventIds.map(({ visitorId, eventId }) => ({
        event_id: eventId,
        type: 'visitor.identified' as const,
        organization_id: boot.organizationId,
        visitor_id: visitorId,
        payload: '{"event_type":"visitor.identified"}',
        created_at: new Date().toISOString(),
      })),
    )
    const deadline = Date.now() + 15_000
    while (arrived.length < eventIds.length && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50))
    expect(arrived.sort()).toEqual(eventIds.map((e) => e.eventId).sort())

    const started = performance.now()
    await server.stop()
    expect(performance.now() - started).toBeLessThan(5_000)

    const store = createStore({ database: 'default', dataDir: data.dir })
    try {
      const deliveries = await store.query<{ status: string; attempts: number }>(
        `SELECT status, attempts FROM webhook_deliveries FINAL WHERE organization_id = {organizationId:UUID}`,
        { organizationId: boot.organizationId },
      )
      expect(deliveries.map((d) => [d.status, Number(d.attempts)])).toEqual(
        eventIds.map(() => ['pending', 0]),
      )
      const [logged] = await store.query<{ n: number }>(
        'SELECT count() AS n FROM webhook_attempts WHERE organization_id = {organizationId:UUID}',
        { organizationId: boot.organizationId },
      )
      expect(Number(logged?.n)).toBe(0)
    } finally {
      await store.close()
    }
  }, 40_000)
})
