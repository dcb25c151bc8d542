import { randomUUID } from 'node:crypto'
import { blankContactFields } from '@visitor-id/core/visitor-tracking'
import { errorBody, type Harness, startHarness } from '@visitor-id/testing/harness'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

let h: Harness

beforeAll(async () => {
  h = await startHarness()
})

afterAll(async () => {
  await h?.stop()
})

const vt = (organizationId: string, suffix = '') => `/api/v1/visitor-tracking/${organizationId}${suffix}`
const paths = (body: { details?: { issues: { path: string }[] } }) =>
  body.details?.issues.map((i) => i.path) ?? []

describe('GET /visitor-tracking/{id}', () => {
  it('returns the pixel config with the tracking key and the script tag', async () => {
    const response = await h.request({
      method: 'GET',
      url: vt(h.boot.organizationId),
      headers: { host: 'api.test:8080' },
    })
    expect(response.statusCode).toBe(200)
    const { pixelConfig } = response.json()
    expect(pixelConfig).toMatchObject({
      organizationId: h.boot.organizationId,
      trackingKey: h.boot.trackingKey,
      allowedReferrers: [],
      verifiedDomains: [],
      ipTracking: true,
      respectPrivacySignals: false,
      formCapture: false,
      icpSettings: {},
      scriptTag: { scriptUrl: 'http://api.test:8080/p.js' },
    })
    expect(pixelConfig.id).toMatch(/^px_/)
    expect(pixelConfig.scriptTag.jsSnippet).toContain(h.boot.trackingKey)
    expect(pixelConfig.scriptTag.jsSnippet).toContain('http://api.test:8080/p.js')
    expect(pixelConfig.scriptTag.tagManagerSnippet).toContain(h.boot.trackingKey)
  })

  it('never reflects a strange Host header into the snippet', async () => {
    const response = await h.request({
      method: 'GET',
      url: vt(h.boot.organizationId),
      headers: { host: 'evil"><script>' },
    })
    expect(response.json().pixelConfig.scriptTag.scriptUrl).toBe('http://localhost/p.js')
  })
})

