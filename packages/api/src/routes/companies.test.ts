// Spec section "Companies and statistics" over HTTP: envelopes, projections, filters, ranges, time
// zones and bad input. The figures themselves are checked against raw page views in core
// (analytics/statistics.test.ts); the tenant/scope matrix (matrix.test.ts) covers 401/403/404.

import { errorBody, type Harness, startHarness } from '@visitor-id/testing/harness'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

let h: Harness
let tenant: { organizationId: string; key: string }
let other: { organizationId: string; key: string }
let acme: string
let globex: string
const visitors: string[] = []

beforeAll(async () => {
  h = await startHarness()
  tenant = await h.createTenant()
  other = await h.createTenant()
  acme = await h.seedCompany({ name: 'Acme', domain: 'acme.test', industry: 'SaaS', country: 'US' })
  globex = await h.seedCompany({ name: 'Globex', domain: 'globex.test' })
  for (let i = 0; i < 3; i++)
    visitors.push((await h.seedVisitor(tenant.organizationId, 2, { companyId: acme })).visitorId)
  visitors.push((await h.seedVisitor(tenant.organizationId, 4, { companyId: globex })).visitorId)
  visitors.push((await h.seedVisitor(tenant.organizationId, 1)).visitorId)
  // The other tenant's traffic never shows in the tenant's figures.
  await h.seedVisitor(other.organizationId, 5, { companyId: acme })
})

afterAll(async () => {
  await h?.stop()
})

const get = (url: string, key = tenant.key) => h.request({ method: 'GET', url: `/api/v1${url}`, key })
const org = () => tenant.organizationId

describe('GET /companies', () => {
  it('pages companies by visitors, with their profile and figures', async () => {
    const response = await get(`/companies?organizationId=${org()}`)
    expect(response.statusCode, response.body).toBe(200)
    const body = response.json()
    expect(body).toMatchObject({ page: 1, limit: 25, total: 2, totalPages: 1 })
    expect(body.data).toHaveLength(2)
    expect(body.data[0]).toMatchObject({
      id: acme,
      name: 'Acme',
      domain: 'acme.test',
      industry: 'SaaS',
      country: 'US',
      visitors: 3,
      identifiedVisitors: 0,
      sessions: 3,
      pageViews: 6,
      icpMatch: false,
    })
    expect(body.data[1]).toMatchObject({ id: globex, visitors: 1, pageViews: 4 })
    expect(Date.parse(body.data[0].firstSeenAt)).toBeLessThanOrEqual(Date.parse(body.data[0].lastSeenAt))
  })

  it('sort, order, pages and fields', async () => {
    const byPageViews = (await get(`/companies?organizationId=${org()}&sort=pageViews&limit=1`)).json()
    expect(byPageViews).toMatchObject({ total: 2, totalPages: 2, limit: 1 })
    expect(byPageViews.data.map((row: { id: string }) => row.id)).toEqual([acme])
    const second = (await get(`/companies?organizationId=${org()}&sort=pageViews&limit=1&page=2`)).json()
    expect(second.data.map((row: { id: string }) => row.id)).toEqual([globex])
    // Fewer visitors, but the most page views per visitor: first by sessions ascending, then.
    const bySessions = (await get(`/companies?organizationId=${org()}&sort=sessions&order=asc`)).json()
    expect(bySessions.data.map((row: { id: string }) => row.id)).toEqual([globex, acme])
    const ascending = (await get(`/companies?organizationId=${org()}&sort=visitors&order=asc`)).json()
    expect(ascending.data.map((row: { id: string }) => row.id)).toEqual([globex, acme])
    const projected = (await get(`/companies?organizationId=${org()}&fields=id,visitors`)).json()
    expect(projected.data[0]).toEqual({ id: acme, visitors: 3 })
    const past = (await get(`/companies?organizationId=${org()}&page=9`)).json()
    expect(past).toMatchObject({ data: [], total: 2, page: 9 })
  })

  it('bad input: 400 naming the field; an unknown field lists the valid ones', async () => {
    const unknown = await get(`/companies?organizationId=${org()}&fields=id,revenue`)
    expect(unknown.statusCode).toBe(400)
    expect(unknown.json()).toMatchObject(errorBody(400, 'invalid_request'))
    expect(JSON.stringify(unknown.json().details)).toMatch(/valid fields: id, name, domain/)
    for (const query of [
      'ICPOnly=maybe',
      'page=0',
      'limit=501',
      'limit=abc',
      'sort=name',
      'from=yesterday',
      'from=2026-02-31',
      'from=2026-03-02&to=2026-03-01',
      'from=2024-01-01&to=2025-12-31',
      `fields=${'x'.repeat(2000)}`,
    ]) {
      const response = await get(`/companies?organizationId=${org()}&${query}`)
      expect(response.statusCode, query).toBe(400)
      expect(response.json(), query).toMatchObject(errorBody(400, 'invalid_request'))
    }
    const tooLong = await get(`/companies?organizationId=${org()}&from=2024-01-01&to=2025-12-31`)
    expect(JSON.stringify(tooLong.json().details)).toMatch(/at most 366 days/)
  })

  it("another tenant's organization is 404; none, or a malformed one, is 400 naming it", async () => {
    expect((await get(`/companies?organizationId=${other.organizationId}`)).statusCode).toBe(404)
    for (const query of ['', '?organizationId=not-a-uuid']) {
      const response = await get(`/companies${query}`)
      expect(response.json(), query).toMatchObject({
        ...errorBody(400, 'invalid_request'),
        details: { issues: [expect.objectContaining({ path: 'organizationId' })] },
      })
    }
    // The other tenant sees only its own traffic.
    const theirs = (await get(`/companies?organizationId=${other.organizationId}`, other.key)).json()
    expect(theirs.data).toEqual([expect.objectContaining({ id: acme, visitors: 1, pageViews: 5 })])
  })

  it('ICPOnly with no ICP config: nothing', async () => {
    expect((await get(`/companies?organizationId=${org()}&ICPOnly=true`)).json()).toMatchObject({
      data: [],
      total: 0,
    })
  })
})

