// Custom domains against a real DNS server on 127.0.0.1 (packages/testing/src/dns-zone-server.ts) and the
// real embedded store: the CNAME check and its messages, apex flattening, NXDOMAIN and a server
// that never answers; then set, verify, replace, the verified-host lookup and the daily re-check.
import { randomUUID } from 'node:crypto'
import { startZoneServer, type Zone } from '@visitor-id/testing/dns-zone-server'
import { timeUntil } from '@visitor-id/testing/poll'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AppError } from '../errors.js'
import { createStore, type Store } from '../store/client.js'
import { migrate } from '../store/migrate.js'
import {
  findVerifiedDomain,
  normalizeDomain,
  presentDomain,
  readPartnerDomain,
  recheckVerifiedDomains,
  setPartnerDomain,
  verifyPartnerDomain,
} from './custom-domain.js'
import { checkCname, createDnsResolver, type DnsResolver } from './dns-check.js'

const target = 't.service.test'
const zone: Zone = {
  [target]: { A: ['203.0.113.10', '203.0.113.11'], AAAA: ['2001:db8::10'] },
  'track.acme.test': { CNAME: `${target}.` },
  'track.upper.test': { CNAME: 'T.Service.Test.' },
  'track.globex.test': { CNAME: 'edge.othercdn.test' },
  'edge.othercdn.test': { A: ['198.51.100.7'] },
  'flat.test': { A: ['203.0.113.11', '203.0.113.10'], AAAA: ['2001:0db8::0010'] },
  'partly-flat.test': { A: ['203.0.113.10'] },
  'elsewhere.test': { A: ['198.51.100.1'] },
  'bare.test': {},
  'slow.test': 'silent',
}

let dns: Awaited<ReturnType<typeof startZoneServer>>
let resolver: DnsResolver
const tmp = tempDir('vid-domains-')
let store: Store

beforeAll(async () => {
  dns = await startZoneServer(zone)
  resolver = createDnsResolver([dns.address], 2000)
  store = createStore({ database: 'default', dataDir: tmp.dir })
  await migrate(store)
})

afterAll(async () => {
  await dns?.close()
  await store?.close()
  tmp.remove()
})

describe('checkCname', () => {
  it('a CNAME to the target verifies, whatever its case and trailing dot', async () => {
    expect(await checkCname(resolver, 'track.acme.test', target)).toEqual({
      ok: true,
      answer: `CNAME ${target}`,
    })
    expect((await checkCname(resolver, 'Track.Upper.Test.', `${target}.`)).ok).toBe(true)
  })

  it('a CNAME to another host fails, naming what it points to', async () => {
    const check = await checkCname(resolver, 'track.globex.test', target)
    expect(check).toEqual({ ok: false, answer: `points to edge.othercdn.test, expected ${target}` })
  })

  it("an apex whose A/AAAA records are the target's is a flattened CNAME; other addresses are not", async () => {
    const flat = await checkCname(resolver, 'flat.test', target)
    expect(flat.ok).toBe(true)
    expect(flat.answer).toContain('flattened')
    const partly = await checkCname(resolver, 'partly-flat.test', target)
    expect(partly.ok).toBe(false)
    expect(partly.transient).toBeUndefined()
    const elsewhere = await checkCname(resolver, 'elsewhere.test', target)
    expect(elsewhere.ok).toBe(false)
    expect(elsewhere.answer).toContain('198.51.100.1')
    expect(elsewhere.answer).toContain('203.0.113.10')
  })

  it('a name without records, and a name that does not exist', async () => {
    expect(await checkCname(resolver, 'bare.test', target)).toEqual({
      ok: false,
      answer: 'no CNAME, A or AAAA record found',
    })
    expect(await checkCname(resolver, 'nowhere.test', target)).toEqual({
      ok: false,
      answer: 'the domain does not exist (NXDOMAIN)',
    })
  })

  it('a server that never answers: a transient failure within the timeout', async () => {
    const quick = createDnsResolver([dns.address], 300)
    const started = Date.now()
    const check = await checkCname(quick, 'slow.test', target)
    expect(check).toEqual({
      ok: false,
      answer: 'the DNS server did not answer within 0.3 s',
      transient: true,
    })
    expect(Date.now() - started).toBeLessThan(1500)
  })
})

