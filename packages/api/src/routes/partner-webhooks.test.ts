// Partner webhooks end to end on a real server: configuration, a test delivery, events delivered
// to a receiver on loopback that checks both signatures over the raw bytes it got (its own code,
// from the design, not ours), retries on a schedule of seconds with a log entry per attempt,
// disabling, the log's filters and pages, redelivery, other partners.
import { createHmac, timingSafeEqual } from 'node:crypto'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { appendEvents, eventIdOf } from '@visitor-id/core/events'
import { createPartner } from '@visitor-id/core/organizations'
import { errorBody, type Harness, startHarness } from '@visitor-id/testing/harness'
import { until } from '@visitor-id/testing/until'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

let h: Harness
let receiver: Server
let receiverUrl: string
const secret = 'a-partner-secret-of-some-length'

interface Received {
  headers: IncomingHttpHeaders
  raw: Buffer
  /** Both signatures checked here, independently of the service's code. */
  signed: boolean
}
const received: Received[] = []
/** The statuses the receiver answers with, in turn; then 200. */
let script: number[] = []

function verify(raw: Buffer, headers: IncomingHttpHeaders): boolean {
  const expected = createHmac('sha256', secret).update(raw).digest('hex')
  const given = String(headers['x-service-signature'] ?? '')
  const service =
    given.length === expected.length && timingSafeEqual(Buffer.from(given), Buffer.from(expected))
  // Standard Webhooks: v1,<base64 HMAC-SHA256 of "id.timestamp.body">.
  const signedContent = `${headers['webhook-id']}.${headers['webhook-timestamp']}.${raw.toString('utf8')}`
  const standard = createHmac('sha256', secret).update(signedContent).digest('base64')
  const signatures = String(headers['webhook-signature'] ?? '').split(' ')
  return service && signatures.includes(`v1,${standard}`)
}

