import { type Config, loadConfig } from '@visitor-id/core/config'
import type { Repositories } from '@visitor-id/core/repositories'
import type { Store } from '@visitor-id/core/store'
import { arpaName, startDnsServer, type TestDnsServer } from '@visitor-id/testing/dns-server'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createIngestService } from '../service.js'
import { createIpIntelligence, type IpInfo } from './ip-intelligence.js'
import {
  createReverseDns,
  organizationDomain,
  ptrName,
  type ReverseDnsOptions,
  type ReverseDnsOutcome,
} from './reverse-dns.js'

// Reverse DNS against a real DNS server on 127.0.0.1 (dns2), the one the resolver is pointed at.
let dns: TestDnsServer

beforeAll(async () => {
  dns = await startDnsServer({
    '203.0.113.10': ['vpn.acme-widgets.co.uk.'],
    '203.0.113.11': ['mail.globex.com'],
    '203.0.113.12': ['203-0-113-12.dsl.example.net'],
    '203.0.113.13': 'nxdomain',
    '203.0.113.14': 'silent',
    '203.0.113.15': 'silent',
    '203.0.113.16': ['static.example.net', 'gw.initech.com'],
    '203.0.113.17': ['ec2-203-0-113-17.compute-1.amazonaws.com'],
    '2001:db8::10': ['gw.acme-widgets.co.uk'],
    '2001:db8::11': ['2001-db8-0-0-0-0-0-11.ip6.example.net'],
    '17.0.0.1': ['mail.apple.com'],
    '73.0.0.1': ['corp.example.com'],
    '8.8.8.8': ['dns.google'],
  })
})

afterAll(async () => {
  await dns?.close()
})

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const until = async (check: () => boolean) => {
  for (let waited = 0; !check(); waited += 20) {
    if (waited > 5000) throw new Error('condition not met within 5 s')
    await sleep(20)
  }
}

function reverse(options: ReverseDnsOptions = {}) {
  const outcomes: ReverseDnsOutcome[] = []
  const resolver = createReverseDns({
    servers: [dns.address],
    // Long enough that a loaded machine's late answer is not taken for a server that never answers
    // (the test of that sets its own).
    timeoutMs: 2000,
    waitMs: 1000,
    tries: 1,
    onLookup: (outcome) => outcomes.push(outcome),
    ...options,
  })
  return { resolver, outcomes }
}

describe('organizationDomain: PTR name -> registered domain', () => {
  it.each([
    ['vpn.acme-widgets.co.uk', '203.0.113.7', 'acme-widgets.co.uk'],
    ['MAIL.Globex.COM.', '203.0.113.7', 'globex.com'],
    ['gw1.fw.initech.com.au', '203.0.113.7', 'initech.com.au'],
    ['proxy.finance.gov.uk', '203.0.113.7', 'finance.gov.uk'],
    ['www-cache.liverpool.ac.uk', '203.0.113.7', 'liverpool.ac.uk'],
    ['mx.example.co.jp', '203.0.113.7', 'example.co.jp'],
    ['gw.acme-widgets.co.uk', '2001:db8::7', 'acme-widgets.co.uk'],
  ])('%s (%s) -> %s', (name, ip, domain) => {
    expect(organizationDomain(name, ip)).toBe(domain)
  })

  it.each([
    // Addresses encoded in the name.
    ['203-0-113-7.dsl.example.net', '203.0.113.7'],
    ['host-203-0-113-7.isp.net', '203.0.113.7'],
    ['7.113.0.203.example.com', '203.0.113.7'],
    ['c-73-0-0-1.hsd1.ca.comcast.net', '73.0.0.1'],
    ['x113-7.example.com', '203.0.113.7'],
    ['p5B0A1C2D.dip0.t-ipconnect.de', '91.10.28.45'],
    ['ip3405803783.example.com', '203.0.113.7'],
    ['2001-db8-0-0-0-0-0-7.ip6.example.net', '2001:db8::7'],
    ['host-20010db8000000000000000000000007.example.net', '2001:db8::7'],
    // Access-line words.
    ['dynamic.example.com', '203.0.113.7'],
    ['dhcp123.example.com', '203.0.113.7'],
    ['pool.example.com', '203.0.113.7'],
    ['a1.cable.example.com', '203.0.113.7'],
    ['adsl-line.example.com', '203.0.113.7'],
    ['ppp.example.com', '203.0.113.7'],
    ['static.example.com', '203.0.113.7'],
    ['customer.example.com', '203.0.113.7'],
    ['cpe.example.com', '203.0.113.7'],
    ['dynamicip.example.com', '203.0.113.7'],
    // Private-section suffixes (dynamic DNS, clouds), no public suffix, reverse zones, addresses.
    ['ec2-198-51-100-7.compute-1.amazonaws.com', '203.0.113.7'],
    ['myhome.dyndns.org', '203.0.113.7'],
    ['someone.github.io', '203.0.113.7'],
    ['localhost', '203.0.113.7'],
    ['router.lan', '203.0.113.7'],
    ['fw.corp.internal', '203.0.113.7'],
    ['7.113.0.203.in-addr.arpa', '203.0.113.7'],
    ['203.0.113.7', '203.0.113.7'],
    ['', '203.0.113.7'],
  ])('%s (%s) names no organization', (name, ip) => {
    expect(organizationDomain(name, ip)).toBeUndefined()
  })
})

