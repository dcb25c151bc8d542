// Spec section "ICP configs, organization-level", end to end: the routes, the recalculation job the
// worker runs, the stats and the visitor profile's statuses, and incremental re-scoring of new
// activity. The tenant and scope matrix (matrix.test.ts) covers 401/403 for every route.

import { settleFirstHours } from '@visitor-id/core/analytics'
import type { RecalculationStatus } from '@visitor-id/core/icp'
import { blankContactFields } from '@visitor-id/core/visitor-tracking'
import { errorBody, type Harness, startHarness } from '@visitor-id/testing/harness'
import { timeUntil } from '@visitor-id/testing/poll'
import type { InjectOptions } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

let h: Harness

beforeAll(async () => {
  h = await startHarness({ ICP_RESCORE_INTERVAL_MS: '300' })
})

afterAll(async () => {
  await h?.stop()
})

interface Tenant {
  organizationId: string
  key: string
}

const isoPattern = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/
const saas = { company: { industries: ['SaaS'] } }
/** The distinct paths of a 400's issues, sorted (one field may fail two checks). */
const paths = (body: { details?: { issues: { path: string }[] } }) =>
  [...new Set(body.details?.issues.map((i) => i.path) ?? [])].sort()
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A request to `/organizations/{tenant}/icp-configs{suffix}` with the tenant's key. */
function call(tenant: Tenant, method: InjectOptions['method'], suffix = '', payload?: unknown) {
  return h.request({
    method,
    url: `/api/v1/organizations/${tenant.organizationId}/icp-configs${suffix}`,
    key: tenant.key,
    ...(payload === undefined ? {} : { payload: payload as InjectOptions['payload'] }),
  })
}

async function create(tenant: Tenant, body: object) {
  const response = await call(tenant, 'POST', '', body)
  expect(response.statusCode, response.body).toBe(201)
  return response.json()
}

type Recalculation = RecalculationStatus

/** The config once its last recalculation has succeeded (fails on a failed run). */
async function settled(tenant: Tenant, slug: string) {
  let config: (Record<string, unknown> & { recalculation: Recalculation | null }) | undefined
  await timeUntil(async () => {
    config = (await call(tenant, 'GET', `/${slug}`)).json()
    if (config?.recalculation?.status === 'failed') throw new Error(config.recalculation.error ?? 'failed')
    return config?.recalculation?.status === 'succeeded'
  }, 20_000)
  return config as Record<string, unknown> & { recalculation: Recalculation }
}

const company = (fields: { industry: string; country: string }) => h.seedCompany(fields)

/** Two page views of one session from the US, attributed to `companyId` as ingest does for a company IP. */
async function visit(organizationId: string, options: { visitorId?: string; companyId?: string } = {}) {
  return (await h.seedVisitor(organizationId, 2, { ...options, country: 'US', utmSource: '' })).visitorId
}

async function profile(tenant: Tenant, visitorId: string) {
  const response = await h.request({
    method: 'GET',
    url: `/api/v1/visitor-tracking/${tenant.organizationId}/visitors/${visitorId}`,
    key: tenant.key,
  })
  expect(response.statusCode, response.body).toBe(200)
  const { icp, icpStatuses, personaMatch } = response.json()
  return { icp, icpStatuses, personaMatch }
}

async function stats(tenant: Tenant, query = '') {
  const response = await call(tenant, 'GET', `/stats${query}`)
  expect(response.statusCode, response.body).toBe(200)
  return response.json()
}

