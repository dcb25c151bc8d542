import { randomUUID } from 'node:crypto'
import { filteredHitReasons, settleFirstHours } from '@visitor-id/core/analytics'
import { type Harness, startHarness } from '@visitor-id/testing/harness'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chromeUserAgent, eventually, pixelHit } from './fixtures/hits.js'

// Filtered hits end to end: real hits through the real ingest (the pipeline, the counter and its
// periodic write) are counted per organization, day and reason, become no page view and no visitor,
// and show in the organization's totals; another organization sees none of them.
let h: Harness
let other: { organizationId: string; key: string }
const keys: Record<string, string> = {}
const today = new Date().toISOString().slice(0, 10)
const googlebot = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)'
const headless = chromeUserAgent.replace('Chrome/', 'HeadlessChrome/')
/** Every hit of the file has a path of its own under this marker. */
const marker = `/filtered-${randomUUID().slice(0, 8)}`
let n = 0
const page = () => `https://shop.test${marker}/${++n}`

beforeAll(async () => {
  h = await startHarness()
  other = await h.createTenant()
  for (const [organizationId, key] of [
    [h.boot.organizationId, h.boot.apiKey],
    [other.organizationId, other.key],
  ] as const) {
    const response = await h.request({
      method: 'GET',
      url: `/api/v1/visitor-tracking/${organizationId}`,
      key,
    })
    keys[organizationId] = response.json().pixelConfig.trackingKey
  }
  // The bootstrap organization's sites: shop.test only, privacy signals honoured.
  const updated = await h.request({
    method: 'PUT',
    url: `/api/v1/visitor-tracking/${h.boot.organizationId}/pixel-config`,
    payload: { verifiedDomains: ['shop.test'], respectPrivacySignals: true },
  })
  expect(updated.statusCode, updated.body).toBe(200)
})

afterAll(async () => {
  await h?.stop()
})

/** POST /collect as the pixel sends it, from a browser unless the headers say otherwise. */
async function collect(body: unknown, headers: Record<string, string> = {}) {
  const response = await h.server.app.inject({
    method: 'POST',
    url: '/collect',
    headers: { 'content-type': 'text/plain;charset=UTF-8', 'user-agent': chromeUserAgent, ...headers },
    payload: JSON.stringify(body),
  })
  expect(response.statusCode, response.body).toBe(202)
}

const totals = async (organizationId: string, key: string, from = today, to = today) => {
  const response = await h.request({
    method: 'GET',
    url: `/api/v1/companies/statistic/${organizationId}/total?from=${from}&to=${to}`,
    key,
  })
  expect(response.statusCode, response.body).toBe(200)
  return response.json()
}

const metric = async (reason: string) => {
  const text = (await h.server.app.inject({ method: 'GET', url: '/metrics' })).body
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`vid_ingest_hits_dropped_total{reason="${reason}"} `))
  return Number(line?.split(' ')[1] ?? Number.NaN)
}

const reasons = ['unknown_key', ...filteredHitReasons] as const

describe('filtered hits', () => {
  it('are counted per organization and reason, stored as nothing, and shown next to the totals', async () => {
    const org = h.boot.organizationId
    const key = keys[org]!
    const before = Object.fromEntries(await Promise.all(reasons.map(async (r) => [r, await metric(r)])))
    const visitors = { human: randomUUID(), bots: [] as string[] }
    const hit = (extra: Record<string, unknown> = {}) => {
      const visitor = randomUUID()
      visitors.bots.push(visitor)
      return pixelHit(key, { v: visitor, u: page(), ...extra })
    }

    // Known bots: a crawler's user agent (a batch of two hits).
    await collect([hit(), hit()], { 'user-agent': googlebot, origin: 'https://shop.test' })
    // Automation: navigator.webdriver from a normal browser, a headless browser, no user agent.
    await collect(hit({ wd: 1 }), { origin: 'https://shop.test' })
    await collect(hit(), { 'user-agent': headless })
    await collect(hit(), { 'user-agent': '' })
    // A disallowed origin: a page of another site, and a shop.test page posted from another origin.
    await collect(hit({ u: `https://evil.test${marker}/x` }))
    await collect(hit(), { origin: 'https://evil.test' })
    // Privacy signals the site honours.
    await collect(hit(), { 'sec-gpc': '1' })
    await collect(hit(), { dnt: '1' })
    // An identify hit without an email.
    await collect(hit({ e: 'id' }))
    // Not the organization's: an unknown key has no organization (/metrics only).
    await collect(pixelHit(`pk_${'0'.repeat(24)}`, { u: page() }))
    // The other organization's own crawler hit.
    await collect(pixelHit(keys[other.organizationId]!, { u: page() }), { 'user-agent': googlebot })
    // And one person, who is the organization's only visitor of the file.
    await collect(pixelHit(key, { v: visitors.human, u: page() }), { origin: 'https://shop.test' })

    const expected = { bot: 2, automation: 3, origin: 2, privacy: 2, invalid: 1, consent: 0, company_only: 0 }
    // Ingest writes its counts every 2 s: the totals show them once written.
    const { filtered } = await eventually(async () => {
      const answer = await totals(org, h.boot.apiKey)
      return answer.filtered.total >= 10 ? answer : undefined
    })
    expect(filtered).toEqual({ total: 10, byReason: expected })
    expect(await metric('unknown_key')).toBe(before.unknown_key + 1)
    for (const [reason, count] of Object.entries(expected)) {
      // The other organization's crawler hit counts in /metrics, not in this organization's figures.
      expect(await metric(reason), reason).toBe(before[reason] + count + (reason === 'bot' ? 1 : 0))
    }

    // None of them is a page view or a visitor: the one person is.
    const stored = await h.store.query<{ path: string; visitor_id: string }>(
      'SELECT path, visitor_id FROM page_views WHERE startsWith(path, {marker:String})',
      { marker },
    )
    expect(stored.map((row) => row.visitor_id)).toEqual([visitors.human])
    await settleFirstHours(h.store)
    const answer = await totals(org, h.boot.apiKey)
    expect(answer).toMatchObject({ visitors: 1, pageViews: 1, filtered: { total: 10 } })
    for (const visitor of visitors.bots.slice(0, 3)) {
      const profile = await h.request({
        method: 'GET',
        url: `/api/v1/visitor-tracking/${org}/visitors/${visitor}`,
      })
      expect(profile.statusCode).toBe(404)
    }

    // The other organization sees its own crawler hit (written with the same flush or the next)
    // and nothing of the first's.
    const theirs = await eventually(async () => {
      const answer = await totals(other.organizationId, other.key)
      return answer.filtered.total >= 1 ? answer : undefined
    })
    expect(theirs.filtered).toEqual({
      total: 1,
      byReason: { bot: 1, automation: 0, origin: 0, privacy: 0, invalid: 0, consent: 0, company_only: 0 },
    })
    // Counted by day: a range of other days has none.
    expect((await totals(org, h.boot.apiKey, '2020-01-01', '2020-01-31')).filtered.total).toBe(0)
  })
})