describe('normalizeDomain', () => {
  const issueOf = (input: string, ownHost?: string) => {
    try {
      normalizeDomain(input, { ownHost })
    } catch (error) {
      expect(error).toBeInstanceOf(AppError)
      const appError = error as AppError
      expect(appError.code).toBe('invalid_request')
      const { issues } = appError.details as { issues: { path: string; message: string }[] }
      expect(issues[0]!.path).toBe('domain')
      return issues[0]!.message
    }
    throw new Error(`${input} was accepted`)
  }

  it('lowercases, trims and drops the trailing dot; IDNs become punycode', () => {
    expect(normalizeDomain(' Track.Acme.COM. ')).toBe('track.acme.com')
    expect(normalizeDomain('acme.com')).toBe('acme.com')
    expect(normalizeDomain('xn--80ak6aa92e.com')).toBe('xn--80ak6aa92e.com')
    expect(normalizeDomain('track.bücher.de')).toBe('track.xn--bcher-kva.de')
    // A subdomain of the service's host is the partner's business; only the host itself is refused.
    expect(normalizeDomain('x.app.service.test', { ownHost: 'app.service.test' })).toBe('x.app.service.test')
  })

  it('refuses IP addresses, URLs, single labels, bad labels, numeric TLDs, long names and our own host', () => {
    expect(issueOf('203.0.113.7')).toMatch(/not an IP/)
    expect(issueOf('203.0.113.7.')).toMatch(/not an IP/)
    expect(issueOf('2001:db8::1')).toMatch(/not an IP/)
    expect(issueOf('[2001:db8::1]')).toMatch(/not an IP/)
    expect(issueOf('https://track.acme.com/')).toMatch(/without scheme/)
    expect(issueOf('track.acme.com:8443')).toMatch(/without scheme/)
    expect(issueOf('')).toBe('is required')
    expect(issueOf('localhost')).toMatch(/full hostname/)
    expect(issueOf('track..acme.com')).toMatch(/empty label/)
    expect(issueOf('-track.acme.com')).toMatch(/label "-track"/)
    expect(issueOf('track_1.acme.com')).toMatch(/label "track_1"/)
    expect(issueOf('*.acme.com')).toMatch(/label "\*"/)
    expect(issueOf(`${'a'.repeat(64)}.acme.com`)).toMatch(/1 to 63/)
    expect(issueOf('track.acme.123')).toMatch(/top-level domain/)
    const long = `${Array.from({ length: 4 }, () => 'a'.repeat(63)).join('.')}.com`
    expect(long.length).toBeGreaterThan(253)
    expect(issueOf(long)).toMatch(/253/)
    expect(normalizeDomain(long.slice(long.length - 253))).toHaveLength(253)
    expect(issueOf('App.Service.Test.', 'app.service.test')).toBe("is the service's own host")
  })
})