describe('POST /organizations/{id}/icp-configs', () => {
  it('creates a config (201) with the defaults, a slug from the name and a recalculation asked for', async () => {
    const tenant = await h.createTenant()
    const filter = {
      company: { industries: ['SaaS', 'Fintech'], employee_size_ranges: ['51-200'], countries: ['US'] },
      contact: { job_titles: ['CTO'], seniorities: ['c-level'] },
    }
    const response = await call(tenant, 'POST', '', { name: '  Enterprise (US) — Été ', filter })
    expect(response.statusCode).toBe(201)
    const created = response.json()
    expect(created).toEqual({
      slug: 'enterprise-us-ete',
      name: 'Enterprise (US) — Été',
      filter,
      isActive: true,
      priority: 0,
      createdAt: expect.stringMatching(isoPattern),
      updatedAt: created.createdAt,
      recalculation: {
        status: expect.stringMatching(/^(queued|running|succeeded)$/),
        requestedAt: expect.stringMatching(isoPattern),
        startedAt: expect.toBeOneOf([null, expect.stringMatching(isoPattern)]),
        finishedAt: expect.toBeOneOf([null, expect.stringMatching(isoPattern)]),
        visitors: expect.toBeOneOf([null, 0]),
        matches: expect.toBeOneOf([null, 0]),
        durationMs: expect.toBeOneOf([null, expect.any(Number)]),
        error: null,
      },
    })
    const { recalculation, ...fields } = created
    const read = await settled(tenant, 'enterprise-us-ete')
    expect(read).toMatchObject(fields)
    // The organization has no visitors: the run scores none.
    expect(read.recalculation).toMatchObject({ status: 'succeeded', visitors: 0, matches: 0, error: null })
  })

  it('an inactive config asks for no recalculation', async () => {
    const tenant = await h.createTenant()
    const created = await create(tenant, { name: 'Dormant', filter: saas, isActive: false, priority: 7 })
    expect(created).toMatchObject({ slug: 'dormant', isActive: false, priority: 7, recalculation: null })
  })

  it('keeps an explicit slug; derived slugs take -2, -3... and never the reserved `stats`', async () => {
    const tenant = await h.createTenant()
    const slugs = []
    for (const body of [
      { name: 'Mid market', slug: 'mm' },
      { name: 'Mid market' },
      { name: 'Mid market' },
      { name: 'Mid-Market!' },
      { name: 'Stats' },
      { name: '***' },
      { name: 'x'.repeat(200) },
      { name: 'x'.repeat(200) },
    ]) {
      slugs.push((await create(tenant, { ...body, filter: saas })).slug)
    }
    expect(slugs).toEqual([
      'mm',
      'mid-market',
      'mid-market-2',
      'mid-market-3',
      'stats-2',
      'icp',
      'x'.repeat(64),
      `${'x'.repeat(62)}-2`,
    ])
    // An explicit slug may look like a derived one, as long as it is free.
    expect((await create(tenant, { name: 'Other', slug: 'mid-market-4', filter: saas })).slug).toBe(
      'mid-market-4',
    )
    expect((await create(tenant, { name: 'Mid market', filter: saas })).slug).toBe('mid-market-5')
  })

  it('an explicit slug that is taken: 409 conflict, and nothing is created', async () => {
    const tenant = await h.createTenant()
    await create(tenant, { name: 'First', slug: 'taken', filter: saas })
    await create(tenant, { name: 'Second', filter: saas })
    for (const slug of ['taken', 'second']) {
      const response = await call(tenant, 'POST', '', { name: 'Again', slug, filter: saas })
      expect(response.statusCode).toBe(409)
      expect(response.json()).toEqual(errorBody(409, 'conflict'))
    }
    const list = (await call(tenant, 'GET')).json()
    expect(list.map((c: { slug: string; name: string }) => [c.slug, c.name])).toEqual([
      ['taken', 'First'],
      ['second', 'Second'],
    ])
  })

  it('creates at the same time never share a slug', async () => {
    const tenant = await h.createTenant()
    const derived = await Promise.all(
      Array.from({ length: 4 }, () => call(tenant, 'POST', '', { name: 'Rush', filter: saas })),
    )
    expect(derived.map((r) => r.statusCode)).toEqual([201, 201, 201, 201])
    expect(derived.map((r) => r.json().slug).sort()).toEqual(['rush', 'rush-2', 'rush-3', 'rush-4'])
    const explicit = await Promise.all(
      Array.from({ length: 3 }, () => call(tenant, 'POST', '', { name: 'Mine', slug: 'mine', filter: saas })),
    )
    expect(explicit.map((r) => r.statusCode).sort()).toEqual([201, 409, 409])
    expect((await call(tenant, 'GET')).json()).toHaveLength(5)
  })

  it('slugs are per organization: another organization may use the same one', async () => {
    const a = await h.createTenant()
    const b = await h.createTenant()
    await create(a, { name: 'A', slug: 'same', filter: saas })
    expect((await create(b, { name: 'B', slug: 'same', filter: saas })).slug).toBe('same')
    expect((await call(a, 'GET', '/same')).json().name).toBe('A')
    expect((await call(b, 'GET', '/same')).json().name).toBe('B')
  })

  it('the slug `stats` is reserved: 400', async () => {
    const tenant = await h.createTenant()
    const response = await call(tenant, 'POST', '', { name: 'Stats', slug: 'stats', filter: saas })
    expect(response.statusCode).toBe(400)
    expect(response.json()).toEqual(errorBody(400, 'invalid_request'))
    expect((await call(tenant, 'GET')).json()).toEqual([])
  })

  const valid = { name: 'Valid', filter: saas }
  it.each([
    ['an empty body', {}, ['filter', 'name']],
    ['no name', { filter: saas }, ['name']],
    ['a blank name', { ...valid, name: '   ' }, ['name']],
    ['a name of the wrong type', { ...valid, name: 42 }, ['name']],
    ['an oversized name', { ...valid, name: 'x'.repeat(201) }, ['name']],
    ['no filter', { name: 'Valid' }, ['filter']],
    ['a filter that is not an object', { ...valid, filter: ['SaaS'] }, ['filter']],
    ['an unknown filter side', { ...valid, filter: { companies: { industries: ['SaaS'] } } }, ['filter']],
    ['an unknown company key', { ...valid, filter: { company: { industry: ['SaaS'] } } }, ['filter.company']],
    ['an unknown contact key', { ...valid, filter: { contact: { titles: ['CTO'] } } }, ['filter.contact']],
    [
      'values that are not an array',
      { ...valid, filter: { company: { industries: 'SaaS' } } },
      ['filter.company.industries'],
    ],
    [
      'a value of the wrong type',
      { ...valid, filter: { contact: { seniorities: ['vp', 3] } } },
      ['filter.contact.seniorities.1'],
    ],
    ['a blank value', { ...valid, filter: { company: { domains: ['  '] } } }, ['filter.company.domains.0']],
    [
      'an oversized value',
      { ...valid, filter: { company: { industries: ['x'.repeat(201)] } } },
      ['filter.company.industries.0'],
    ],
    [
      'too many values',
      { ...valid, filter: { company: { countries: Array.from({ length: 1001 }, (_, i) => `C${i}`) } } },
      ['filter.company.countries'],
    ],
    [
      'too many job titles',
      { ...valid, filter: { contact: { job_titles: Array.from({ length: 51 }, (_, i) => `T${i}`) } } },
      ['filter.contact.job_titles'],
    ],
    [
      'problems on both sides at once',
      { ...valid, filter: { company: { industries: [1] }, contact: { departments: 'IT' } } },
      ['filter.company.industries.0', 'filter.contact.departments'],
    ],
    ['isActive of the wrong type', { ...valid, isActive: 'true' }, ['isActive']],
    ['a fractional priority', { ...valid, priority: 1.5 }, ['priority']],
    ['a priority out of range', { ...valid, priority: 1_000_001 }, ['priority']],
    ['a priority of the wrong type', { ...valid, priority: '1' }, ['priority']],
    ['a slug with capitals', { ...valid, slug: 'Enterprise' }, ['slug']],
    ['a slug with a space', { ...valid, slug: 'enterprise us' }, ['slug']],
    ['a slug with a double dash', { ...valid, slug: 'a--b' }, ['slug']],
    ['a slug with a trailing dash', { ...valid, slug: 'a-' }, ['slug']],
    ['an empty slug', { ...valid, slug: '' }, ['slug']],
    ['an oversized slug', { ...valid, slug: 'a'.repeat(65) }, ['slug']],
    ['a slug of the wrong type', { ...valid, slug: 7 }, ['slug']],
    ['an unknown field', { ...valid, kind: 'partner' }, ['']],
    ['partner rules', { ...valid, rules: { groups: [] } }, ['']],
    ['an array body', [valid], ['']],
  ])('rejects %s with one 400 naming the fields', async (_label, payload, expected) => {
    const tenant = await h.createTenant()
    const response = await call(tenant, 'POST', '', payload)
    expect(response.statusCode).toBe(400)
    expect(response.json()).toMatchObject(errorBody(400, 'invalid_request'))
    expect(paths(response.json())).toEqual(expected)
    expect((await call(tenant, 'GET')).json()).toEqual([])
  })

  it('rejects a request without a body', async () => {
    const tenant = await h.createTenant()
    const response = await call(tenant, 'POST')
    expect(response.statusCode).toBe(400)
    expect(response.json()).toMatchObject(errorBody(400, 'invalid_request'))
  })
})