describe('visitors', () => {
  it('GET /companies/visitors: every visitor, last seen first, with company; domain filters', async () => {
    const all = (await get(`/companies/visitors?organizationId=${org()}`)).json()
    expect(all.total).toBe(5)
    expect(new Set(all.data.map((row: { id: string }) => row.id))).toEqual(new Set(visitors))
    const lastSeen = all.data.map((row: { lastSeenAt: string }) => Date.parse(row.lastSeenAt))
    expect(lastSeen).toEqual([...lastSeen].sort((a, b) => b - a))
    const ofGlobex = (await get(`/companies/visitors?organizationId=${org()}&domain=GLOBEX.test`)).json()
    expect(ofGlobex.data).toEqual([
      expect.objectContaining({
        id: visitors[3],
        company: { id: globex, name: 'Globex', domain: 'globex.test' },
        sessions: 1,
        pageViews: 4,
        email: '',
        identifiedAt: null,
        icp: false,
        personaMatch: false,
      }),
    ])
    const projected = (
      await get(`/companies/visitors?organizationId=${org()}&fields=id,pageViews&limit=2`)
    ).json()
    expect(projected.data.every((row: object) => Object.keys(row).sort().join() === 'id,pageViews')).toBe(
      true,
    )
  })

  it('an unknown icpSlug or a bad domain is a 400', async () => {
    const slug = await get(`/companies/visitors?organizationId=${org()}&icpSlug=nope`)
    expect(slug.statusCode).toBe(400)
    expect(slug.json().message).toMatch(/nope/)
    expect((await get(`/companies/visitors?organizationId=${org()}&domain=http://x`)).statusCode).toBe(400)
    expect((await get(`/companies/visitors?organizationId=${org()}&personaOnly=2`)).statusCode).toBe(400)
  })

  it("GET /companies/{id}/visitors: the company's visitors; an unknown company has none", async () => {
    const ofAcme = (await get(`/companies/${acme}/visitors?organizationId=${org()}`)).json()
    expect(ofAcme.total).toBe(3)
    expect(ofAcme.data.map((row: { pageViews: number }) => row.pageViews)).toEqual([2, 2, 2])
    expect((await get(`/companies/nobody/visitors?organizationId=${org()}`)).json()).toMatchObject({
      data: [],
      total: 0,
    })
    expect((await get(`/companies/${acme}/visitors?organizationId=${other.organizationId}`)).statusCode).toBe(
      404,
    )
  })
})

