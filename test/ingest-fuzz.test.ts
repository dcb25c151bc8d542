import type { RunningServer } from '@visitor-id/server'
import { type InProcessServer, startInProcessServer } from '@visitor-id/testing/in-process-server'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BootstrapKeys, chromeUserAgent } from './fixtures/hits.js'

// Property tests over real HTTP handling (app.inject, real store): whatever a client sends to
// the ingest endpoints, the answer is never a 5xx.
let running: InProcessServer
let server: RunningServer
let keys: BootstrapKeys

beforeAll(async () => {
  running = await startInProcessServer('vid-fuzz-', { TRUST_PROXY: '1', INGEST_BATCH_MS: '5' })
  server = running.server
  keys = running.keys
})

afterAll(async () => {
  await running?.close()
})

const uuid = fc.uuid()
const anyValue = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.string({ unit: 'grapheme', maxLength: 3000 }),
  fc.array(fc.string(), { maxLength: 3 }),
  fc.dictionary(fc.string(), fc.string(), { maxKeys: 3 }),
)

// Hits near the valid shape, with any field replaced, dropped or added.
const hit = fc
  .record(
    {
      k: fc.oneof(fc.constant('KEY'), fc.string(), fc.stringMatching(/^pk_[0-9a-f]{24}$/)),
      e: fc.oneof(fc.constantFrom('pv', 'en', 'id'), fc.string()),
      v: fc.oneof(uuid, fc.string()),
      s: fc.oneof(uuid, fc.string()),
      u: fc.oneof(fc.webUrl({ withQueryParameters: true, withFragments: true }), fc.string()),
      r: fc.oneof(fc.webUrl(), fc.string()),
      ti: fc.string({ maxLength: 2000 }),
      sw: fc.oneof(fc.integer(), fc.double()),
      sc: fc.oneof(fc.integer({ min: -10, max: 1000 }), fc.double()),
      d: fc.oneof(fc.integer(), fc.double({ min: 0, max: 1e12 })),
      ts: fc.oneof(fc.integer(), fc.double(), fc.constant(Date.now())),
      em: fc.oneof(fc.emailAddress(), fc.string()),
      wd: fc.oneof(fc.boolean(), fc.integer()),
    },
    { requiredKeys: [] },
  )
  .chain((base) =>
    fc
      .dictionary(fc.string({ maxLength: 5 }), anyValue, { maxKeys: 3 })
      .map((extra) => ({ ...extra, ...base, k: base.k === 'KEY' ? keys.trackingKey : base.k })),
  )

// Valid hits with random contents, so the whole pipeline and the store are exercised too.
const validHit = fc
  .record({
    e: fc.constantFrom('pv', 'en', 'id'),
    v: uuid,
    s: uuid,
    u: fc.webUrl({ withQueryParameters: true, withFragments: true }),
    r: fc.oneof(fc.webUrl({ withQueryParameters: true }), fc.string()),
    ti: fc.string({ unit: 'grapheme', maxLength: 600 }),
    sw: fc.double({ noNaN: true }),
    la: fc.string({ maxLength: 50 }),
    d: fc.double({ min: 0, max: 1e12, noNaN: true }),
    sc: fc.double({ min: 0, max: 1e6, noNaN: true }),
    em: fc
      .tuple(fc.stringMatching(/^[a-z0-9]{1,20}$/), fc.domain())
      .map(([user, domain]) => `${user}@${domain}`),
  })
  .map((h) => ({ ...h, k: keys.trackingKey }))

const body = fc.oneof(
  { arbitrary: validHit.map((h) => JSON.stringify(h)), weight: 3 },
  hit.map((h) => JSON.stringify(h)),
  fc.array(hit, { maxLength: 25 }).map((hits) => JSON.stringify(hits)),
  fc.json(),
  fc.string({ maxLength: 200 }),
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.constant(''),
  fc.constant('{"k":'),
  fc.constant(`[${'{},'.repeat(5000)}{}]`),
)

const headerValue = fc.oneof(
  fc.string({ maxLength: 100 }).filter((value) => /^[\t\x20-\x7e]*$/.test(value)),
  fc.ipV4(),
  fc.ipV6(),
  fc.constant(chromeUserAgent),
  fc.constant('1'),
  fc.webUrl(),
)

const headers = fc.record(
  {
    'content-type': fc.oneof(
      { arbitrary: fc.constantFrom('text/plain', 'text/plain;charset=UTF-8', 'application/json'), weight: 6 },
      fc.constantFrom('application/xml', 'multipart/form-data', 'text/html'),
      headerValue,
    ),
    'user-agent': fc.oneof({ arbitrary: fc.constant(chromeUserAgent), weight: 3 }, headerValue),
    'x-forwarded-for': fc.oneof(
      headerValue,
      fc.array(fc.ipV4(), { maxLength: 4 }).map((ips) => ips.join(', ')),
    ),
    origin: headerValue,
    referer: headerValue,
    'sec-gpc': headerValue,
    dnt: headerValue,
    'accept-encoding': headerValue,
  },
  { requiredKeys: ['content-type'] },
)

describe('no 5xx, whatever comes in', () => {
  it('POST /collect', { timeout: 120_000 }, async () => {
    const statuses = new Map<number, number>()
    await fc.assert(
      fc.asyncProperty(body, headers, async (payload, requestHeaders) => {
        const response = await server.app.inject({
          method: 'POST',
          url: '/collect',
          headers: requestHeaders,
          payload,
        })
        statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1)
        expect(response.statusCode, response.body).toBeLessThan(500)
      }),
      { numRuns: 400 },
    )
    console.log('statuses', Object.fromEntries(statuses))
    expect(statuses.get(202)).toBeGreaterThan(20)
  })

  it('GET /i.gif, /c/<key> and /p.js', { timeout: 120_000 }, async () => {
    const query = fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 80 }), { maxKeys: 4 })
    await fc.assert(
      fc.asyncProperty(query, headers, fc.string({ maxLength: 120 }), async (params, requestHeaders, key) => {
        const search = new URLSearchParams({ k: keys.trackingKey, ...params }).toString()
        for (const url of [`/i.gif?${search}`, `/c/${encodeURIComponent(key)}`, '/p.js']) {
          const response = await server.app.inject({ method: 'GET', url, headers: requestHeaders })
          expect(response.statusCode, `${url}: ${response.body.slice(0, 200)}`).toBeLessThan(500)
        }
      }),
      { numRuns: 200 },
    )
  })
})