describe('GET /organizations/{id}/icp-configs', () => {
  it('lists lower priority values first, then the oldest first', async () => {
    const tenant = await h.createTenant()
    expect((await call(tenant, 'GET')).json()).toEqual([])
    for (const [name, priority] of [
      ['Fifth', 5],
      ['Minus one', -1],
      ['Default', undefined],
      ['Fifth again', 5],
      ['Zero', 0],
    ] as const) {
      await create(tenant, { name, filter: saas, ...(priority === undefined ? {} : { priority }) })
      await sleep(3) // createdAt has milliseconds: keep the order of creation visible
    }
    const list = (await call(tenant, 'GET')).json()
    expect(list.map((c: { slug: string; priority: number }) => [c.slug, c.priority])).toEqual([
      ['minus-one', -1],
      ['default', 0],
      ['zero', 0],
      ['fifth', 5],
      ['fifth-again', 5],
    ])
    // Each item is the config as GET shows it.
    const one = (await call(tenant, 'GET', '/zero')).json()
    expect(list[2]).toMatchObject({ ...one, recalculation: expect.anything() })
  })
})

describe('GET /organizations/{id}/icp-configs/{slug}', () => {
  it('404 for an unknown slug, 400 for an oversized one', async () => {
    const tenant = await h.createTenant()
    await create(tenant, { name: 'Known', filter: saas })
    const unknown = await call(tenant, 'GET', '/unknown')
    expect(unknown.statusCode).toBe(404)
    expect(unknown.json()).toEqual(errorBody(404, 'resource_not_found'))
    const oversized = await call(tenant, 'GET', `/${'a'.repeat(65)}`)
    expect(oversized.statusCode).toBe(400)
    expect(paths(oversized.json())).toEqual(['slug'])
  })

  it('`stats` is the stats route, never a config', async () => {
    const tenant = await h.createTenant()
    await create(tenant, { name: 'Stats', filter: saas }) // slug stats-2
    const response = await call(tenant, 'GET', '/stats')
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual([{ slug: 'stats-2', name: 'Stats', visitors: 0, matches: 0 }])
    for (const [method, suffix] of [
      ['PUT', '/stats'],
      ['DELETE', '/stats'],
      ['POST', '/stats/recalculate'],
    ] as const) {
      const other = await call(tenant, method, suffix, method === 'PUT' ? { name: 'X' } : undefined)
      expect(other.statusCode, `${method} ${suffix}`).toBe(404)
      expect(other.json()).toEqual(errorBody(404, 'resource_not_found'))
    }
  })

  it("another organization's key gets 404 on every slug route, and changes nothing", async () => {
    const owner = await h.createTenant()
    const other = await h.createTenant()
    const created = await create(owner, { name: 'Private', filter: saas })
    const url = `/api/v1/organizations/${owner.organizationId}/icp-configs`
    for (const [method, suffix, payload] of [
      ['GET', '/private', undefined],
      ['PUT', '/private', { name: 'Hijacked' }],
      ['DELETE', '/private', undefined],
      ['POST', '/private/recalculate', undefined],
      ['GET', '/stats', undefined],
    ] as const) {
      const response = await h.request({
        method,
        url: `${url}${suffix}`,
        key: other.key,
        ...(payload ? { payload } : {}),
      })
      expect(response.statusCode, `${method} ${suffix}`).toBe(404)
      expect(response.json()).toEqual(errorBody(404, 'resource_not_found'))
    }
    const { recalculation, ...fields } = created
    expect((await call(owner, 'GET', '/private')).json()).toMatchObject(fields)
  })
})