beforeAll(async () => {
  receiver = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const raw = Buffer.concat(chunks)
      received.push({ headers: request.headers, raw, signed: verify(raw, request.headers) })
      const status = script.shift() ?? 200
      if (status === 301) response.writeHead(301, { location: 'http://127.0.0.1:1/elsewhere' })
      else response.writeHead(status)
      response.end('ok')
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`
  // Retries after 1 s and 1 s, then failed.
  h = await startHarness({ WEBHOOK_RETRY_SCHEDULE: '1,1' })
})

afterAll(async () => {
  await h?.stop()
  receiver?.closeAllConnections()
  await new Promise((resolve) => receiver?.close(resolve))
})

const partner = (
  method: 'GET' | 'PUT' | 'POST',
  url: string,
  payload?: object,
  partnerKey = h.boot.partnerKey,
) =>
  h.request({
    method,
    url: `/api/v1/partner/webhooks${url}`,
    key: null,
    partnerKey,
    ...(payload ? { payload } : {}),
  })

/** Stores a visitor.identified event of the bootstrap organization, as identification does. */
async function identified(payload: object) {
  const visitorId = crypto.randomUUID()
  const eventId = eventIdOf('visitor.identified', h.boot.organizationId, visitorId)
  await appendEvents(h.store, [
    {
      event_id: eventId,
      type: 'visitor.identified',
      organization_id: h.boot.organizationId,
      visitor_id: visitorId,
      payload: JSON.stringify(payload),
      created_at: new Date().toISOString(),
    },
  ])
  return eventId
}

/** Sends a test delivery of the kind and returns what the receiver got. */
async function testDelivery(type: 'identification' | 'billing'): Promise<Received> {
  const before = received.length
  const answer = await partner('POST', '/test', { type })
  expect(answer.json(), answer.body).toMatchObject({ success: true })
  return received[before]!
}

/** Objects whose keys are data (slugs, parameters), not fields: compared as one value. */
const recordFields = new Set(['icp_statuses', 'tracking_params'])

/** Every field's dotted path, sorted; an array's fields are its first item's (`page_views.0.url`). */
function fieldPaths(value: unknown, prefix = ''): string[] {
  if (Array.isArray(value)) return value.length === 0 ? [prefix] : fieldPaths(value[0], `${prefix}.0`)
  if (value === null || typeof value !== 'object' || recordFields.has(prefix.split('.').at(-1)!)) {
    return [prefix]
  }
  return Object.entries(value)
    .flatMap(([key, field]) => fieldPaths(field, prefix ? `${prefix}.${key}` : key))
    .sort()
}

/** The fields that hold no value: '', null, an empty array or object. */
function blankFields(value: Record<string, unknown>): string[] {
  const valueAt = (path: string) =>
    path.split('.').reduce<unknown>((at, key) => (at as Record<string, unknown>)?.[key], value)
  return fieldPaths(value).filter((path) => {
    const field = valueAt(path)
    return (
      field === '' ||
      field === null ||
      (typeof field === 'object' && Object.keys(field as object).length === 0)
    )
  })
}

describe('partner webhooks', () => {
  it('configuration: empty at first; the secret is kept, never shown; bad URLs are 400', async () => {
    expect((await partner('GET', '')).json()).toEqual({
      identification: { url: '', enabled: false, hasSecret: false },
      billing: { url: '', enabled: false, hasSecret: false },
    })
    const saved = await partner('PUT', '/identification', { url: receiverUrl, secret })
    expect(saved.statusCode, saved.body).toBe(200)
    expect(saved.json()).toEqual({ identification: { url: receiverUrl, enabled: true, hasSecret: true } })
    expect(saved.body).not.toContain(secret)
    expect((await partner('GET', '')).body).not.toContain(secret)
    for (const url of [
      'ftp://example.com/x',
      'not a url',
      `http://user:pass@127.0.0.1:1/x`,
      `http://x/${'a'.repeat(2100)}`,
    ]) {
      const response = await partner('PUT', '/billing', { url })
      expect(response.statusCode, url).toBe(400)
      expect(response.json()).toMatchObject(errorBody(400, 'invalid_request'))
    }
    expect((await partner('PUT', '/billing', { secret: 'short' })).statusCode).toBe(400)
    expect((await partner('PUT', '/billing', { enabled: 'yes' })).statusCode).toBe(400)
  })

  it('a test delivery is signed and sent now; the reply says what the receiver answered', async () => {
    const before = received.length
    const ok = await partner('POST', '/test', { type: 'identification' })
    expect(ok.json()).toEqual({ success: true, message: expect.stringMatching(/answered 200/) })
    const got = received[before]!
    expect(got.signed).toBe(true)
    expect(JSON.parse(got.raw.toString())).toMatchObject({ event_type: 'visitor.identified', test: true })
    script = [500]
    const failing = await partner('POST', '/test', { type: 'identification' })
    expect(failing.json()).toEqual({ success: false, message: expect.stringMatching(/HTTP 500/) })
    expect((await partner('POST', '/test', { type: 'billing' })).json()).toEqual({
      success: false,
      message: 'No billing webhook URL is configured',
    })
    expect((await partner('POST', '/test', { type: 'nope' })).statusCode).toBe(400)
  })

  it('events reach the partner signed, byte for byte; failures are retried on the schedule and logged', async () => {
    script = [500, 301]
    const payload = { event_type: 'visitor.identified', visitor: { email: 'ada@example.com' }, note: 'é ✓' }
    const eventId = await identified(payload)
    const deliveries = await until(async () => {
      const mine = received.filter((r) => r.headers['x-service-event-id'] === eventId)
      return mine.length >= 3 ? mine : undefined
    })
    for (const delivery of deliveries) {
      expect(delivery.signed).toBe(true)
      expect(delivery.raw.toString('utf8')).toBe(JSON.stringify(payload))
      expect(delivery.headers['webhook-id']).toBe(eventId)
    }
    const logs = await until(async () => {
      const body = (await partner('GET', `/logs?type=identification&pageSize=50`)).json()
      const mine = body.logs.filter((entry: { eventId: string }) => entry.eventId === eventId)
      return mine.length === 3 ? mine : undefined
    })
    expect(
      logs.map((entry: { status: string; statusCode: number }) => [entry.status, entry.statusCode]),
    ).toEqual([
      ['success', 200],
      ['retrying', 301],
      ['retrying', 500],
    ])
    expect(logs[1].error).toMatch(/redirect/)
    expect(logs[0]).toMatchObject({
      organizationId: h.boot.organizationId,
      type: 'identification',
      attempt: 3,
    })
  }, 30_000)

  it('disabling the webhook ends pending retries as failed, with the reason', async () => {
    script = [500]
    const eventId = await identified({ event_type: 'visitor.identified' })
    await until(async () =>
      received.some((r) => r.headers['x-service-event-id'] === eventId) ? true : undefined,
    )
    expect((await partner('PUT', '/identification', { enabled: false })).json()).toEqual({
      identification: { url: receiverUrl, enabled: false, hasSecret: true },
    })
    const failed = await until(async () => {
      const body = (await partner('GET', '/logs?status=failed&pageSize=50')).json()
      return body.logs.find((entry: { eventId: string }) => entry.eventId === eventId)
    })
    expect(failed.error).toMatch(/disabled/)
    expect(received.filter((r) => r.headers['x-service-event-id'] === eventId)).toHaveLength(1)
    await partner('PUT', '/identification', { enabled: true })
  }, 30_000)

  it('identification end to end: a pixel visit, an identify hit, a signed delivery with the whole payload', async () => {
    const visitor = crypto.randomUUID()
    const session = crypto.randomUUID()
    const hit = (extra: object) =>
      fetch(`${h.server.url}/collect`, {
        method: 'POST',
        headers: {
          'content-type': 'text/plain;charset=UTF-8',
          'user-agent':
            'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
        },
        body: JSON.stringify({ k: h.boot.trackingKey, v: visitor, s: session, ts: Date.now(), ...extra }),
      })
    expect((await hit({ e: 'pv', u: 'https://shop.test/pricing?utm_source=newsletter' })).status).toBe(202)
    expect(
      (await hit({ e: 'id', u: 'https://shop.test/pricing', em: 'Grace.Hopper@Example.com' })).status,
    ).toBe(202)
    const delivery = await until(async () =>
      received.find((r) => r.raw.toString().includes('grace.hopper@example.com')),
    )
    expect(delivery.signed).toBe(true)
    const payload = JSON.parse(delivery.raw.toString())
    expect(payload).toMatchObject({
      event_type: 'visitor.identified',
      organization_id: h.boot.organizationId,
      session_id: session,
      visitor: { id: visitor, email: 'grace.hopper@example.com' },
      session: { landing_page: 'https://shop.test/pricing?utm_source=newsletter', utm_source: 'newsletter' },
    })
    expect(payload.page_views.length).toBeGreaterThanOrEqual(1)
    expect(delivery.headers['x-service-event-type']).toBe('visitor.identified')

    // A test delivery brings exactly the fields of this real one, each with a sample value.
    const sample = await testDelivery('identification')
    expect(sample.signed).toBe(true)
    const body = JSON.parse(sample.raw.toString())
    expect(body.test).toBe(true)
    expect(fieldPaths(body).filter((path) => path !== 'test')).toEqual(fieldPaths(payload))
    // Phones are paid data: no real visitor.identified carries one, so the sample does not either.
    expect(blankFields(body)).toEqual(['visitor.phone'])
    expect(body.session).toMatchObject({ is_hosting: false, is_anonymous: false })
  }, 30_000)

  it('logs page and filter; redeliver sends an entry again; other partners see nothing of it', async () => {
    const page = (await partner('GET', '/logs?page=1&pageSize=2')).json()
    expect(page).toMatchObject({ page: 1, pageSize: 2, total: expect.any(Number) })
    expect(page.logs).toHaveLength(2)
    expect(Date.parse(page.logs[0].attemptedAt)).toBeGreaterThanOrEqual(Date.parse(page.logs[1].attemptedAt))
    const second = (await partner('GET', '/logs?page=2&pageSize=2')).json()
    expect(second.logs[0].id).not.toBe(page.logs[0].id)
    expect((await partner('GET', `/logs?organizationId=${crypto.randomUUID()}`)).json()).toMatchObject({
      logs: [],
      total: 0,
    })
    expect((await partner('GET', '/logs?pageSize=501')).statusCode).toBe(400)
    expect((await partner('GET', '/logs?status=nope')).statusCode).toBe(400)

    const entry = page.logs.find((log: { deliveryId: string }) => log.deliveryId !== '')
    const before = received.length
    const again = await partner('POST', `/logs/${entry.id}/redeliver`)
    expect(again.statusCode, again.body).toBe(200)
    expect(again.json()).toMatchObject({
      status: 'success',
      statusCode: 200,
      eventId: entry.eventId,
      attempt: 1,
    })
    expect(received[before]!.headers['x-service-event-id']).toBe(entry.eventId)

    const other = await createPartner(h.repos, { name: 'Other partner' })
    expect((await partner('GET', '/logs', undefined, other.plainKey)).json()).toMatchObject({
      logs: [],
      total: 0,
    })
    const foreign = await partner('POST', `/logs/${entry.id}/redeliver`, undefined, other.plainKey)
    expect(foreign.json()).toEqual(errorBody(404, 'resource_not_found'))
    expect((await partner('GET', '', undefined, other.plainKey)).json().identification.url).toBe('')
  })
})

describe('partner webhooks: test deliveries', () => {
  it('a billing test delivery brings the fields of a real billing event, each with a sample value', async () => {
    expect((await partner('PUT', '/billing', { url: receiverUrl, secret })).statusCode).toBe(200)
    await h.subscribe(h.boot.organizationId)
    const real = await until(() =>
      received.find((r) => r.headers['x-service-event-type'] === 'invoice.paid' && !r.raw.includes('"test"')),
    )
    const sample = await testDelivery('billing')
    expect(sample.signed).toBe(true)
    const body = JSON.parse(sample.raw.toString())
    expect(body).toMatchObject({ event_type: 'invoice.paid', test: true })
    expect(fieldPaths(body).filter((path) => path !== 'test')).toEqual(
      fieldPaths(JSON.parse(real.raw.toString())),
    )
    expect(blankFields(body)).toEqual([])
  }, 30_000)
})
