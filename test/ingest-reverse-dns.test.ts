import { randomUUID } from 'node:crypto'
import type { RunningServer } from '@visitor-id/server'
import { startDnsServer, type TestDnsServer } from '@visitor-id/testing/dns-server'
import { type InProcessServer, startInProcessServer } from '@visitor-id/testing/in-process-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BootstrapKeys, collect, eventually, pixelHit } from './fixtures/hits.js'

// Company by reverse DNS end to end: the all-in-one server with DNS_SERVERS pointed at a real DNS
// server on 127.0.0.1 that this test starts. Documentation addresses (203.0.113.0/24, 2001:db8::/32)
// are in no ASN data set, so reverse DNS is asked for them; X-Forwarded-For (TRUST_PROXY) sends
// the hits from there.
let dns: TestDnsServer
let running: InProcessServer
let server: RunningServer
let keys: BootstrapKeys

beforeAll(async () => {
  dns = await startDnsServer({
    '203.0.113.10': ['vpn.acme-widgets.co.uk'],
    '203.0.113.11': ['mail.globex.com'],
    '203.0.113.12': ['203-0-113-12.dsl.example.net'],
    '203.0.113.13': 'nxdomain',
    '203.0.113.14': 'silent',
    '2001:db8::10': ['gw.acme-widgets.co.uk'],
  })
  running = await startInProcessServer('vid-rdns-', {
    LOG_LEVEL: 'warn',
    TRUST_PROXY: '1',
    INGEST_BATCH_MS: '20',
    DNS_SERVERS: dns.address,
  })
  server = running.server
  keys = running.keys
  // An imported company with the domain; the periodic refresh would load it, the test does at once.
  const now = new Date().toISOString()
  await server.repos.companies.save({
    ...blankCompany,
    id: 'acme-widgets',
    name: 'Acme Widgets Ltd',
    domain: 'acme-widgets.co.uk',
    source: 'import',
    created_at: now,
    updated_at: now,
  })
  await server.ingest!.ipIntelligence.reloadCompanies()
})

afterAll(async () => {
  await running?.close()
  await dns?.close()
})

const blankCompany = {
  industry: '',
  size: '',
  employee_size_range: '',
  revenue_range: '',
  linkedin_url: '',
  website_url: '',
  description: '',
  logo_url: '',
  address: '',
  address_2: '',
  city: '',
  region: '',
  postal_code: '',
  country: '',
}

/** Sends one page view from `ip` and returns the company stored with it, and how long the 202 took. */
async function hitFrom(ip: string, visitor = randomUUID()) {
  const path = `/rdns-${randomUUID()}`
  const started = performance.now()
  const response = await collect(
    server.url,
    pixelHit(keys.trackingKey, { v: visitor, u: `https://shop.test${path}` }),
    { 'x-forwarded-for': ip },
  )
  const ms = performance.now() - started
  expect(response.status).toBe(202)
  const rows = await server.store.query<{ company_id: string }>(
    'SELECT company_id FROM page_views WHERE path = {path:String}',
    { path },
  )
  expect(rows).toHaveLength(1)
  return { companyId: rows[0]!.company_id, ms }
}

describe('company by reverse DNS', () => {
  it('PTR -> registered domain (co.uk) -> the imported company with that domain', async () => {
    expect((await hitFrom('203.0.113.10')).companyId).toBe('acme-widgets')
    expect(dns.asked('203.0.113.10')).toBe(1)
  })

  it('IPv6: asked under ip6.arpa, same company', async () => {
    expect((await hitFrom('2001:db8::10')).companyId).toBe('acme-widgets')
  })

  it('no imported company with the domain: a company named by it, its row written in the background', async () => {
    const visitor = randomUUID()
    expect((await hitFrom('203.0.113.11', visitor)).companyId).toBe('dns:globex.com')
    // Derived companies are written in the background, a few seconds later (read from the store:
    // the repository may serve a cached miss).
    const company = await eventually(
      async () =>
        (
          await server.store.query<Record<string, string>>(
            `SELECT name, domain, source FROM companies FINAL WHERE id = 'dns:globex.com'`,
          )
        )[0],
    )
    expect(company).toMatchObject({ name: 'globex.com', domain: 'globex.com', source: 'dns' })
    const profile = await fetch(
      `${server.url}/api/v1/visitor-tracking/${keys.organizationId}/visitors/${visitor}`,
      {
        headers: { 'x-api-key': keys.apiKey },
      },
    )
    expect(((await profile.json()) as { company: { id: string } }).company).toMatchObject({
      id: 'dns:globex.com',
    })
  })

  it('one query per address: later and concurrent hits come from the cache', async () => {
    const before = dns.asked('203.0.113.11')
    const hits = await Promise.all([
      hitFrom('203.0.113.11'),
      hitFrom('203.0.113.11'),
      hitFrom('203.0.113.11'),
    ])
    expect(hits.map((hit) => hit.companyId)).toEqual(['dns:globex.com', 'dns:globex.com', 'dns:globex.com'])
    expect(dns.asked('203.0.113.11')).toBe(before)
    expect(dns.asked('203.0.113.10')).toBe(1)
  })

  it('an address-encoded access-line name and NXDOMAIN give no company', async () => {
    expect((await hitFrom('203.0.113.12')).companyId).toBe('')
    expect((await hitFrom('203.0.113.13')).companyId).toBe('')
    expect(dns.asked('203.0.113.12')).toBe(1)
  })

  it('a DNS server that never answers: no company, and the hit is stored without waiting for it', async () => {
    const { companyId, ms } = await hitFrom('203.0.113.14')
    expect(companyId).toBe('')
    // The resolver would give up after about 1.5 s; the hit waited 50 ms for it at most.
    expect(ms).toBeLessThan(1000)
    expect(dns.asked('203.0.113.14')).toBe(1)
  })

  it('an import reaches the cached domain at the next refresh', async () => {
    const now = new Date().toISOString()
    await server.repos.companies.save({
      ...blankCompany,
      id: 'globex',
      name: 'Globex Corporation',
      domain: 'globex.com',
      source: 'import',
      created_at: now,
      updated_at: now,
    })
    const before = dns.asked('203.0.113.11')
    await server.ingest!.ipIntelligence.reloadCompanies()
    expect((await hitFrom('203.0.113.11')).companyId).toBe('globex')
    expect(dns.asked('203.0.113.11')).toBe(before)
  })

  it('queries are counted in /metrics by outcome', async () => {
    const text = await (await fetch(`${server.url}/metrics`)).text()
    const count = (outcome: string) =>
      Number(
        new RegExp(`^vid_ingest_reverse_dns_lookups_total\\{outcome="${outcome}"\\} (\\d+)$`, 'm').exec(
          text,
        )?.[1],
      )
    expect(count('domain')).toBe(3)
    expect(count('skipped')).toBe(1)
    expect(count('not_found')).toBe(1)
  })
})