describe('PUT /organizations/{id}/icp-configs/{slug}', () => {
  it('updates each field alone and keeps the others', async () => {
    const tenant = await h.createTenant()
    const created = await create(tenant, { name: 'Original', filter: saas, priority: 3 })
    await sleep(3)
    const put = async (slug: string, body: object) => {
      const response = await call(tenant, 'PUT', `/${slug}`, body)
      expect(response.statusCode, response.body).toBe(200)
      const updated = response.json()
      const { recalculation, ...fields } = updated
      expect((await call(tenant, 'GET', `/${updated.slug}`)).json()).toMatchObject(fields)
      return updated
    }
    let expected = {
      slug: 'original',
      name: 'Original',
      filter: saas as object,
      isActive: true,
      priority: 3,
      createdAt: created.createdAt,
    }
    const renamed = await put('original', { name: ' Renamed ' })
    expected = { ...expected, name: 'Renamed' }
    expect(renamed).toMatchObject(expected)
    expect(renamed.updatedAt > created.createdAt).toBe(true)

    const contact = { contact: { seniorities: ['vp'], departments: ['Engineering'] } }
    expected = { ...expected, filter: contact }
    expect(await put('original', { filter: contact })).toMatchObject(expected)

    expected = { ...expected, priority: -2 }
    expect(await put('original', { priority: -2 })).toMatchObject(expected)

    expected = { ...expected, isActive: false }
    expect(await put('original', { isActive: false })).toMatchObject(expected)

    expected = { ...expected, slug: 'new-slug' }
    expect(await put('original', { slug: 'new-slug' })).toMatchObject(expected)
    expect((await call(tenant, 'GET', '/original')).statusCode).toBe(404)
    // Its own slug again is no conflict.
    expect(await put('new-slug', { slug: 'new-slug', name: 'Same slug' })).toMatchObject({
      ...expected,
      name: 'Same slug',
    })
    // The old slug is free again.
    expect((await create(tenant, { name: 'Original', filter: saas })).slug).toBe('original')
  })

  it('a new filter or turning the config on asks for a recalculation; a new name does not', async () => {
    const tenant = await h.createTenant()
    await create(tenant, { name: 'Watched', filter: saas })
    const first = (await settled(tenant, 'watched')).recalculation
    const renamed = (await call(tenant, 'PUT', '/watched', { name: 'Watched 2', priority: 4 })).json()
    expect(renamed.recalculation).toEqual(first)
    const refiltered = (
      await call(tenant, 'PUT', '/watched', { filter: { company: { industries: ['Retail'] } } })
    ).json()
    expect(refiltered.recalculation.requestedAt > first.requestedAt).toBe(true)
    expect(refiltered.recalculation.status).not.toBe('failed')
    const second = (await settled(tenant, 'watched')).recalculation
    expect(second.finishedAt! > first.finishedAt!).toBe(true)
    const off = (await call(tenant, 'PUT', '/watched', { isActive: false })).json()
    expect(off.recalculation).toEqual(second)
    const on = (await call(tenant, 'PUT', '/watched', { isActive: true })).json()
    expect(on.recalculation.requestedAt > second.requestedAt).toBe(true)
    expect((await settled(tenant, 'watched')).recalculation.finishedAt! > second.finishedAt!).toBe(true)
  })

  it('turning a config off or on, or deleting it, changes the ICPOnly statistics at the next pass', async () => {
    const tenant = await h.createTenant()
    const fit = await company({ industry: 'SaaS', country: 'US' })
    await visit(tenant.organizationId, { companyId: fit })
    await visit(tenant.organizationId, { companyId: fit })
    await visit(tenant.organizationId)
    await create(tenant, { name: 'Fit', filter: saas })
    await settled(tenant, 'fit')
    const range = `from=${new Date(Date.now() - 86_400_000).toISOString()}&to=${new Date().toISOString()}`
    /** The totals of everyone and of ICPOnly after a settling pass. */
    const totals = async () => {
      await settleFirstHours(h.store)
      const read = async (audience: string) => {
        const response = await h.request({
          method: 'GET',
          url: `/api/v1/companies/statistic/${tenant.organizationId}/total?${range}${audience}`,
          key: tenant.key,
        })
        expect(response.statusCode, response.body).toBe(200)
        const { visitors, icpVisitors, companies } = response.json()
        return { visitors, icpVisitors, companies }
      }
      return { everyone: await read(''), icpOnly: await read('&ICPOnly=true') }
    }
    const matched = {
      everyone: { visitors: 3, icpVisitors: 2, companies: 1 },
      icpOnly: { visitors: 2, icpVisitors: 2, companies: 1 },
    }
    const none = {
      everyone: { visitors: 3, icpVisitors: 0, companies: 1 },
      icpOnly: { visitors: 0, icpVisitors: 0, companies: 0 },
    }
    expect(await totals()).toEqual(matched)
    expect((await call(tenant, 'PUT', '/fit', { isActive: false })).statusCode).toBe(200)
    expect(await totals()).toEqual(none)
    // On again: the recalculation finds the stored scores unchanged and writes none; the matches
    // count again all the same.
    expect((await call(tenant, 'PUT', '/fit', { isActive: true })).statusCode).toBe(200)
    await settled(tenant, 'fit')
    expect(await totals()).toEqual(matched)
    expect((await call(tenant, 'DELETE', '/fit')).statusCode).toBe(204)
    expect(await totals()).toEqual(none)
  })

  it('409 when renaming to a taken slug, 400 for `stats`, bad slugs and bad bodies, 404 for unknown slugs', async () => {
    const tenant = await h.createTenant()
    const kept = await create(tenant, { name: 'Kept', filter: saas })
    await create(tenant, { name: 'Other', filter: saas })
    const conflict = await call(tenant, 'PUT', '/kept', { slug: 'other', name: 'Lost' })
    expect(conflict.statusCode).toBe(409)
    expect(conflict.json()).toEqual(errorBody(409, 'conflict'))
    const reserved = await call(tenant, 'PUT', '/kept', { slug: 'stats' })
    expect(reserved.statusCode).toBe(400)
    expect(reserved.json()).toEqual(errorBody(400, 'invalid_request'))
    for (const [payload, expected] of [
      [{}, ['']],
      [{ slug: 'Not A Slug' }, ['slug']],
      [{ name: '' }, ['name']],
      [{ filter: { company: { sizes: ['1-10'] } } }, ['filter.company']],
      [{ filter: null }, ['filter']],
      [{ isActive: 1 }, ['isActive']],
      [{ priority: 'high' }, ['priority']],
      [{ label: 'Partner field' }, ['']],
    ] as const) {
      const response = await call(tenant, 'PUT', '/kept', payload)
      expect(response.statusCode, JSON.stringify(payload)).toBe(400)
      expect(response.json()).toMatchObject(errorBody(400, 'invalid_request'))
      expect(paths(response.json())).toEqual(expected)
    }
    const unknown = await call(tenant, 'PUT', '/unknown', { name: 'X' })
    expect(unknown.statusCode).toBe(404)
    expect(unknown.json()).toEqual(errorBody(404, 'resource_not_found'))
    // Nothing changed.
    const { recalculation, ...fields } = kept
    expect((await call(tenant, 'GET', '/kept')).json()).toMatchObject(fields)
  })
})

