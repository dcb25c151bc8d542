// Phone search through the API, with the `http` provider against an enrichment API served by this
// test on loopback: found, 404, 500-then-found, an answer slower than PHONE_SEARCH_TIMEOUT, every
// code of the spec's table, the partner route, the profile's phone and the credits.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { adjustCredits, creditBalance } from '@visitor-id/core/credits'
import { appendEvents, eventIdOf } from '@visitor-id/core/events'
import { errorBody, type Harness, startHarness } from '@visitor-id/testing/harness'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

let h: Harness
let api: Server
const calls: { url: string; auth: string | undefined }[] = []
let flaky = 0

beforeAll(async () => {
  // The enrichment API: the LinkedIn slug says how to answer.
  api = createServer((request, response) => {
    const url = new URL(request.url!, 'http://api.test')
    calls.push({ url: request.url!, auth: request.headers.authorization })
    const slug = url.searchParams.get('profile')?.split('/in/')[1] ?? ''
    const json = (status: number, body: object) => {
      response.writeHead(status, { 'content-type': 'application/json' })
      response.end(JSON.stringify(body))
    }
    if (slug.startsWith('found')) return json(200, { data: { phones: [{ number: '(415) 555-2671' }] } })
    if (slug.startsWith('none')) return json(404, { error: 'no such person' })
    if (slug.startsWith('flaky'))
      return flaky++ === 0 ? json(500, {}) : json(200, { data: { phones: [{ number: '+44 20 7183 8750' }] } })
    if (slug.startsWith('slow')) return // never answers: the search times out
    return json(400, {})
  })
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve))
  const port = (api.address() as AddressInfo).port
  h = await startHarness({
    PHONE_PROVIDER: 'http',
    PHONE_HTTP_URL: `http://127.0.0.1:${port}/v1/person?profile={linkedinUrl}`,
    PHONE_HTTP_AUTH_HEADER: 'Authorization: Bearer enrichment-secret',
    PHONE_HTTP_PHONE_PATH: 'data.phones[0].number',
    PHONE_DEFAULT_COUNTRY: 'US',
    // Longer than the first retry's backoff (2 s), short enough to wait for twice.
    PHONE_SEARCH_TIMEOUT: '5s',
  })
})

afterAll(async () => {
  await h?.stop()
  api?.closeAllConnections()
  await new Promise((resolve) => api?.close(resolve))
})

const person = (slug: string) =>
  h.seedPerson(h.boot.organizationId, {
    linkedin_url: `https://www.linkedin.com/in/${slug}-${Math.random().toString(36).slice(2, 8)}`,
  })

const search = (visitorId: string, options: { key?: string; organizationId?: string } = {}) =>
  h.request({
    method: 'POST',
    url: '/api/v1/visitor-tracking/phone-number-search',
    payload: { organizationId: options.organizationId ?? h.boot.organizationId, visitorId },
    ...(options.key ? { key: options.key } : {}),
  })

const profile = async (visitorId: string) =>
  (
    await h.request({
      method: 'GET',
      url: `/api/v1/visitor-tracking/${h.boot.organizationId}/visitors/${visitorId}`,
    })
  ).json()

