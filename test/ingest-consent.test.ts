import { randomUUID } from 'node:crypto'
import type { RunningServer } from '@visitor-id/server'
import { type InProcessServer, startInProcessServer } from '@visitor-id/testing/in-process-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BootstrapKeys, collect, eventually, pixelHit } from './fixtures/hits.js'

// Consent and company-only countries end to end in one process, with the real IP data (DB-IP Lite:
// 85.214.132.117 is Strato in Germany, AS6724; 17.0.0.10 is Apple in the US, AS714). TRUST_PROXY
// lets the test speak for clients anywhere through X-Forwarded-For.
let running: InProcessServer
let server: RunningServer
let keys: BootstrapKeys

const germany = '85.214.132.117'
const unitedStates = '17.0.0.10'

beforeAll(async () => {
  running = await startInProcessServer('vid-consent-', {
    LOG_LEVEL: 'warn',
    TRUST_PROXY: '1',
    INGEST_BATCH_MS: '20',
    IDENTIFY_BATCH_MS: '20',
    REVERSE_DNS: '0',
  })
  server = running.server
  keys = running.keys
})

afterAll(async () => {
  await running?.close()
})

const api = (route: string, init: RequestInit = {}) =>
  fetch(`${server.url}/api/v1${route}`, {
    ...init,
    headers: { 'x-api-key': keys.apiKey, 'content-type': 'application/json', ...(init.headers ?? {}) },
  })

/** The visitor's page views as stored, once `count` of them are there. */
const pageViews = (visitor: string, count: number) =>
  eventually(async () => {
    const rows = await server.store.query<Record<string, unknown>>(
      'SELECT type, email, ip, country, company_id FROM page_views WHERE visitor_id = {visitor:UUID} ORDER BY timestamp, path',
      { visitor },
    )
    return rows.length >= count ? rows : undefined
  })

/** The visitor's row in `visitors` (what identification writes), if any. */
const visitorRow = async (visitor: string) =>
  (
    await server.store.query<{ email: string; identified_at: string | null }>(
      'SELECT email, identified_at FROM visitors FINAL WHERE id = {visitor:UUID}',
      { visitor },
    )
  )[0]

/** The organization's filtered hits of a reason, as written to `dropped_hits`. */
async function droppedHits(reason: string) {
  await server.ingest!.droppedHits.flush()
  const rows = await server.store.query<{ hits: number }>(
    'SELECT sum(hits) AS hits FROM dropped_hits WHERE organization_id = {org:UUID} AND reason = {reason:String}',
    { org: keys.organizationId, reason },
  )
  return Number(rows[0]?.hits ?? 0)
}

const putPrivacy = async (body: object) => {
  const response = await api(`/organization/${keys.organizationId}/privacy`, {
    method: 'PUT',
    body: JSON.stringify(body),
  })
  expect(response.status, await response.clone().text()).toBe(200)
  return (await response.json()) as Record<string, unknown>
}

/**
 * A page view, an identify hit and a second page view of a new visitor from `ip`; `extra` goes on
 * every hit. The second view is the marker: once it is stored, the identify hit was stored or dropped.
 */
async function visitAndIdentify(ip: string, email: string, extra: object = {}) {
  const visitor = randomUUID()
  const session = randomUUID()
  const headers = { 'x-forwarded-for': ip }
  const ts = Date.now() - 10_000
  const hits = [
    pixelHit(keys.trackingKey, { v: visitor, s: session, ts, ...extra }),
    pixelHit(keys.trackingKey, { v: visitor, s: session, ts: ts + 1, e: 'id', em: email, ...extra }),
    pixelHit(keys.trackingKey, {
      v: visitor,
      s: session,
      ts: ts + 2,
      u: 'https://shop.test/after',
      ...extra,
    }),
  ]
  for (const hit of hits) expect((await collect(server.url, hit, headers)).status).toBe(202)
  return visitor
}

/** The visitor's rows once the marker page view (`visitAndIdentify`) is stored. */
const rowsAfterMarker = (visitor: string) =>
  eventually(async () => {
    const rows = await pageViews(visitor, 1)
    return rows.some((row) => row.type === 'pageview' && rows.indexOf(row) > 0) ? rows : undefined
  })