describe('DELETE /organizations/{id}/icp-configs/{slug}', () => {
  it('204 without a body, then 404 everywhere; the slug is free again', async () => {
    const tenant = await h.createTenant()
    await create(tenant, { name: 'Doomed', filter: saas })
    await create(tenant, { name: 'Survivor', filter: saas })
    const deleted = await call(tenant, 'DELETE', '/doomed')
    expect(deleted.statusCode).toBe(204)
    expect(deleted.body).toBe('')
    for (const [method, suffix] of [
      ['GET', '/doomed'],
      ['PUT', '/doomed'],
      ['DELETE', '/doomed'],
      ['POST', '/doomed/recalculate'],
    ] as const) {
      const response = await call(tenant, method, suffix, method === 'PUT' ? { name: 'Back' } : undefined)
      expect(response.statusCode, `${method} ${suffix}`).toBe(404)
      expect(response.json()).toEqual(errorBody(404, 'resource_not_found'))
    }
    expect((await call(tenant, 'GET')).json().map((c: { slug: string }) => c.slug)).toEqual(['survivor'])
    expect((await create(tenant, { name: 'Doomed', filter: saas })).slug).toBe('doomed')
  })
})

describe('POST /organizations/{id}/icp-configs/{slug}/recalculate', () => {
  let tenant: Tenant

  beforeAll(async () => {
    tenant = await h.createTenant()
    const saasCompany = await company({ industry: 'SaaS', country: 'US' })
    await visit(tenant.organizationId, { companyId: saasCompany })
    await visit(tenant.organizationId)
    await h.seedVisitor(tenant.organizationId)
  })

  it('202 at once with the queued run, which then succeeds with the counts', async () => {
    await create(tenant, { name: 'Recalc', filter: saas })
    const first = (await settled(tenant, 'recalc')).recalculation
    expect(first).toMatchObject({ visitors: 3, matches: 1 })
    const response = await call(tenant, 'POST', '/recalc/recalculate')
    expect(response.statusCode).toBe(202)
    const accepted = response.json()
    expect(accepted).toEqual({
      slug: 'recalc',
      recalculation: {
        status: expect.toBeOneOf(['queued', 'running']),
        requestedAt: expect.stringMatching(isoPattern),
        startedAt: expect.stringMatching(isoPattern),
        finishedAt: expect.toBeOneOf([null, expect.stringMatching(isoPattern)]),
        // The last finished run's figures stay until the next one finishes.
        visitors: 3,
        matches: 1,
        durationMs: expect.any(Number),
        error: null,
      },
    })
    expect(accepted.recalculation.requestedAt > first.finishedAt!).toBe(true)
    const done = (await settled(tenant, 'recalc')).recalculation
    expect(done).toEqual({
      status: 'succeeded',
      requestedAt: accepted.recalculation.requestedAt,
      startedAt: expect.stringMatching(isoPattern),
      finishedAt: expect.stringMatching(isoPattern),
      visitors: 3,
      matches: 1,
      durationMs: expect.any(Number),
      error: null,
    })
    expect(done.startedAt! >= done.requestedAt!).toBe(true)
    expect(done.finishedAt! >= done.startedAt!).toBe(true)
    expect(done.durationMs).toBeGreaterThanOrEqual(0)
  })

  it('an inactive config recalculates to nothing that counts', async () => {
    await create(tenant, { name: 'Off', filter: saas, isActive: false })
    expect((await call(tenant, 'POST', '/off/recalculate')).statusCode).toBe(202)
    expect((await settled(tenant, 'off')).recalculation).toMatchObject({ visitors: 0, matches: 0 })
  })

  it('two requests at once: both 202, and the config ends succeeded with the right counts', async () => {
    await create(tenant, { name: 'Twice', filter: saas })
    for (let round = 0; round < 4; round++) {
      const responses = await Promise.all([
        call(tenant, 'POST', '/twice/recalculate'),
        call(tenant, 'POST', '/twice/recalculate'),
      ])
      expect(responses.map((r) => r.statusCode)).toEqual([202, 202])
      const done = (await settled(tenant, 'twice')).recalculation
      expect(done).toMatchObject({ status: 'succeeded', visitors: 3, matches: 1, error: null })
      const latest = responses.map((r) => r.json().recalculation.requestedAt).sort()[1]
      // The run that finished started after the last request: both are served.
      expect(done.startedAt! >= latest).toBe(true)
    }
  })
})