describe('PUT /visitor-tracking/{id}/pixel-config', () => {
  it('updates only the fields sent, normalising domains', async () => {
    const tenant = await h.createTenant()
    const url = vt(tenant.organizationId, '/pixel-config')
    const response = await h.request({
      method: 'PUT',
      url,
      key: tenant.key,
      payload: {
        allowedReferrers: [
          'https://www.example.com/',
          'http://localhost:3000/app',
          'https://www.example.com/',
        ],
        verifiedDomains: ['Example.COM', ' shop.example.com '],
        respectPrivacySignals: true,
        icpSettings: { minScore: 60, segments: ['enterprise'] },
      },
    })
    expect(response.statusCode).toBe(200)
    const { pixelConfig } = response.json()
    expect(pixelConfig).toMatchObject({
      allowedReferrers: ['https://www.example.com/', 'http://localhost:3000/app'],
      verifiedDomains: ['example.com', 'shop.example.com'],
      respectPrivacySignals: true,
      ipTracking: true,
      formCapture: false,
      icpSettings: { minScore: 60, segments: ['enterprise'] },
    })
    const formOnly = await h.request({ method: 'PUT', url, key: tenant.key, payload: { formCapture: true } })
    expect(formOnly.json().pixelConfig).toMatchObject({
      formCapture: true,
      verifiedDomains: ['example.com', 'shop.example.com'],
    })
    expect(
      (await h.request({ method: 'GET', url: vt(tenant.organizationId), key: tenant.key })).json(),
    ).toEqual(formOnly.json())
  })

  it.each([
    ['an empty body', {}, ''],
    ['a referrer that is not a URL', { allowedReferrers: ['example.com'] }, 'allowedReferrers.0'],
    ['a non-http referrer', { allowedReferrers: ['ftp://example.com'] }, 'allowedReferrers.0'],
    ['a javascript: referrer', { allowedReferrers: ['javascript:alert(1)'] }, 'allowedReferrers.0'],
    [
      'an oversized referrer',
      { allowedReferrers: [`https://example.com/${'a'.repeat(2048)}`] },
      'allowedReferrers.0',
    ],
    [
      'too many referrers',
      { allowedReferrers: Array.from({ length: 101 }, (_, i) => `https://e${i}.com/`) },
      'allowedReferrers',
    ],
    ['referrers not an array', { allowedReferrers: 'https://example.com/' }, 'allowedReferrers'],
    ['a domain with a scheme', { verifiedDomains: ['https://example.com'] }, 'verifiedDomains.0'],
    ['a domain with a path', { verifiedDomains: ['example.com/shop'] }, 'verifiedDomains.0'],
    ['a domain of the wrong type', { verifiedDomains: [42] }, 'verifiedDomains.0'],
    [
      'too many domains',
      { verifiedDomains: Array.from({ length: 101 }, (_, i) => `e${i}.com`) },
      'verifiedDomains',
    ],
    ['a boolean of the wrong type', { ipTracking: 'false' }, 'ipTracking'],
    ['icpSettings not an object', { icpSettings: [1, 2] }, 'icpSettings'],
    ['oversized icpSettings', { icpSettings: { blob: 'x'.repeat(17_000) } }, 'icpSettings'],
    ['a read-only field', { trackingKey: 'pk_000000000000000000000000' }, ''],
  ])('rejects %s', async (_label, payload, field) => {
    const response = await h.request({
      method: 'PUT',
      url: vt(h.boot.organizationId, '/pixel-config'),
      payload,
    })
    expect(response.statusCode).toBe(400)
    expect(response.json()).toMatchObject(errorBody(400, 'invalid_request'))
    expect(paths(response.json())).toContain(field)
  })

  it('rejects bodies over 1 MB with 413', async () => {
    const response = await h.request({
      method: 'PUT',
      url: vt(h.boot.organizationId, '/pixel-config'),
      payload: { icpSettings: { blob: 'x'.repeat(1024 * 1024) } },
    })
    expect(response.json()).toEqual(errorBody(413, 'payload_too_large'))
  })

  it('reaches ingest at once: a hit right after switching IP tracking off stores no IP', async () => {
    const tenant = await h.createTenant()
    const { trackingKey } = (
      await h.request({ method: 'GET', url: vt(tenant.organizationId), key: tenant.key })
    ).json().pixelConfig
    const visitorId = randomUUID()
    const hit = async () => {
      const response = await h.server.app.inject({
        method: 'POST',
        url: '/collect',
        headers: {
          'content-type': 'text/plain',
          origin: 'https://x.test',
          'user-agent':
            'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36',
        },
        payload: JSON.stringify({
          k: trackingKey,
          e: 'pv',
          v: visitorId,
          s: randomUUID(),
          u: 'https://x.test/',
        }),
      })
      expect(response.statusCode).toBe(202)
    }
    const storedIps = async (count: number) => {
      for (let attempt = 0; attempt < 100; attempt++) {
        const rows = await h.store.query<{ ip: string }>(
          'SELECT ip FROM page_views WHERE visitor_id = {v:UUID} ORDER BY received_at',
          { v: visitorId },
        )
        if (rows.length >= count) return rows.map((row) => row.ip)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      throw new Error('the hits never reached the store')
    }
    await hit() // warms ingest's tracking-key cache with ipTracking on
    const [first] = await storedIps(1)
    expect(first).not.toBe('')
    const off = await h.request({
      method: 'PUT',
      url: vt(tenant.organizationId, '/pixel-config'),
      key: tenant.key,
      payload: { ipTracking: false },
    })
    expect(off.json().pixelConfig.ipTracking).toBe(false)
    await hit()
    expect(await storedIps(2)).toEqual([first, ''])
  })
})

describe('GET /visitor-tracking/{id}/installation/script/{type}', () => {
  it.each(['jsSnippet', 'tagManager'])('returns the %s snippet', async (type) => {
    const response = await h.request({
      method: 'GET',
      url: vt(h.boot.organizationId, `/installation/script/${type}`),
      headers: { host: 'collector.test' },
    })
    expect(response.statusCode).toBe(200)
    const body = response.json()
    expect(body.type).toBe(type)
    expect(body.script).toContain(h.boot.trackingKey)
    expect(body.script).toContain('"http://collector.test/p.js"')
    expect(body.script.startsWith('<script')).toBe(true)
  })

  it('400 for an unknown type, whoever asks; 404 for another tenant asking a known type', async () => {
    const unknown = await h.request({
      method: 'GET',
      url: vt(h.boot.organizationId, '/installation/script/wordpress'),
    })
    expect(unknown.statusCode).toBe(400)
    expect(paths(unknown.json())).toEqual(['type'])
    const tenant = await h.createTenant()
    // The request's shape is checked before what it addresses (docs/decisions.md, "Order of checks").
    const unknownForeign = await h.request({
      method: 'GET',
      url: vt(h.boot.organizationId, '/installation/script/wordpress'),
      key: tenant.key,
    })
    expect(paths(unknownForeign.json())).toEqual(['type'])
    const foreign = await h.request({
      method: 'GET',
      url: vt(h.boot.organizationId, '/installation/script/jsSnippet'),
      key: tenant.key,
    })
    expect(foreign.json()).toEqual(errorBody(404, 'resource_not_found'))
  })
})

describe('GET /visitor-tracking/{id}/visitors/{visitorId}', () => {
  it('returns contact, company, camelCase sessions and page views, and no phone before a search', async () => {
    const companyId = await h.seedCompany({
      name: 'Acme',
      domain: 'acme.test',
      industry: 'SaaS',
      city: 'Paris',
    })
    const { visitorId, sessionId } = await h.seedVisitor(h.boot.organizationId, 3)
    const at = new Date().toISOString()
    await h.repos.visitors.save({
      ...blankContactFields,
      personal_email: 'ada@home.test',
      phone: '+33 1 23 45 67 89',
      address_2: 'Floor 2',
      age_range: '35-44',
      id: visitorId,
      organization_id: h.boot.organizationId,
      email: 'ada@example.com',
      first_name: 'Ada',
      last_name: 'Lovelace',
      job_title: 'CTO',
      seniority: '',
      department: '',
      country: '',
      linkedin_url: 'https://www.linkedin.com/in/ada',
      company_id: companyId,
      identified_at: at,
      first_seen_at: at,
      last_seen_at: at,
      created_at: at,
      updated_at: at,
    })
    const response = await h.request({
      method: 'GET',
      url: vt(h.boot.organizationId, `/visitors/${visitorId.toUpperCase()}`),
    })
    expect(response.statusCode).toBe(200)
    const profile = response.json()
    expect(profile).toMatchObject({
      id: visitorId,
      organizationId: h.boot.organizationId,
      contact: {
        email: 'ada@example.com',
        personalEmail: 'ada@home.test',
        firstName: 'Ada',
        lastName: 'Lovelace',
        jobTitle: 'CTO',
        address2: 'Floor 2',
        ageRange: '35-44',
        gender: null,
        linkedinUrl: 'https://www.linkedin.com/in/ada',
      },
      company: {
        id: companyId,
        name: 'Acme',
        domain: 'acme.test',
        industry: 'SaaS',
        city: 'Paris',
        region: '',
      },
    })
    // Every contact field of the webhook `visitor` object but the phone (paid data, even when a
    // visitor row identified before that rule holds one), camelCase, and every `company` field.
    expect(Object.keys(profile.contact)).toHaveLength(25)
    expect(response.body).not.toContain('23 45 67 89')
    expect(Object.keys(profile.company).sort()).toEqual(
      [
        'id',
        'name',
        'domain',
        'industry',
        'size',
        'employeeSizeRange',
        'revenueRange',
        'linkedinUrl',
        'websiteUrl',
        'description',
        'logoUrl',
        'address',
        'address2',
        'city',
        'region',
        'postalCode',
        'country',
      ].sort(),
    )
    // A B2B organization (the bootstrap one): no phone, and no search yet.
    expect(profile).not.toHaveProperty('phoneNumber')
    expect(profile.phoneNumberSearchStatus).toBe('not_started')
    expect(profile.sessions).toHaveLength(1)
    expect(profile.sessions[0]).toMatchObject({
      id: sessionId,
      country: 'DE',
      asn: 'AS3320',
      isHosting: false,
      isAnonymous: false,
      landingPage: 'https://shop.test/page-0?utm_source=news',
      entryPage: '/page-0',
      exitPage: '/page-2',
      utmSource: 'news',
      pageViewCount: 3,
      sessionDurationSeconds: 60,
      trackingParams: { gclid: 'abc' },
      ipAddress: '203.0.113.7',
    })
    expect(typeof profile.sessions[0].userAgent).toBe('string')
    expect(profile.pageViews.map((p: { title: string }) => p.title)).toEqual(['Page 2', 'Page 1', 'Page 0'])
    expect(profile.pageViews[0].visitedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
  })

  it('hides the session IP when the organization has IP tracking off', async () => {
    const tenant = await h.createTenant()
    const { visitorId } = await h.seedVisitor(tenant.organizationId)
    await h.request({
      method: 'PUT',
      url: vt(tenant.organizationId, '/pixel-config'),
      key: tenant.key,
      payload: { ipTracking: false },
    })
    const profile = (
      await h.request({
        method: 'GET',
        url: vt(tenant.organizationId, `/visitors/${visitorId}`),
        key: tenant.key,
      })
    ).json()
    expect(profile.contact).toBeNull()
    expect(profile.sessions[0]).not.toHaveProperty('ipAddress')
  })

  it("404 for unknown and malformed visitors, and for another tenant's visitor", async () => {
    const tenant = await h.createTenant()
    const { visitorId: foreignVisitor } = await h.seedVisitor(tenant.organizationId)
    for (const id of [randomUUID(), 'nope', foreignVisitor]) {
      const response = await h.request({ method: 'GET', url: vt(h.boot.organizationId, `/visitors/${id}`) })
      expect(response.statusCode).toBe(404)
      expect(response.json()).toEqual(errorBody(404, 'resource_not_found'))
    }
    const foreignKey = await h.request({
      method: 'GET',
      url: vt(tenant.organizationId, `/visitors/${foreignVisitor}`),
    })
    expect(foreignKey.statusCode).toBe(404)
  })
})
