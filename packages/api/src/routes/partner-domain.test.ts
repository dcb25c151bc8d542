// The partner's custom domain through the server, against a real DNS server on loopback: set,
// instructions, verify failing then succeeding, /tls/ask, the snippets' host, the pixel served on
// the domain, bad domains.

import { startZoneServer, type Zone } from '@visitor-id/testing/dns-zone-server'
import { type Harness, startHarness } from '@visitor-id/testing/harness'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

let h: Harness
let dns: Awaited<ReturnType<typeof startZoneServer>>
const zone: Zone = { 't.service.test': { A: ['192.0.2.10'] } }

beforeAll(async () => {
  dns = await startZoneServer(zone)
  h = await startHarness({ DNS_SERVERS: dns.address, PUBLIC_URL: 'https://t.service.test' })
})

afterAll(async () => {
  await h?.stop()
  await dns?.close()
})

const partner = (method: 'GET' | 'PUT' | 'POST', url: string, payload?: object) =>
  h.request({
    method,
    url: `/api/v1/partner${url}`,
    key: null,
    partnerKey: h.boot.partnerKey,
    ...(payload ? { payload } : {}),
  })

describe('custom domain', () => {
  it('set, verify against DNS, then the domain serves the pixel and is in every snippet', async () => {
    expect((await partner('GET', '/domain/verification')).json()).toMatchObject({
      domain: '',
      dnsRecords: [],
    })
    expect((await partner('POST', '/domain/verify')).json()).toMatchObject({
      success: false,
      verified: false,
    })
    const set = await partner('PUT', '/domain', { domain: 'Track.Partner.test.' })
    expect(set.statusCode, set.body).toBe(200)
    expect(set.json()).toMatchObject({
      domain: 'track.partner.test',
      verified: false,
      cnameTarget: 't.service.test',
      dnsRecords: [{ type: 'CNAME', name: 'track.partner.test', value: 't.service.test' }],
    })
    const pending = (await partner('GET', '/domain/verification')).json()
    expect(pending.dnsRecords[0].status).toBe('pending')
    expect(pending.instructions).toMatch(/CNAME/)

    const missing = (await partner('POST', '/domain/verify')).json()
    expect(missing).toMatchObject({
      success: false,
      verified: false,
      message: expect.stringMatching(/NXDOMAIN|does not exist/),
    })
    zone['track.partner.test'] = { CNAME: 'elsewhere.test' }
    const wrong = (await partner('POST', '/domain/verify')).json()
    expect(wrong.message).toMatch(/elsewhere\.test/)
    expect(
      (await h.server.app.inject({ method: 'GET', url: '/tls/ask?domain=track.partner.test' })).statusCode,
    ).toBe(404)

    zone['track.partner.test'] = { CNAME: 't.service.test' }
    expect((await partner('POST', '/domain/verify')).json()).toMatchObject({ success: true, verified: true })
    expect((await partner('GET', '/domain/verification')).json()).toMatchObject({
      verified: true,
      dnsRecords: [{ status: 'verified' }],
    })
    const ask = await h.server.app.inject({ method: 'GET', url: '/tls/ask?domain=track.partner.test' })
    expect(ask.statusCode).toBe(200)
    expect((await h.server.app.inject({ method: 'GET', url: '/tls/ask?domain=other.test' })).statusCode).toBe(
      404,
    )
    expect((await h.server.app.inject({ method: 'GET', url: '/tls/ask' })).statusCode).toBe(404)

    const snippet = await h.request({
      method: 'GET',
      url: `/api/v1/visitor-tracking/${h.boot.organizationId}/installation/script/jsSnippet`,
    })
    expect(snippet.json().script).toContain('https://track.partner.test/p.js')
    const pixel = await h.server.app.inject({
      method: 'GET',
      url: '/p.js',
      headers: { host: 'track.partner.test' },
    })
    expect(pixel.statusCode).toBe(200)
  })

  it('bad domains are 400 naming the field; replacing a domain starts over', async () => {
    for (const domain of [
      '203.0.113.5',
      '[::1]',
      't.service.test',
      'https://x.test/path',
      'a..b.test',
      `${'a'.repeat(250)}.test`,
      'localhost',
    ]) {
      const response = await partner('PUT', '/domain', { domain })
      expect(response.statusCode, domain).toBe(400)
      expect(JSON.stringify(response.json())).toContain('domain')
    }
    expect((await partner('PUT', '/domain', { domain: 42 })).statusCode).toBe(400)
    const replaced = (await partner('PUT', '/domain', { domain: 'go.partner.test' })).json()
    expect(replaced).toMatchObject({ domain: 'go.partner.test', verified: false })
    expect(
      (await h.server.app.inject({ method: 'GET', url: '/tls/ask?domain=track.partner.test' })).statusCode,
    ).toBe(404)
  })
})