describe('partner domains', () => {
  const partnerId = randomUUID()
  const otherPartnerId = randomUUID()

  it('setting a domain stores it pending, with the record to create', async () => {
    const row = await setPartnerDomain(store, partnerId, 'track.acme.test', `${target}.`)
    expect(row).toMatchObject({ domain: 'track.acme.test', cname_target: target, status: 'pending' })
    expect(await readPartnerDomain(store, partnerId)).toMatchObject({ status: 'pending', verified_at: null })
    const resource = presentDomain(row)
    expect(resource).toMatchObject({
      domain: 'track.acme.test',
      verified: false,
      verificationRecord: `track.acme.test. CNAME ${target}.`,
      cnameTarget: target,
      dnsRecords: [{ type: 'CNAME', name: 'track.acme.test', value: target }],
    })
    expect(resource.dnsRecords[0]).not.toHaveProperty('status')
    expect(resource.instructions).toContain('48 hours')
    expect(presentDomain(row, { withStatus: true }).dnsRecords[0]!.status).toBe('pending')
    expect(await findVerifiedDomain(store, 'track.acme.test')).toBeUndefined()
  })

  it('verify finds the CNAME: verified, with verified_at; the host is then found', async () => {
    expect(await verifyPartnerDomain(store, partnerId, resolver)).toEqual({ success: true, verified: true })
    const row = (await readPartnerDomain(store, partnerId))!
    expect(row.status).toBe('verified')
    expect(Date.parse(row.verified_at!)).toBeGreaterThan(Date.now() - 60_000)
    expect(row.checked_at).toBe(row.verified_at)
    expect(presentDomain(row, { withStatus: true })).toMatchObject({
      verified: true,
      dnsRecords: [{ status: 'verified' }],
    })
    expect(await findVerifiedDomain(store, 'track.acme.test')).toBe(partnerId)
    expect(await findVerifiedDomain(store, 'TRACK.acme.test.:443')).toBe(partnerId)
    expect(await findVerifiedDomain(store, 'acme.test')).toBeUndefined()
  })

  it('setting the same domain again keeps it verified; another partner cannot take it', async () => {
    expect((await setPartnerDomain(store, partnerId, 'track.acme.test', target)).status).toBe('verified')
    await expect(setPartnerDomain(store, otherPartnerId, 'track.acme.test', target)).rejects.toMatchObject({
      code: 'conflict',
    })
  })

  it('a failed verify says what DNS answered; a timeout leaves the status', async () => {
    await setPartnerDomain(store, otherPartnerId, 'track.globex.test', target)
    const result = await verifyPartnerDomain(store, otherPartnerId, resolver)
    expect(result).toMatchObject({ success: false, verified: false })
    expect(result.message).toContain('points to edge.othercdn.test')
    const failed = (await readPartnerDomain(store, otherPartnerId))!
    expect(failed).toMatchObject({ status: 'failed', verified_at: null })
    expect(presentDomain(failed, { withStatus: true }).instructions).toContain('points to edge.othercdn.test')

    await setPartnerDomain(store, otherPartnerId, 'slow.test', target)
    const slow = await verifyPartnerDomain(store, otherPartnerId, createDnsResolver([dns.address], 200))
    expect(slow).toEqual({
      success: false,
      verified: false,
      message: 'slow.test is not verified: the DNS server did not answer within 0.2 s.',
    })
    expect((await readPartnerDomain(store, otherPartnerId))!.status).toBe('pending')
    await expect(verifyPartnerDomain(store, randomUUID(), resolver)).rejects.toMatchObject({
      code: 'resource_not_found',
    })
  })

  it('replacing the domain resets it to pending, and the old host is no longer served', async () => {
    const row = await setPartnerDomain(store, partnerId, 'flat.test', target)
    expect(row).toMatchObject({ domain: 'flat.test', status: 'pending', verified_at: null, checked_at: null })
    expect((await readPartnerDomain(store, partnerId))!.status).toBe('pending')
    expect(await findVerifiedDomain(store, 'track.acme.test')).toBeUndefined()
    expect(await findVerifiedDomain(store, 'flat.test')).toBeUndefined()
    expect((await verifyPartnerDomain(store, partnerId, resolver)).verified).toBe(true)
    expect(await findVerifiedDomain(store, 'flat.test')).toBe(partnerId)
  })

  it('the daily re-check fails a verified domain whose record disappeared, and the read says so', async () => {
    const third = randomUUID()
    await setPartnerDomain(store, third, 'track.acme.test', target)
    expect((await verifyPartnerDomain(store, third, resolver)).verified).toBe(true)
    // Checked just now: a pass skipping recent checks leaves both alone.
    expect(await recheckVerifiedDomains(store, resolver, { minAgeMs: 60_000 })).toEqual({
      checked: 0,
      failed: [],
      inconclusive: 0,
    })

    const saved = zone['flat.test']
    delete zone['flat.test']
    try {
      const summary = await recheckVerifiedDomains(store, resolver)
      expect(summary).toEqual({ checked: 2, failed: ['flat.test'], inconclusive: 0 })
    } finally {
      zone['flat.test'] = saved!
    }
    const row = (await readPartnerDomain(store, partnerId))!
    expect(row).toMatchObject({ status: 'failed', last_answer: 'the domain does not exist (NXDOMAIN)' })
    expect(row.verified_at).not.toBeNull()
    const resource = presentDomain(row, { withStatus: true })
    expect(resource.verified).toBe(false)
    expect(resource.dnsRecords[0]!.status).toBe('failed')
    expect(resource.instructions).toMatch(/record has disappeared.*no longer served/)
    expect(await findVerifiedDomain(store, 'flat.test')).toBeUndefined()
    expect(await findVerifiedDomain(store, 'track.acme.test')).toBe(third)
    // Only verified domains are re-checked: the failed one waits for the partner's verify.
    expect((await recheckVerifiedDomains(store, resolver)).checked).toBe(1)
    expect((await verifyPartnerDomain(store, partnerId, resolver)).verified).toBe(true)
  })

  it('a check outcome never overwrites a domain set while the check ran', async () => {
    const partner = randomUUID()
    await setPartnerDomain(store, partner, 'partly-flat.test', target)
    // The partner sets another domain while the check of the first one waits for DNS.
    const racing: DnsResolver = {
      ...resolver,
      resolveCname: async (name) => {
        await setPartnerDomain(store, partner, 'track.upper.test', target)
        return resolver.resolveCname(name)
      },
    }
    expect((await verifyPartnerDomain(store, partner, racing)).message).toContain('partly-flat.test')
    expect(await readPartnerDomain(store, partner)).toMatchObject({
      domain: 'track.upper.test',
      status: 'pending',
      checked_at: null,
    })
  })

  it("another process's verification is seen once the snapshot is older than maxAgeMs", async () => {
    const partner = randomUUID()
    expect(await findVerifiedDomain(store, 'elsewhere.test')).toBeUndefined()
    // Written as another process would: this process's snapshot knows nothing of it.
    const at = new Date().toISOString()
    await store.insert('partner_domains', [
      {
        partner_id: partner,
        domain: 'elsewhere.test',
        cname_target: target,
        status: 'verified',
        verified_at: at,
        checked_at: at,
        last_answer: `CNAME ${target}`,
        created_at: at,
        updated_at: at,
        version: Date.now() * 1000,
      },
    ])
    expect(await findVerifiedDomain(store, 'elsewhere.test')).toBeUndefined()
    // Stale answers meanwhile, never a wait: the refresh runs behind them.
    await timeUntil(
      async () => (await findVerifiedDomain(store, 'elsewhere.test', { maxAgeMs: 0 })) === partner,
      5000,
    )
  })
})