describe('ptrName', () => {
  it('writes the reverse-zone name of both families', () => {
    expect(ptrName('203.0.113.7')).toBe('7.113.0.203.in-addr.arpa')
    expect(ptrName('255.0.0.1')).toBe('1.0.0.255.in-addr.arpa')
    expect(ptrName('2001:db8::10')).toBe(arpaName('2001:db8::10'))
    expect(ptrName('2001:db8::10')).toMatch(/^0\.1\.0\.0\.(0\.){20}8\.b\.d\.0\.1\.0\.0\.2\.ip6\.arpa$/)
    expect(ptrName('not an address')).toBeUndefined()
  })
})

describe('createReverseDns against a local DNS server', () => {
  it('answers with the domain, then from the cache: one query per address', async () => {
    const { resolver, outcomes } = reverse()
    const asked = dns.asked('203.0.113.10')
    // Concurrent lookups share one query.
    const first = resolver.domainOf('203.0.113.10')
    const second = resolver.domainOf('203.0.113.10')
    expect(first).toBeInstanceOf(Promise)
    expect(second).toBe(first)
    expect(await first).toBe('acme-widgets.co.uk')
    // Known now: answered at once, without a query.
    expect(resolver.domainOf('203.0.113.10')).toBe('acme-widgets.co.uk')
    expect(dns.asked('203.0.113.10')).toBe(asked + 1)
    expect(outcomes).toEqual(['domain'])
  })

  it('IPv6 addresses are asked under ip6.arpa', async () => {
    const { resolver } = reverse()
    expect(await resolver.domainOf('2001:db8::10')).toBe('acme-widgets.co.uk')
    expect(await resolver.domainOf('2001:db8::11')).toBe('')
    expect(dns.questions).toContain(arpaName('2001:db8::10'))
  })

  it('takes the first PTR name that names an organization', async () => {
    const { resolver } = reverse()
    expect(await resolver.domainOf('203.0.113.16')).toBe('initech.com')
  })

  it('NXDOMAIN and access-line names: no domain, remembered', async () => {
    const { resolver, outcomes } = reverse()
    expect(await resolver.domainOf('203.0.113.13')).toBe('')
    expect(await resolver.domainOf('203.0.113.12')).toBe('')
    expect(await resolver.domainOf('203.0.113.17')).toBe('')
    const asked = dns.questions.length
    expect(resolver.domainOf('203.0.113.13')).toBe('')
    expect(resolver.domainOf('203.0.113.12')).toBe('')
    expect(dns.questions.length).toBe(asked)
    expect(outcomes).toEqual(['not_found', 'skipped', 'skipped'])
  })

  it('a server that never answers: the wait ends after waitMs, the failure is remembered a while', async () => {
    const { resolver, outcomes } = reverse({ waitMs: 30, failureTtlMs: 300, timeoutMs: 200 })
    const started = performance.now()
    expect(await resolver.domainOf('203.0.113.14')).toBeUndefined()
    expect(performance.now() - started).toBeLessThan(150)
    // Still asking, but the budget is spent: later hits do not wait.
    expect(resolver.domainOf('203.0.113.14')).toBeUndefined()
    // The resolver gives up after its timeout (200 ms, one try; c-ares takes up to about twice that).
    await until(() => outcomes.length > 0)
    expect(outcomes).toEqual(['failed'])
    expect(resolver.domainOf('203.0.113.14')).toBe('')
    const asked = dns.asked('203.0.113.14')
    await sleep(350) // past the failure TTL: asked again, the stale answer serves meanwhile
    expect(resolver.domainOf('203.0.113.14')).toBe('')
    await until(() => dns.asked('203.0.113.14') === asked + 1)
    resolver.close()
  })

  it('waitMs 0 never holds a hit; the answer applies from the next one', async () => {
    const { resolver } = reverse({ waitMs: 0 })
    expect(await resolver.domainOf('203.0.113.11')).toBeUndefined()
    await until(() => resolver.domainOf('203.0.113.11') === 'globex.com')
  })

  it('past maxInFlight queries an address is not looked up now', async () => {
    const { resolver } = reverse({ maxInFlight: 1 })
    const asked = dns.questions.length
    const silent = resolver.domainOf('203.0.113.15')
    expect(silent).toBeInstanceOf(Promise)
    expect(resolver.domainOf('203.0.113.11')).toBeUndefined()
    await silent
    expect(dns.questions.length).toBe(asked + 1)
    resolver.close()
  })
})