describe('end to end: scores, stats and the visitor profile', () => {
  let tenant: Tenant
  let saasCompany: string
  const visitors = {} as Record<'saas1' | 'saas2' | 'fintech' | 'anonymous', string>
  let today: string

  beforeAll(async () => {
    tenant = await h.createTenant()
    today = new Date(Date.now() - 60_000).toISOString().slice(0, 10)
    saasCompany = await company({ industry: 'SaaS', country: 'US' })
    const fintechCompany = await company({ industry: 'Fintech', country: 'GB' })
    visitors.saas1 = await visit(tenant.organizationId, { companyId: saasCompany })
    visitors.saas2 = await visit(tenant.organizationId, { companyId: saasCompany })
    visitors.fintech = await visit(tenant.organizationId, { companyId: fintechCompany })
    visitors.anonymous = (await h.seedVisitor(tenant.organizationId)).visitorId
    // Industry values match whatever their case; keys combine with AND (the Fintech company is in GB).
    await create(tenant, { name: 'SaaS buyers', filter: { company: { industries: ['saas'] } } })
    await create(tenant, {
      name: 'Fintech US',
      filter: { company: { industries: ['Fintech'], countries: ['US'] } },
      priority: 1,
    })
  })

  it('the recalculation counts the visitors and the matches', async () => {
    expect((await settled(tenant, 'saas-buyers')).recalculation).toMatchObject({
      status: 'succeeded',
      visitors: 4,
      matches: 2,
    })
    expect((await settled(tenant, 'fintech-us')).recalculation).toMatchObject({
      status: 'succeeded',
      visitors: 4,
      matches: 0,
    })
  })

  it('stats count the visitors seen and the matches of each active config', async () => {
    const expected = [
      { slug: 'saas-buyers', name: 'SaaS buyers', visitors: 4, matches: 2 },
      { slug: 'fintech-us', name: 'Fintech US', visitors: 4, matches: 0 },
    ]
    expect(await stats(tenant)).toEqual(expected)
    // A date alone: `from` at the start of the day, `to` at its end.
    expect(await stats(tenant, `?from=${today}&to=${today}`)).toEqual(expected)
    expect(await stats(tenant, `?to=${today}`)).toEqual(expected)
    expect(
      await stats(tenant, `?from=${encodeURIComponent(new Date(Date.now() - 3_600_000).toISOString())}`),
    ).toEqual(expected)
    // Nobody was seen in 2020.
    expect(await stats(tenant, '?from=2020-01-01&to=2020-01-31')).toEqual(
      expected.map((item) => ({ ...item, visitors: 0, matches: 0 })),
    )
    expect(await stats(tenant, `?from=2020-01-01T00:00:00%2B02:00&to=2020-01-02T00:00:00Z`)).toEqual(
      expected.map((item) => ({ ...item, visitors: 0, matches: 0 })),
    )
  })

  it('the profile shows icp and the status of every active config', async () => {
    expect(await profile(tenant, visitors.saas1)).toEqual({
      icp: true,
      icpStatuses: { 'saas-buyers': true, 'fintech-us': false },
      personaMatch: false,
    })
    expect(await profile(tenant, visitors.saas2)).toMatchObject({ icp: true })
    for (const visitorId of [visitors.fintech, visitors.anonymous]) {
      expect(await profile(tenant, visitorId)).toEqual({
        icp: false,
        icpStatuses: { 'saas-buyers': false, 'fintech-us': false },
        personaMatch: false,
      })
    }
  })

  it('a contact-side filter decides the persona match', async () => {
    const at = new Date().toISOString()
    await h.repos.visitors.save({
      ...blankContactFields,
      id: visitors.saas1,
      organization_id: tenant.organizationId,
      email: 'cto@saas.test',
      first_name: 'Grace',
      last_name: 'Hopper',
      job_title: 'Chief Technology Officer',
      seniority: 'c-level',
      department: '',
      country: '',
      linkedin_url: '',
      company_id: saasCompany,
      identified_at: at,
      first_seen_at: at,
      last_seen_at: at,
      created_at: at,
      updated_at: at,
    })
    await create(tenant, {
      name: 'Tech leaders',
      filter: { company: { industries: ['SaaS'] }, contact: { job_titles: ['technology'] } },
      priority: 2,
    })
    expect((await settled(tenant, 'tech-leaders')).recalculation).toMatchObject({ visitors: 4, matches: 2 })
    expect(await profile(tenant, visitors.saas1)).toEqual({
      icp: true,
      icpStatuses: { 'saas-buyers': true, 'fintech-us': false, 'tech-leaders': true },
      personaMatch: true,
    })
    expect(await profile(tenant, visitors.saas2)).toEqual({
      icp: true,
      icpStatuses: { 'saas-buyers': true, 'fintech-us': false, 'tech-leaders': true },
      personaMatch: false,
    })
    expect((await call(tenant, 'DELETE', '/tech-leaders')).statusCode).toBe(204)
    expect(await profile(tenant, visitors.saas1)).toEqual({
      icp: true,
      icpStatuses: { 'saas-buyers': true, 'fintech-us': false },
      personaMatch: false,
    })
  })

  it('new activity is scored without a recalculation', async () => {
    const before = (await settled(tenant, 'saas-buyers')).recalculation
    // A new visitor from the SaaS company.
    const newcomer = await visit(tenant.organizationId, { companyId: saasCompany })
    await timeUntil(async () => (await profile(tenant, newcomer)).icpStatuses['saas-buyers'] === true, 10_000)
    expect(await profile(tenant, newcomer)).toEqual({
      icp: true,
      icpStatuses: { 'saas-buyers': true, 'fintech-us': false },
      personaMatch: false,
    })
    // A known visitor who now comes from the SaaS company.
    await visit(tenant.organizationId, { visitorId: visitors.anonymous, companyId: saasCompany })
    await timeUntil(
      async () => (await profile(tenant, visitors.anonymous)).icpStatuses['saas-buyers'] === true,
      10_000,
    )
    expect(await stats(tenant)).toEqual([
      { slug: 'saas-buyers', name: 'SaaS buyers', visitors: 5, matches: 4 },
      { slug: 'fintech-us', name: 'Fintech US', visitors: 5, matches: 0 },
    ])
    // No recalculation ran.
    expect((await call(tenant, 'GET', '/saas-buyers')).json().recalculation).toEqual(before)
  })

  it('deactivating a config takes its slug out of the statuses and the stats at once; turning it on brings it back', async () => {
    const off = await call(tenant, 'PUT', '/saas-buyers', { isActive: false })
    expect(off.statusCode).toBe(200)
    expect(await profile(tenant, visitors.saas1)).toEqual({
      icp: false,
      icpStatuses: { 'fintech-us': false },
      personaMatch: false,
    })
    expect(await stats(tenant)).toEqual([{ slug: 'fintech-us', name: 'Fintech US', visitors: 5, matches: 0 }])
    const on = await call(tenant, 'PUT', '/saas-buyers', { isActive: true })
    expect(on.statusCode).toBe(200)
    expect((await settled(tenant, 'saas-buyers')).recalculation).toMatchObject({ visitors: 5, matches: 4 })
    expect(await profile(tenant, visitors.saas1)).toMatchObject({
      icp: true,
      icpStatuses: { 'saas-buyers': true, 'fintech-us': false },
    })
    expect((await stats(tenant))[0]).toEqual({
      slug: 'saas-buyers',
      name: 'SaaS buyers',
      visitors: 5,
      matches: 4,
    })
  })

  it('a new filter re-scores: who matched and who did not swap', async () => {
    await call(tenant, 'PUT', '/fintech-us', { filter: { company: { countries: ['gb'] } } })
    expect((await settled(tenant, 'fintech-us')).recalculation).toMatchObject({ visitors: 5, matches: 1 })
    expect(await profile(tenant, visitors.fintech)).toEqual({
      icp: true,
      icpStatuses: { 'saas-buyers': false, 'fintech-us': true },
      personaMatch: false,
    })
    expect((await stats(tenant))[1]).toMatchObject({ slug: 'fintech-us', matches: 1 })
  })

  it('renaming a slug carries the scores over; deleting a config takes them out at once', async () => {
    const renamed = await call(tenant, 'PUT', '/saas-buyers', { slug: 'saas' })
    expect(renamed.statusCode).toBe(200)
    expect(await profile(tenant, visitors.saas1)).toEqual({
      icp: true,
      icpStatuses: { saas: true, 'fintech-us': false },
      personaMatch: false,
    })
    expect((await call(tenant, 'DELETE', '/saas')).statusCode).toBe(204)
    expect(await profile(tenant, visitors.saas1)).toEqual({
      icp: false,
      icpStatuses: { 'fintech-us': false },
      personaMatch: false,
    })
    expect(await stats(tenant)).toEqual([{ slug: 'fintech-us', name: 'Fintech US', visitors: 5, matches: 1 }])
  })
})