describe('consent', () => {
  it('a hit without identification consent identifies no one: the identify is dropped and counted', async () => {
    const before = await droppedHits('consent')
    const email = `nobody-${randomUUID().slice(0, 8)}@example.com`
    const visitor = await visitAndIdentify(unitedStates, email, { cn: 2 })
    const rows = await rowsAfterMarker(visitor)
    await server.ingest!.identifyQueue.drained()
    // The page views count, anonymously; nothing anywhere carries the email.
    expect(rows.map((row) => [row.type, row.email])).toEqual([
      ['pageview', ''],
      ['pageview', ''],
    ])
    expect(await visitorRow(visitor)).toBeUndefined()
    const withEmail = await server.store.query<{ n: number }>(
      'SELECT count() AS n FROM page_views WHERE email = {email:String}',
      { email },
    )
    expect(Number(withEmail[0]!.n)).toBe(0)
    expect(await droppedHits('consent')).toBe(before + 1)
  })

  it('without storage consent only, or with everything granted (cn 0), identification works as before', async () => {
    for (const cn of [1, 0]) {
      const email = `granted-${cn}-${randomUUID().slice(0, 8)}@example.com`
      const visitor = await visitAndIdentify(unitedStates, email, { cn })
      const rows = await pageViews(visitor, 3)
      expect(rows.map((row) => [row.type, row.email])).toEqual([
        ['pageview', ''],
        ['identify', email],
        ['pageview', ''],
      ])
      expect(rows[0]!.ip).toBe(unitedStates)
      await server.ingest!.identifyQueue.drained()
      expect(await eventually(() => visitorRow(visitor))).toMatchObject({ email })
    }
  })

  it('refuses a consent value that is not a small integer', async () => {
    for (const cn of ['denied', -1, 1.5, 256]) {
      expect((await collect(server.url, pixelHit(keys.trackingKey, { cn }))).status, String(cn)).toBe(400)
    }
  })
})

describe('company-only countries', () => {
  it('a German hit in an organization with the EEA on: company kept, no IP, no person; a US hit unaffected', async () => {
    const settings = await putPrivacy({ companyOnly: { enabled: true } })
    expect(settings.companyOnly).toMatchObject({ enabled: true, countries: [] })
    expect((settings.companyOnly as { appliedCountries: string[] }).appliedCountries).toContain('DE')
    try {
      const before = await droppedHits('company_only')
      // The entity change reaches ingest's read model within seconds.
      const german = await eventually(async () => {
        const visitor = await visitAndIdentify(germany, `hans-${randomUUID().slice(0, 8)}@example.de`)
        const rows = await rowsAfterMarker(visitor)
        return rows[0]!.ip === '' ? { visitor, rows } : undefined
      })
      const anonymous = { type: 'pageview', email: '', ip: '', country: 'DE', company_id: 'as6724' }
      expect(german.rows).toEqual([anonymous, anonymous])
      await server.ingest!.identifyQueue.drained()
      expect(await visitorRow(german.visitor)).toBeUndefined()
      expect(await droppedHits('company_only')).toBeGreaterThan(before)

      const email = `us-${randomUUID().slice(0, 8)}@example.com`
      const american = await visitAndIdentify(unitedStates, email)
      const rows = await pageViews(american, 3)
      const view = { type: 'pageview', email: '', ip: unitedStates, country: 'US', company_id: 'as714' }
      expect(rows).toEqual([view, { ...view, type: 'identify', email }, view])
    } finally {
      await putPrivacy({ companyOnly: { enabled: false } })
    }
  })

  it('an explicit list applies to its countries only; turned off, German hits keep their IP again', async () => {
    const settings = await putPrivacy({ companyOnly: { enabled: true, countries: ['US', 'GB', 'US'] } })
    expect(settings.companyOnly).toEqual({
      enabled: true,
      countries: ['GB', 'US'],
      appliedCountries: ['GB', 'US'],
    })
    try {
      const american = await eventually(async () => {
        const visitor = await visitAndIdentify(unitedStates, `list-${randomUUID().slice(0, 8)}@example.com`)
        const rows = await rowsAfterMarker(visitor)
        return rows[0]!.ip === '' ? rows : undefined
      })
      const anonymous = { type: 'pageview', email: '', ip: '', country: 'US', company_id: 'as714' }
      expect(american).toEqual([anonymous, anonymous])
      const visitor = randomUUID()
      await collect(server.url, pixelHit(keys.trackingKey, { v: visitor }), { 'x-forwarded-for': germany })
      expect((await pageViews(visitor, 1))[0]).toMatchObject({ ip: germany, country: 'DE' })
    } finally {
      await putPrivacy({ companyOnly: { enabled: false } })
    }
    const off = await eventually(async () => {
      const visitor = randomUUID()
      await collect(server.url, pixelHit(keys.trackingKey, { v: visitor }), {
        'x-forwarded-for': unitedStates,
      })
      const rows = await pageViews(visitor, 1)
      return rows[0]!.ip ? rows : undefined
    })
    expect(off[0]).toMatchObject({ ip: unitedStates, country: 'US' })
  })
})
