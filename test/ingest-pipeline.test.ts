import { createHash, randomUUID } from 'node:crypto'
import { gunzipSync } from 'node:zlib'
import type { RunningServer } from '@visitor-id/server'
import { type InProcessServer, startInProcessServer } from '@visitor-id/testing/in-process-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BootstrapKeys, chromeUserAgent, collect, eventually, pixelHit } from './fixtures/hits.js'

// Ingest end to end in one process: serving the pixel, the pipeline's filters and enrichment
// with the real IP data, the session view, identify, /metrics. TRUST_PROXY lets the test speak
// for clients anywhere on the internet through X-Forwarded-For.
let running: InProcessServer
let server: RunningServer
let keys: BootstrapKeys

beforeAll(async () => {
  running = await startInProcessServer('vid-ingest-', {
    LOG_LEVEL: 'warn',
    TRUST_PROXY: '1',
    INGEST_BATCH_MS: '20',
    IDENTIFY_BATCH_MS: '20',
    // Companies here come from the ASN data alone; reverse DNS has test/ingest-reverse-dns.test.ts.
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

const profile = async (visitorId: string) => {
  const response = await api(`/visitor-tracking/${keys.organizationId}/visitors/${visitorId}`)
  return response.status === 200 ? ((await response.json()) as Record<string, unknown>) : undefined
}

/** The profile once identification (which follows the acknowledgement) has given it a contact. */
const identifiedProfile = (visitorId: string) =>
  eventually(async () => {
    const found = await profile(visitorId)
    return found?.contact ? found : undefined
  })

/** Waits until every identify hit acknowledged so far has been identified. */
const identificationDone = () => server.ingest!.identifyQueue.drained()

const countRows = async (where: string, params: Record<string, unknown>) =>
  Number(
    (
      await server.store.query<{ n: number }>(`SELECT count() AS n FROM page_views WHERE ${where}`, params)
    )[0]!.n,
  )

const updatePixelConfig = async (body: Record<string, unknown>) => {
  const response = await api(`/visitor-tracking/${keys.organizationId}/pixel-config`, {
    method: 'PUT',
    body: JSON.stringify(body),
  })
  expect(response.status).toBe(200)
}

const metric = async (name: string) => {
  const text = await (await fetch(`${server.url}/metrics`)).text()
  const line = text.split('\n').find((l) => l.startsWith(`${name} `))
  return Number(line?.split(' ')[1] ?? Number.NaN)
}

describe('serving the pixel', () => {
  it('/p.js: JavaScript, long cache, ETag revalidation, gzip and brotli', async () => {
    const plain = await fetch(`${server.url}/p.js`, { headers: { 'accept-encoding': 'identity' } })
    expect(plain.status).toBe(200)
    expect(plain.headers.get('content-type')).toBe('application/javascript; charset=utf-8')
    expect(plain.headers.get('cache-control')).toMatch(/max-age=86400/)
    const etag = plain.headers.get('etag')!
    const source = await plain.text()
    expect(source).toMatch(/^\(\(\)=>\{/)

    const again = await fetch(`${server.url}/p.js`, { headers: { 'if-none-match': etag } })
    expect(again.status).toBe(304)

    // Node's fetch decodes for us; read raw bytes through inject instead.
    const gz = await server.app.inject({
      method: 'GET',
      url: '/p.js',
      headers: { 'accept-encoding': 'gzip' },
    })
    expect(gz.headers['content-encoding']).toBe('gzip')
    expect(gunzipSync(gz.rawPayload).toString()).toBe(source)
    expect(gz.rawPayload.length).toBeLessThanOrEqual(1500)
    const br = await server.app.inject({
      method: 'GET',
      url: '/p.js',
      headers: { 'accept-encoding': 'br, gzip' },
    })
    expect(br.headers['content-encoding']).toBe('br')
    expect(br.headers.vary).toBe('accept-encoding')
  })

  it('/c/<key>: the run-time flags; an unknown key looks like a known one with defaults', async () => {
    const known = await fetch(`${server.url}/c/${keys.trackingKey}`)
    expect(known.headers.get('access-control-allow-origin')).toBe('*')
    expect(await known.json()).toEqual({})
    const unknown = await fetch(`${server.url}/c/pk_${'0'.repeat(24)}`)
    expect(await unknown.json()).toEqual({})
    expect((await fetch(`${server.url}/c/${'x'.repeat(300)}`)).status).toBeLessThan(500)
  })
})

describe('enrichment and sessions', () => {
  it('fills every session field from hits sent in separate batches (before any merge)', async () => {
    const visitor = randomUUID()
    const session = randomUUID()
    const start = Date.now() - 90_000
    const base = { v: visitor, s: session, sw: 1440, sh: 900, la: 'en-US', tz: 'America/New_York' }
    const headers = { 'x-forwarded-for': '8.8.8.8', origin: 'https://shop.test' }
    const hits = [
      pixelHit(keys.trackingKey, {
        ...base,
        u: 'https://shop.test/landing?utm_source=google&utm_medium=cpc&utm_campaign=spring&utm_term=crm&utm_content=ad1&gclid=G123',
        r: 'https://www.bing.com/search?q=visitor+identification',
        ti: 'Landing',
        ts: start,
      }),
      pixelHit(keys.trackingKey, {
        ...base,
        e: 'en',
        u: 'https://shop.test/landing',
        d: 20_000,
        sc: 55,
        ts: start + 20_000,
      }),
      pixelHit(keys.trackingKey, {
        ...base,
        u: 'https://shop.test/pricing',
        r: 'https://shop.test/landing',
        ts: start + 30_000,
      }),
      pixelHit(keys.trackingKey, {
        ...base,
        e: 'en',
        u: 'https://shop.test/pricing',
        d: 45_000,
        sc: 80,
        ts: start + 75_000,
      }),
    ]
    for (const hit of hits) expect((await collect(server.url, hit, headers)).status).toBe(202)

    // Four inserts, four partial session rows: the API must combine them.
    const partial = await server.store.query<{ n: number }>(
      'SELECT count() AS n FROM sessions WHERE session_id = {session:UUID}',
      { session },
    )
    expect(Number(partial[0]!.n)).toBeGreaterThan(1)

    const found = (await profile(visitor))!
    const sessions = found.sessions as Record<string, unknown>[]
    expect(sessions).toHaveLength(1)
    const expected = {
      id: session,
      country: 'US',
      region: 'California',
      isp: expect.stringMatching(/google/i),
      asn: 'AS15169',
      connectionType: 'hosting',
      isHosting: true,
      isAnonymous: false,
      landingPage:
        'https://shop.test/landing?utm_source=google&utm_medium=cpc&utm_campaign=spring&utm_term=crm&utm_content=ad1&gclid=G123',
      entryPage: '/landing',
      exitPage: '/pricing',
      referrer: 'https://www.bing.com/search?q=visitor+identification',
      searchEngine: 'Bing',
      searchTerm: 'visitor identification',
      utmSource: 'google',
      utmMedium: 'cpc',
      utmCampaign: 'spring',
      utmTerm: 'crm',
      utmContent: 'ad1',
      deviceType: 'desktop',
      browser: 'Chrome',
      browserVersion: '124.0.0.0',
      os: 'Windows',
      osVersion: '10',
      screenWidth: 1440,
      screenHeight: 900,
      language: 'en-US',
      timezone: 'America/New_York',
      ipAddress: '8.8.8.8',
      sessionDurationSeconds: 75,
      pageViewCount: 2,
      maxScrollPercent: 80,
      trackingParams: { gclid: 'G123' },
    }
    expect(sessions[0]).toMatchObject(expected)
    expect(sessions[0]!.city).toBeTruthy()
    expect((found.pageViews as unknown[]).length).toBe(2)

    // Background merges change nothing.
    await server.store.command('OPTIMIZE TABLE sessions FINAL')
    expect(((await profile(visitor))!.sessions as unknown[])[0]).toMatchObject(expected)
  })

  it('identify stores the email on the hit and shows the contact in the visitor profile', async () => {
    const visitor = randomUUID()
    const session = randomUUID()
    const first = Date.now() - 60_000
    await collect(server.url, pixelHit(keys.trackingKey, { v: visitor, s: session, ts: first }))
    const sent = await collect(
      server.url,
      pixelHit(keys.trackingKey, { v: visitor, s: session, e: 'id', em: '  Ada@Example.COM ' }),
    )
    expect(sent.status).toBe(202)
    const found = await identifiedProfile(visitor)
    expect(found.contact).toMatchObject({ email: 'ada@example.com' })
    expect(Date.parse(found.firstSeenAt as string)).toBeLessThanOrEqual(first + 1)
    expect(
      await countRows("visitor_id = {visitor:UUID} AND type = 'identify' AND email = 'ada@example.com'", {
        visitor,
      }),
    ).toBe(1)
    // An identify without an email is dropped, never stored.
    const before = await metric('vid_ingest_hits_dropped_total{reason="invalid"}')
    expect(
      (await collect(server.url, pixelHit(keys.trackingKey, { v: visitor, s: session, e: 'id' }))).status,
    ).toBe(202)
    expect(await metric('vid_ingest_hits_dropped_total{reason="invalid"}')).toBe(before + 1)
  })

  it('identify finds the contact: a person with its company, 1 credit, visitor.identified stored and dispatched', async () => {
    const at = new Date().toISOString()
    const email = `grace-${randomUUID().slice(0, 8)}@globex.test`
    await server.store.insert('companies', [
      {
        id: 'globex',
        name: 'Globex',
        domain: 'globex.test',
        industry: 'Manufacturing',
        created_at: at,
        updated_at: at,
        version: 1,
      },
    ])
    await server.store.insert('contacts', [
      {
        id: email,
        email,
        first_name: 'Grace',
        last_name: 'Hopper',
        job_title: 'Admiral',
        company_id: 'globex',
        created_at: at,
        updated_at: at,
        version: 1,
      },
    ])
    const balance = async () =>
      (
        (await (await api(`/organization/${keys.organizationId}`)).json()) as {
          identificationCredits: number
        }
      ).identificationCredits
    const credits = await balance()
    const visitor = randomUUID()
    const session = randomUUID()
    await collect(server.url, pixelHit(keys.trackingKey, { v: visitor, s: session }))
    expect(
      (
        await collect(
          server.url,
          pixelHit(keys.trackingKey, { v: visitor, s: session, e: 'id', em: email.toUpperCase() }),
        )
      ).status,
    ).toBe(202)
    const found = await identifiedProfile(visitor)
    expect(found.contact).toMatchObject({
      email,
      firstName: 'Grace',
      lastName: 'Hopper',
      jobTitle: 'Admiral',
    })
    expect(found.company).toMatchObject({ id: 'globex', name: 'Globex', domain: 'globex.test' })
    expect(await balance()).toBe(credits - 1)
    // Stored before the visitor row said so, then handed to the job queue by the worker.
    const event = await eventually(async () => {
      const [row] = await server.store.query<{ payload: string; marks: number }>(
        `SELECT payload, (SELECT count() FROM event_marks WHERE event_id IN (
            SELECT event_id FROM events WHERE visitor_id = {visitor:UUID} AND type = 'visitor.identified')) AS marks
         FROM events FINAL WHERE visitor_id = {visitor:UUID} AND type = 'visitor.identified'`,
        { visitor },
      )
      return Number(row?.marks) > 0 ? row : undefined
    })
    expect(JSON.parse(event.payload)).toMatchObject({
      event_type: 'visitor.identified',
      organization_id: keys.organizationId,
      session_id: session,
      visitor: { id: visitor, email, first_name: 'Grace' },
      company: { id: 'globex', name: 'Globex' },
      session: { is_hosting: expect.any(Boolean), is_anonymous: expect.any(Boolean) },
    })
    // Identified again: no second charge, no second event.
    await collect(server.url, pixelHit(keys.trackingKey, { v: visitor, s: session, e: 'id', em: email }))
    await identificationDone()
    expect(await balance()).toBe(credits - 1)
    const [events] = await server.store.query<{ n: number }>(
      'SELECT count() AS n FROM events FINAL WHERE visitor_id = {visitor:UUID}',
      { visitor },
    )
    expect(Number(events?.n)).toBe(1)
  })

  it('identify with the SHA-256 of an email finds its contact; anything else that is not an email is refused', async () => {
    const at = new Date().toISOString()
    const email = `hedy-${randomUUID().slice(0, 8)}@globex.test`
    await server.store.insert('contacts', [
      { id: email, email, first_name: 'Hedy', created_at: at, updated_at: at, version: 1 },
    ])
    const visitor = randomUUID()
    const hash = createHash('sha256').update(email).digest('hex').toUpperCase()
    const sent = await collect(server.url, pixelHit(keys.trackingKey, { v: visitor, e: 'id', em: hash }))
    expect(sent.status).toBe(202)
    expect((await identifiedProfile(visitor)).contact).toMatchObject({ email, firstName: 'Hedy' })
    for (const em of ['not-an-email', hash.slice(1), `${hash}0`]) {
      const refused = await collect(server.url, pixelHit(keys.trackingKey, { v: visitor, e: 'id', em }))
      expect(refused.status).toBe(400)
    }
  })

  it('a business network names its company; the company row exists', async () => {
    const visitor = randomUUID()
    await collect(server.url, pixelHit(keys.trackingKey, { v: visitor }), { 'x-forwarded-for': '17.0.0.10' })
    const found = (await profile(visitor))!
    expect(found.company).toMatchObject({ id: 'as714' })
    expect((found.sessions as Record<string, unknown>[])[0]).toMatchObject({
      connectionType: 'business',
      asn: 'AS714',
    })
    // Derived companies are written in the background, a few seconds later.
    const company = await eventually(() => server.repos.companies.get({ id: 'as714' }))
    expect(company).toMatchObject({ source: 'asn', name: expect.stringMatching(/apple/i) })
  })

  it('the noscript GIF records a page view from the Referer', async () => {
    const response = await fetch(`${server.url}/i.gif?k=${keys.trackingKey}`, {
      headers: { referer: 'https://shop.test/noscript-page', 'user-agent': chromeUserAgent },
    })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('image/gif')
    expect((await response.arrayBuffer()).byteLength).toBe(42)
    expect(await countRows("path = '/noscript-page'", {})).toBe(1)
  })
})

describe('filters', () => {
  it('drops unknown keys, bots and invalid hits, counts them, and stores nothing', async () => {
    const marker = `/filtered-${randomUUID()}`
    const url = `https://shop.test${marker}`
    const before = await metric('vid_ingest_hits_dropped_total{reason="bot"}')
    const automationBefore = await metric('vid_ingest_hits_dropped_total{reason="automation"}')
    const unknownBefore = await metric('vid_ingest_hits_dropped_total{reason="unknown_key"}')
    expect((await collect(server.url, pixelHit(`pk_${'0'.repeat(24)}`, { u: url }))).status).toBe(202)
    expect((await collect(server.url, pixelHit('not-a-key', { u: url }))).status).toBe(202)
    const bot = await collect(server.url, pixelHit(keys.trackingKey, { u: url }), {
      'user-agent': 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
    })
    expect(bot.status).toBe(202)
    const headless = await collect(server.url, pixelHit(keys.trackingKey, { u: url, wd: true }))
    expect(headless.status).toBe(202)
    expect((await collect(server.url, { k: keys.trackingKey, e: 'pv' })).status).toBe(400)
    expect(await countRows('path = {marker:String}', { marker })).toBe(0)
    // The crawler is a known bot; the page under webdriver, automation.
    expect(await metric('vid_ingest_hits_dropped_total{reason="bot"}')).toBe(before + 1)
    expect(await metric('vid_ingest_hits_dropped_total{reason="automation"}')).toBe(automationBefore + 1)
    expect(await metric('vid_ingest_hits_dropped_total{reason="unknown_key"}')).toBe(unknownBefore + 2)
  })

  it('pixel config changes reach ingest within seconds: origins, privacy signals, IP tracking', async () => {
    await updatePixelConfig({
      verifiedDomains: ['shop.test'],
      respectPrivacySignals: true,
      ipTracking: false,
    })
    try {
      const marker = `/cfg-${randomUUID()}`
      // The pubsub message has invalidated the cache: the first foreign hit is already dropped.
      const foreign = pixelHit(keys.trackingKey, { u: `https://evil.test${marker}` })
      await eventually(async () => {
        await collect(server.url, foreign, { origin: 'https://evil.test' })
        return (await metric('vid_ingest_hits_dropped_total{reason="origin"}')) > 0 ? true : undefined
      }, 5000)
      const spoofed = pixelHit(keys.trackingKey, { u: `https://shop.test${marker}` })
      expect((await collect(server.url, spoofed, { origin: 'https://evil.test' })).status).toBe(202)
      const private1 = pixelHit(keys.trackingKey, { u: `https://shop.test${marker}` })
      await collect(server.url, private1, { origin: 'https://shop.test', 'sec-gpc': '1' })
      expect(await countRows('path = {marker:String}', { marker })).toBe(0)
      expect(await metric('vid_ingest_hits_dropped_total{reason="privacy"}')).toBe(1)
      expect(await (await fetch(`${server.url}/c/${keys.trackingKey}`)).json()).toEqual({ p: 1 })

      const visitor = randomUUID()
      const allowed = pixelHit(keys.trackingKey, { v: visitor, u: `https://www.shop.test${marker}` })
      await collect(server.url, allowed, { origin: 'https://www.shop.test', 'x-forwarded-for': '8.8.8.8' })
      expect(await countRows("path = {marker:String} AND ip = ''", { marker })).toBe(1)
      const sessions = (await profile(visitor))!.sessions as Record<string, unknown>[]
      expect(sessions[0]).not.toHaveProperty('ipAddress')
      expect(sessions[0]).toMatchObject({ country: 'US' })
    } finally {
      await updatePixelConfig({ verifiedDomains: [], respectPrivacySignals: false, ipTracking: true })
    }
  })
})

describe('/metrics', () => {
  it('exposes the ingest counters in Prometheus text format', async () => {
    const response = await fetch(`${server.url}/metrics`)
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
    const text = await response.text()
    for (const name of [
      'vid_ingest_hits_accepted_total',
      'vid_ingest_hits_dropped_total{reason="unknown_key"}',
      'vid_ingest_hits_dropped_total{reason="origin"}',
      'vid_ingest_hits_dropped_total{reason="bot"}',
      'vid_ingest_hits_dropped_total{reason="automation"}',
      'vid_ingest_hits_dropped_total{reason="privacy"}',
      'vid_ingest_hits_dropped_total{reason="invalid"}',
      'vid_ingest_hits_spooled_total',
      'vid_ingest_hits_replayed_total',
      'vid_ingest_batch_writes_total',
      'vid_ingest_write_errors_total',
      'vid_ingest_spool_bytes',
    ]) {
      expect(text).toMatch(new RegExp(`^${name.replace(/[{}"]/g, '\\$&')} \\d+$`, 'm'))
    }
    expect(await metric('vid_ingest_hits_accepted_total')).toBeGreaterThan(5)
  })
})