/** Polls the profile until `check` holds (the search runs in the background). */
async function until(visitorId: string, check: (body: Record<string, unknown>) => boolean, limitMs = 10_000) {
  const started = Date.now()
  for (;;) {
    const body = await profile(visitorId)
    if (check(body)) return body
    if (Date.now() - started > limitMs) throw new Error(`not seen: ${JSON.stringify(body).slice(0, 300)}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** `<status> <code>` of an error, `<status> <phoneNumberSearchStatus>` of a start. */
const codeOf = async (response: Promise<{ statusCode: number; json(): unknown }>) => {
  const reply = await response
  const body = reply.json() as { code?: string; phoneNumberSearchStatus?: string }
  return `${reply.statusCode} ${body.code ?? body.phoneNumberSearchStatus}`
}

describe('POST /visitor-tracking/phone-number-search', () => {
  it('found: ongoing at once, then the phone on the profile in E.164, 5 credits charged; then already_unlocked', async () => {
    const visitorId = await person('found')
    const before = await creditBalance(h.store, h.boot.organizationId)
    expect(await profile(visitorId)).not.toHaveProperty('phoneNumber')
    const started = await search(visitorId)
    expect(started.statusCode, started.body).toBe(200)
    expect(started.json()).toEqual({ phoneNumberSearchStatus: 'ongoing', visitorId })
    expect(await codeOf(search(visitorId))).toMatch(/^(409 search_ongoing|409 already_unlocked)$/)
    const found = await until(visitorId, (body) => body.phoneNumber !== undefined)
    expect(found).toMatchObject({ phoneNumber: '+14155552671', phoneNumberSearchStatus: 'found' })
    expect(await creditBalance(h.store, h.boot.organizationId)).toBe(before - 5)
    expect(await codeOf(search(visitorId))).toBe('409 already_unlocked')
    // The provider got the credential and the URL-encoded profile; no reply ever carries either.
    const call = calls.find((c) => c.url.includes(encodeURIComponent('/in/found')))!
    expect(call.auth).toBe('Bearer enrichment-secret')
    expect(JSON.stringify(found)).not.toContain('enrichment-secret')
  })

  it('404 from the provider: not_found, free, never retried', async () => {
    const visitorId = await person('none')
    const before = await creditBalance(h.store, h.boot.organizationId)
    expect(await codeOf(search(visitorId))).toBe('200 ongoing')
    await new Promise((resolve) => setTimeout(resolve, 300))
    await until(visitorId, () => true)
    const deadline = Date.now() + 5000
    let reply = await codeOf(search(visitorId))
    while (reply === '409 search_ongoing' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      reply = await codeOf(search(visitorId))
    }
    expect(reply).toBe('409 not_found')
    expect(await profile(visitorId)).not.toHaveProperty('phoneNumber')
    expect(await creditBalance(h.store, h.boot.organizationId)).toBe(before)
  })

  it('a 500, then found: asked again after a backoff', async () => {
    const visitorId = await person('flaky')
    const started = Date.now()
    expect(await codeOf(search(visitorId))).toBe('200 ongoing')
    expect(await until(visitorId, (body) => body.phoneNumber !== undefined)).toMatchObject({
      phoneNumber: '+442071838750',
    })
    expect(calls.filter((call) => call.url.includes(encodeURIComponent('/in/flaky')))).toHaveLength(2)
    // The first retry waits 2 s.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900)
  })

  it('no answer within PHONE_SEARCH_TIMEOUT: expired (free), one retry, then retry_exhausted', async () => {
    const visitorId = await person('slow')
    const before = await creditBalance(h.store, h.boot.organizationId)
    expect(await codeOf(search(visitorId))).toBe('200 ongoing')
    expect(await codeOf(search(visitorId))).toBe('409 search_ongoing')
    const deadline = Date.now() + 15_000
    let reply = '409 search_ongoing'
    while (reply === '409 search_ongoing' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250))
      reply = await codeOf(search(visitorId))
    }
    expect(reply).toBe('200 ongoing') // the one retry
    expect(await creditBalance(h.store, h.boot.organizationId)).toBe(before)
    reply = '409 search_ongoing'
    while (reply === '409 search_ongoing' && Date.now() < deadline + 15_000) {
      await new Promise((resolve) => setTimeout(resolve, 250))
      reply = await codeOf(search(visitorId))
    }
    expect(reply).toBe('409 retry_exhausted')
    expect(await creditBalance(h.store, h.boot.organizationId)).toBe(before)
  }, 45_000)

  it('the other codes: not_plus_employee, no_linkedin, insufficient_credits, other tenants, bad input', async () => {
    const standard = await h.createTenant()
    const theirs = await h.seedPerson(standard.organizationId)
    expect(await codeOf(search(theirs, { key: standard.key, organizationId: standard.organizationId }))).toBe(
      '403 not_plus_employee',
    )
    expect(await codeOf(search(theirs))).toBe('404 resource_not_found')
    expect(await codeOf(search(await person('found'), { organizationId: standard.organizationId }))).toBe(
      '404 resource_not_found',
    )
    const noLinkedin = await h.seedPerson(h.boot.organizationId, { linkedin_url: '' })
    expect(await codeOf(search(noLinkedin))).toBe('400 no_linkedin')
    expect(await codeOf(search('not-a-visitor'))).toBe('404 resource_not_found')

    const poor = await h.createTenant({ plusEmployee: true })
    const balance = await creditBalance(h.store, poor.organizationId)
    await adjustCredits(h.store, { organizationId: poor.organizationId, amount: 4 - balance, reason: 'test' })
    const poorPerson = await h.seedPerson(poor.organizationId)
    expect(await codeOf(search(poorPerson, { key: poor.key, organizationId: poor.organizationId }))).toBe(
      '402 insufficient_credits',
    )

    for (const payload of [
      { organizationId: h.boot.organizationId },
      { organizationId: h.boot.organizationId, visitorId: 42 },
      { organizationId: h.boot.organizationId, visitorId: 'x'.repeat(65) },
      { organizationId: h.boot.organizationId, visitorId: theirs, extra: true },
    ]) {
      const response = await h.request({
        method: 'POST',
        url: '/api/v1/visitor-tracking/phone-number-search',
        payload,
      })
      expect(response.statusCode, JSON.stringify(payload)).toBe(400)
      expect(response.json()).toMatchObject(errorBody(400, 'invalid_request'))
    }
  })
})

describe("the profile's phoneNumberSearchStatus", () => {
  it('a B2B visitor always has one: not_started, ongoing, then every end (found, not_found, error, expired)', async () => {
    const ends = { found: 'found', none: 'not_found', broken: 'error', slow: 'expired' } as const
    const visitors = await Promise.all(
      Object.entries(ends).map(async ([slug, end]) => ({ end, visitorId: await person(slug) })),
    )
    for (const { visitorId } of visitors) {
      const body = await profile(visitorId)
      expect(body.phoneNumberSearchStatus).toBe('not_started')
      expect(body).not.toHaveProperty('phoneNumber')
      expect(await codeOf(search(visitorId))).toBe('200 ongoing')
    }
    // The slow one is ongoing until PHONE_SEARCH_TIMEOUT (5 s).
    expect((await profile(visitors[3]!.visitorId)).phoneNumberSearchStatus).toBe('ongoing')
    for (const { end, visitorId } of visitors) {
      const body = await until(visitorId, (b) => b.phoneNumberSearchStatus !== 'ongoing', 15_000)
      expect(body.phoneNumberSearchStatus, end).toBe(end)
      if (end === 'found') expect(body.phoneNumber).toBe('+14155552671')
      else expect(body, end).not.toHaveProperty('phoneNumber')
    }
  }, 30_000)

  it("a standard organization's visitor has neither field (it cannot search)", async () => {
    const standard = await h.createTenant()
    const visitorId = await h.seedPerson(standard.organizationId)
    const body = (
      await h.request({
        method: 'GET',
        url: `/api/v1/visitor-tracking/${standard.organizationId}/visitors/${visitorId}`,
        key: standard.key,
      })
    ).json()
    expect(body.id).toBe(visitorId)
    expect(body).not.toHaveProperty('phoneNumberSearchStatus')
    expect(body).not.toHaveProperty('phoneNumber')
  })
})

describe('POST /partner/organizations/{organizationId}/visitors/{visitorId}/phone-number-search', () => {
  it('starts a search for a managed organization; anything else is 404', async () => {
    const visitorId = await person('found')
    const url = `/api/v1/partner/organizations/${h.boot.organizationId}/visitors/${visitorId}/phone-number-search`
    const response = await h.request({ method: 'POST', url, key: null, partnerKey: h.boot.partnerKey })
    expect(response.statusCode, response.body).toBe(200)
    expect(response.json()).toEqual({ phoneNumberSearchStatus: 'ongoing', visitorId })
    await until(visitorId, (body) => body.phoneNumber === '+14155552671')
    const again = await h.request({ method: 'POST', url, key: null, partnerKey: h.boot.partnerKey })
    expect(again.json()).toEqual(errorBody(409, 'already_unlocked'))
    const tenant = await h.createTenant({ plusEmployee: true })
    const foreign = await h.request({
      method: 'POST',
      url: `/api/v1/partner/organizations/${tenant.organizationId}/visitors/${visitorId}/phone-number-search`,
      key: null,
      partnerKey: h.boot.partnerKey,
    })
    expect(foreign.json()).toEqual(errorBody(404, 'resource_not_found'))
  })
})

describe('auto phone enrichment', () => {
  it("the worker searches a newly identified visitor's phone once the organization enables it", async () => {
    const enable = await h.request({
      method: 'PATCH',
      url: `/api/v1/organization/${h.boot.organizationId}/auto-phone-enrichment`,
      payload: { enabled: true },
    })
    expect(enable.statusCode, enable.body).toBe(200)
    // What identification stores for a visitor identified as a person: the dispatcher hands the
    // event to the worker, whose consumer starts the search.
    const visitorId = await person('found')
    await appendEvents(h.store, [
      {
        event_id: eventIdOf('visitor.identified', h.boot.organizationId, visitorId),
        type: 'visitor.identified',
        organization_id: h.boot.organizationId,
        visitor_id: visitorId,
        payload: '{}',
        created_at: new Date().toISOString(),
      },
    ])
    expect(await until(visitorId, (body) => body.phoneNumber !== undefined)).toMatchObject({
      phoneNumber: '+14155552671',
      phoneNumberSearchStatus: 'found',
    })
  })
})