describe('IP intelligence with reverse DNS', () => {
  const settled = async (value: IpInfo | Promise<IpInfo>) => await value

  it('asks only for business, education, government and unknown networks, never private addresses', async () => {
    const intel = await createIpIntelligence({
      geoMmdbPath: 'off',
      reverseDns: { servers: [dns.address], timeoutMs: 500, tries: 1 },
    })
    const asked = dns.questions.length
    // Apple (business): the PTR domain names the company instead of the ASN owner.
    expect(intel.lookup('17.0.0.1').companyId).toBe('as714')
    expect((await settled(intel.resolve('17.0.0.1'))).companyId).toBe('dns:apple.com')
    expect(dns.questions.length).toBe(asked + 1)
    // An ISP (Comcast) and a hosting network (Google): never asked; the ASN decides.
    expect(intel.resolve('73.0.0.1')).toMatchObject({ connectionType: 'isp', companyId: '' })
    expect(intel.resolve('8.8.8.8')).toMatchObject({ connectionType: 'hosting', companyId: '' })
    // Private, loopback, link-local and unique-local addresses have no public name.
    for (const ip of ['10.1.2.3', '192.168.1.1', '127.0.0.1', '100.64.0.1', '::1', 'fe80::1', 'fd00::1']) {
      expect(intel.resolve(ip)).not.toBeInstanceOf(Promise)
    }
    expect(dns.questions.length).toBe(asked + 1)
    // An address the ASN data does not know (documentation range): asked.
    expect((await settled(intel.resolve('203.0.113.11'))).companyId).toBe('dns:globex.com')
    expect((await settled(intel.resolve('203.0.113.13'))).companyId).toBe('')
    intel.close()
  })
})

describe('settings: DNS_SERVERS and REVERSE_DNS', () => {
  it('parses and validates the settings', () => {
    expect(loadConfig({}).ingest).toMatchObject({ reverseDns: true, dnsServers: [] })
    expect(loadConfig({ REVERSE_DNS: '0' }).ingest.reverseDns).toBe(false)
    expect(
      loadConfig({ DNS_SERVERS: '127.0.0.1:5353, 9.9.9.9,[2001:db8::53]:53,2001:db8::54' }).ingest.dnsServers,
    ).toEqual(['127.0.0.1:5353', '9.9.9.9', '[2001:db8::53]:53', '2001:db8::54'])
    expect(() => loadConfig({ DNS_SERVERS: 'dns.example.com' })).toThrow(/Invalid DNS_SERVERS/)
    expect(() => loadConfig({ DNS_SERVERS: '127.0.0.1:99999' })).toThrow(/Invalid DNS_SERVERS/)
  })

  // The ingest service as the server builds it, on a store that holds nothing.
  const service = async (env: Record<string, string>) => {
    const dir = tempDir('vid-rdns-')
    const store = { query: async () => [], insert: async () => {} } as unknown as Store
    const settings: Config['ingest'] = loadConfig({
      ...env,
      GEO_MMDB_PATH: 'off',
      ASN_DATA_PATH: 'off',
    }).ingest
    const ingest = await createIngestService({ store, repos: {} as Repositories, dataDir: dir.dir, settings })
    return {
      ingest,
      close: async () => {
        await ingest.close()
        dir.remove()
      },
    }
  }

  it('REVERSE_DNS=0 asks nothing', async () => {
    const { ingest, close } = await service({ REVERSE_DNS: '0', DNS_SERVERS: dns.address })
    const asked = dns.questions.length
    const info = ingest.ipIntelligence.resolve('203.0.113.10')
    expect(info).not.toBeInstanceOf(Promise)
    expect(info).toMatchObject({ companyId: '' })
    await sleep(50)
    expect(dns.questions.length).toBe(asked)
    expect(ingest.ipIntelligence.sources.reverseDns).toBe('off')
    await close()
  })

  it('DNS_SERVERS is the server asked; queries are counted in /metrics', async () => {
    const { ingest, close } = await service({ DNS_SERVERS: dns.address })
    expect(ingest.ipIntelligence.sources.reverseDns).toBe(dns.address)
    const asked = dns.questions.length
    expect(await ingest.ipIntelligence.resolve('203.0.113.10')).toMatchObject({
      companyId: 'dns:acme-widgets.co.uk',
    })
    expect(dns.questions.length).toBe(asked + 1)
    expect(ingest.registry.render()).toMatch(/^vid_ingest_reverse_dns_lookups_total\{outcome="domain"\} 1$/m)
    await close()
  })
})