describe('statistics', () => {
  const today = new Date().toISOString().slice(0, 10)

  it('totals for a range; from and to are required', async () => {
    const response = await get(`/companies/statistic/${org()}/total?from=${today}&to=${today}`)
    expect(response.statusCode, response.body).toBe(200)
    expect(response.json()).toEqual({
      visitors: 5,
      identifiedVisitors: 0,
      companies: 2,
      sessions: 5,
      pageViews: 11,
      avgSessionDurationSeconds: expect.any(Number),
      icpVisitors: 0,
      engagedSeconds: 0,
      from: `${today}T00:00:00.000Z`,
      to: `${today}T23:59:59.999Z`,
      filtered: {
        total: 0,
        byReason: { bot: 0, automation: 0, origin: 0, privacy: 0, invalid: 0, consent: 0, company_only: 0 },
      },
      // The server's default retention: raw data from 395 days before now.
      rawDataFrom: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    })
    expect((await get(`/companies/statistic/${org()}/total?from=${today}`)).statusCode).toBe(400)
    expect((await get(`/companies/statistic/${org()}/total?from=2026-02-01&to=2026-01-01`)).statusCode).toBe(
      400,
    )
    expect(
      (await get(`/companies/statistic/${other.organizationId}/total?from=${today}&to=${today}`)).statusCode,
    ).toBe(404)
    const empty = (await get(`/companies/statistic/${org()}/total?from=2020-01-01&to=2020-01-02`)).json()
    expect(empty).toMatchObject({ visitors: 0, sessions: 0, pageViews: 0, avgSessionDurationSeconds: 0 })
  })

  it('the chart: buckets from the range, filled with 0, in a time zone', async () => {
    const daily = (
      await get(`/companies/statistic/${org()}/visitors/chart?from=2020-01-01&to=2020-01-31`)
    ).json()
    expect(daily).toHaveLength(31)
    expect(daily[0]).toEqual({ timestamp: '2020-01-01T00:00:00.000Z', count: 0 })
    const paris = (
      await get(
        `/companies/statistic/${org()}/visitors/chart?from=2020-07-01&to=2020-07-02&timezone=Europe/Paris`,
      )
    ).json()
    // Two days: hours, from Paris midnight (22:00 UTC in summer).
    expect(paris).toHaveLength(48)
    expect(paris[0].timestamp).toBe('2020-06-30T22:00:00.000Z')
    const weekly = (
      await get(`/companies/statistic/${org()}/visitors/chart?from=2020-01-01&to=2020-01-31&interval=week`)
    ).json()
    expect(weekly[0].timestamp).toBe('2019-12-30T00:00:00.000Z')
    const now = (
      await get(`/companies/statistic/${org()}/visitors/chart?from=${today}&to=${today}&interval=day`)
    ).json()
    expect(now).toEqual([{ timestamp: `${today}T00:00:00.000Z`, count: 5 }])
    for (const query of ['timezone=Mars/Olympus', 'interval=minute', 'from=2020-01-01']) {
      const response = await get(
        `/companies/statistic/${org()}/visitors/chart?from=2020-01-01&to=2020-01-02&${query}`,
      )
      expect(response.statusCode, query).toBe(400)
    }
  })
})