describe('GET /organizations/{id}/icp-configs/stats: the range', () => {
  it.each([
    ['a date that is not one', '?from=yesterday', ['from']],
    ['a day that does not exist', '?from=2026-02-31', ['from']],
    ['a month that does not exist', '?to=2026-13-01', ['to']],
    ['a date-time without a zone', '?from=2026-01-01T00:00:00', ['from']],
    ['`from` after `to`', '?from=2026-03-02&to=2026-03-01', ['from']],
    ['`from` after `to` within a day', '?from=2026-03-01T12:00:00Z&to=2026-03-01T11:59:59Z', ['from']],
    ['an oversized value', `?from=${'2'.repeat(41)}`, ['from']],
  ])('400 for %s', async (_label, query, expected) => {
    const response = await h.request({
      method: 'GET',
      url: `/api/v1/organizations/${h.boot.organizationId}/icp-configs/stats${query}`,
    })
    expect(response.statusCode).toBe(400)
    expect(response.json()).toMatchObject(errorBody(400, 'invalid_request'))
    expect(paths(response.json())).toEqual(expected)
  })

  it.each([
    ['the same day twice', '?from=2026-03-01&to=2026-03-01'],
    ['a leap day', '?from=2024-02-29&to=2024-03-01'],
    ['dates and date-times mixed', '?from=2026-01-01&to=2026-01-31T10:00:00.000Z'],
    ['only `from`, in the past', '?from=2026-01-01'],
  ])('200 for %s', async (_label, query) => {
    const tenant = await h.createTenant()
    await create(tenant, { name: 'Any', filter: saas })
    const response = await call(tenant, 'GET', `/stats${query}`)
    expect(response.statusCode, response.body).toBe(200)
    expect(response.json()).toEqual([{ slug: 'any', name: 'Any', visitors: 0, matches: 0 }])
  })
})
