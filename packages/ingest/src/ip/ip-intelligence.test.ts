import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { classifyByName } from './connection-type.js'
import { createIpIntelligence, type IpIntelligence } from './ip-intelligence.js'

// Enrichment on known addresses with the real bundled data files (DB-IP Lite City, ip-location-db ASN).
const dir = tempDir('vid-ipintel-')
let intel: IpIntelligence

beforeAll(async () => {
  const vpn = path.join(dir.dir, 'vpn.txt')
  writeFileSync(
    vpn,
    '# our VPN list\n203.0.113.0/24\nExitAddress 198.51.100.7 2024-05-01 10:00:00\nnot an address\n',
  )
  const started = Date.now()
  intel = await createIpIntelligence({ anonymousIpLists: [vpn] })
  console.log(`IP data loaded in ${Date.now() - started} ms`, intel.sources)
})

afterAll(() => dir.remove())

describe('IP intelligence with the real data', () => {
  it('8.8.8.8 is Google: US, AS15169, hosting', () => {
    expect(intel.lookup('8.8.8.8')).toMatchObject({
      ip: '8.8.8.8',
      country: 'US',
      asn: 15169,
      connectionType: 'hosting',
      isHosting: true,
      isAnonymous: false,
      companyId: '',
    })
    expect(intel.lookup('8.8.8.8').isp).toMatch(/google/i)
  })

  it('1.1.1.1 is Cloudflare (AS13335, hosting); IPv6 Google DNS is AS15169', () => {
    expect(intel.lookup('1.1.1.1')).toMatchObject({ asn: 13335, connectionType: 'hosting', isHosting: true })
    expect(intel.lookup('2001:4860:4860::8888')).toMatchObject({ asn: 15169, isHosting: true })
    expect(intel.lookup('::ffff:8.8.4.4')).toMatchObject({ ip: '8.8.4.4', asn: 15169, country: 'US' })
  })

  it('a university network is education, with its city', () => {
    const berkeley = intel.lookup('128.32.0.1')
    expect(berkeley).toMatchObject({
      country: 'US',
      region: 'California',
      asn: 25,
      connectionType: 'education',
    })
    expect(berkeley.city).toMatch(/Berkeley/)
  })

  it('residential ISPs are isp; a business network names its company', () => {
    expect(intel.lookup('73.0.0.1')).toMatchObject({ asn: 7922, connectionType: 'isp', isHosting: false })
    const apple = intel.lookup('17.0.0.1')
    expect(apple).toMatchObject({ asn: 714, connectionType: 'business', companyId: 'as714' })
  })

  it('user CIDR lists mark anonymous networks, including Tor exit-address lines', () => {
    expect(intel.lookup('203.0.113.9').isAnonymous).toBe(true)
    expect(intel.lookup('198.51.100.7').isAnonymous).toBe(true)
    expect(intel.lookup('198.51.100.8').isAnonymous).toBe(false)
  })

  it('private, loopback and invalid addresses come back empty, never throwing', () => {
    expect(intel.lookup('127.0.0.1')).toMatchObject({
      ip: '127.0.0.1',
      country: '',
      asn: 0,
      connectionType: '',
    })
    expect(intel.lookup('not-an-ip')).toMatchObject({ ip: '', country: '' })
  })

  it('looks up fast', () => {
    const started = performance.now()
    for (let i = 0; i < 20_000; i++) intel.lookup(`${(i % 200) + 20}.${i % 256}.${(i >> 8) % 256}.${i % 250}`)
    const perLookupUs = ((performance.now() - started) * 1000) / 20_000
    console.log(`${perLookupUs.toFixed(1)} µs per lookup`)
    expect(perLookupUs).toBeLessThan(100)
  })
})

describe('organisation-name rules', () => {
  it.each([
    ['Example Hosting Ltd', 'hosting'],
    ['Big Cloud Services', 'hosting'],
    ['State University of Somewhere', 'education'],
    ['Ministry of Finance', 'government'],
    ['Acme Wireless', 'mobile'],
    ['Rural Telecom Cooperative', 'isp'],
    ['Acme Widgets, Inc.', 'business'],
    ['', 'isp'],
  ])('%s -> %s', (name, type) => {
    expect(classifyByName(name).connectionType).toBe(type)
  })

  it('flags VPN and proxy operators as anonymous hosting', () => {
    expect(classifyByName('Fast VPN Services LLC')).toEqual({
      connectionType: 'hosting',
      isHosting: true,
      isAnonymous: true,
    })
  })
})