describe('GET /companies/download', () => {
  const download = (query: string) => get(`/companies/download?organizationId=${org()}&${query}`)
  const lines = (body: string) => body.split('\r\n').filter(Boolean)

  it('companies: a CSV attachment with a header row, one line per company', async () => {
    const response = await download('statisticType=companies')
    expect(response.statusCode, response.body).toBe(200)
    expect(response.headers['content-type']).toBe('text/csv; charset=utf-8')
    expect(response.headers['content-disposition']).toMatch(
      /^attachment; filename="companies-\d{4}-\d\d-\d\d-\d{4}-\d\d-\d\d\.csv"$/,
    )
    const [header, ...rows] = lines(response.body)
    expect(header).toBe(
      'id,name,domain,industry,size,employeeSizeRange,country,logoUrl,visitors,identifiedVisitors,sessions,pageViews,firstSeenAt,lastSeenAt,engagedSeconds,icpMatch',
    )
    expect(rows).toHaveLength(2)
    expect(rows.find((row) => row.startsWith(`${acme},`))).toMatch(
      /^[^,]+,Acme,acme\.test,SaaS,,,US,,3,0,3,6,/,
    )
  })

  it('visitors and a company’s visitors, chosen columns, BOM', async () => {
    const all = lines((await download('statisticType=visitors&fields=id,pageViews,companyName')).body)
    expect(all[0]).toBe('id,pageViews,companyName')
    expect(
      all
        .slice(1)
        .map((row) => row.split(',')[0])
        .sort(),
    ).toEqual([...visitors].sort())
    const ofGlobex = lines((await download(`statisticType=companyVisitors&companyId=${globex}&bom=1`)).body)
    expect(ofGlobex[0]!.startsWith('\uFEFFid,email,')).toBe(true)
    expect(ofGlobex).toHaveLength(2)
    expect(ofGlobex[1]).toContain(`${visitors[3]},`)
  })

  it('visitors: the engine writes the lines, cells guarded and quoted as in every CSV', async () => {
    const third = await h.createTenant()
    const odd = await h.seedCompany({ name: '=HYPERLINK("http://x"), Inc.', domain: 'odd.test' })
    const { visitorId } = await h.seedVisitor(third.organizationId, 2, { companyId: odd })
    const response = await get(
      `/companies/download?organizationId=${third.organizationId}&statisticType=visitors&fields=companyName,id,pageViews,identifiedAt,icp`,
      third.key,
    )
    expect(response.statusCode, response.body).toBe(200)
    expect(response.body).toBe(
      `companyName,id,pageViews,identifiedAt,icp\r\n"'=HYPERLINK(""http://x""), Inc.",${visitorId},2,,false\r\n`,
    )
  })

  it('bad input is a JSON 400; another tenant is 404', async () => {
    for (const query of [
      'statisticType=people',
      'statisticType=visitors&fields=id,revenue',
      'statisticType=companyVisitors',
      'statisticType=companies&fields=id,revenue',
      'statisticType=companies&fields=',
      'statisticType=visitors&bom=yes',
      'statisticType=visitors&from=2024-01-01&to=2025-12-31',
      '',
    ]) {
      const response = await download(query)
      expect(response.statusCode, query).toBe(400)
      expect(response.json(), query).toMatchObject(errorBody(400, 'invalid_request'))
    }
    expect((await download('statisticType=companies&fields=id,revenue')).json().message).toMatch(
      /valid fields: id, name/,
    )
    expect((await download('statisticType=visitors&fields=id,revenue')).json().message).toMatch(
      /Unknown field revenue; valid fields: id, email, firstName/,
    )
    expect(
      (await get(`/companies/download?organizationId=${other.organizationId}&statisticType=companies`))
        .statusCode,
    ).toBe(404)
  })
})

describe('the statistics answer cache', () => {
  it('serves an answer again while the data is unchanged, and a write shows at once', async () => {
    const fresh = await h.createTenant()
    await h.seedVisitor(fresh.organizationId, 2, { companyId: acme })
    const today = new Date().toISOString().slice(0, 10)
    const totals = () =>
      get(`/companies/statistic/${fresh.organizationId}/total?from=${today}&to=${today}`, fresh.key)
    const visitorsList = () => get(`/companies/visitors?organizationId=${fresh.organizationId}`, fresh.key)
    const first = await totals()
    expect(first.json()).toMatchObject({ visitors: 1, pageViews: 2 })
    const again = await totals()
    expect(again.headers['x-statistics-cache']).toBe('hit')
    expect(again.json()).toEqual(first.json())
    expect((await visitorsList()).json().total).toBe(1)
    // A new visitor (page views, then the settling pass): computed again, with it.
    await h.seedVisitor(fresh.organizationId, 3)
    const after = await totals()
    expect(after.headers['x-statistics-cache']).toBe('miss')
    expect(after.json()).toMatchObject({ visitors: 2, pageViews: 5 })
    expect((await visitorsList()).json().total).toBe(2)
  })
})
