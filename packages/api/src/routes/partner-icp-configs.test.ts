// Spec section "Partner: ICP configs", end to end: rules-based configs for the organizations a
// partner manages, their recalculation, stats and the visitor profile's statuses. The tenant and
// scope matrix (matrix.test.ts) covers 401/403 for every route.
import { randomUUID } from 'node:crypto'
import type { RecalculationStatus } from '@visitor-id/core/icp'
import { createOrganization, createPartner, createUser } from '@visitor-id/core/organizations'
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

const isoPattern = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/
const paths = (body: { details?: { issues: { path: string }[] } }) =>
  [...new Set(body.details?.issues.map((i) => i.path) ?? [])].sort()
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const rulesOf = (type: string, comparator: string, value: unknown) => ({
  groups: [{ operator: 'AND', conditions: [{ type, comparator, value }] }],
})
const germany = rulesOf('country', 'equals', 'DE')

/** A new sub-organization of the bootstrap agency, so the bootstrap partner manages it. */
async function managedOrganization(): Promise<string> {
  const response = await h.request({
    method: 'POST',
    url: '/api/v1/organization',
    payload: { organizationName: `Managed ${randomUUID().slice(0, 8)}` },
  })
  expect(response.statusCode, response.body).toBe(200)
  return response.json().id
}

/** A partner request to `/partner/organizations/{organizationId}/icp-configs{suffix}`. */
function call(
  organizationId: string,
  method: InjectOptions['method'],
  suffix = '',
  payload?: unknown,
  partnerKey = h.boot.partnerKey,
) {
  return h.request({
    method,
    url: `/api/v1/partner/organizations/${organizationId}/icp-configs${suffix}`,
    key: null,
    partnerKey,
    ...(payload === undefined ? {} : { payload: payload as InjectOptions['payload'] }),
  })
}

/** An organization-level request with the bootstrap agency key (it addresses its sub-organizations). */
function organizationCall(
  organizationId: string,
  method: InjectOptions['method'],
  suffix = '',
  payload?: unknown,
) {
  return h.request({
    method,
    url: `/api/v1/organizations/${organizationId}/icp-configs${suffix}`,
    ...(payload === undefined ? {} : { payload: payload as InjectOptions['payload'] }),
  })
}

async function create(organizationId: string, body: object) {
  const response = await call(organizationId, 'POST', '', body)
  expect(response.statusCode, response.body).toBe(201)
  return response.json().icpConfig
}

type Recalculation = RecalculationStatus

/** The config once its last recalculation has succeeded (fails on a failed run). */
async function settled(organizationId: string, slug: string) {
  let config: (Record<string, unknown> & { recalculation: Recalculation | null }) | undefined
  await timeUntil(async () => {
    config = (await call(organizationId, 'GET', `/${slug}`)).json().icpConfig
    if (config?.recalculation?.status === 'failed') throw new Error(config.recalculation.error ?? 'failed')
    return config?.recalculation?.status === 'succeeded'
  }, 20_000)
  return config as Record<string, unknown> & { recalculation: Recalculation }
}

async function stats(organizationId: string, query = '') {
  const response = await call(organizationId, 'GET', `/stats${query}`)
  expect(response.statusCode, response.body).toBe(200)
  return response.json()
}

async function profile(organizationId: string, visitorId: string) {
  const response = await h.request({
    method: 'GET',
    url: `/api/v1/visitor-tracking/${organizationId}/visitors/${visitorId}`,
  })
  expect(response.statusCode, response.body).toBe(200)
  const { icp, icpStatuses } = response.json()
  return { icp, icpStatuses }
}

/** Two page views of one visitor from `country`, without UTM parameters. */
async function visit(organizationId: string, country: string) {
  return (await h.seedVisitor(organizationId, 2, { country, utmSource: '' })).visitorId
}

describe('POST /partner/organizations/{id}/icp-configs', () => {
  it('creates {icpConfig} (201) with a slug from the label and the defaults', async () => {
    const organizationId = await managedOrganization()
    const rules = {
      groups: [
        {
          operator: 'AND',
          conditions: [
            { type: 'industry', comparator: 'in', value: ['SaaS', 'Fintech'] },
            { type: 'page_contains', comparator: 'contains', value: '/pricing', optional: true },
          ],
        },
        { operator: 'OR', conditions: [{ type: 'company_size', comparator: 'between', value: [50, 1000] }] },
      ],
    }
    const response = await call(organizationId, 'POST', '', { label: ' Enterprise US ', rules })
    expect(response.statusCode).toBe(201)
    const { icpConfig } = response.json()
    expect(icpConfig).toEqual({
      id: expect.stringMatching(/^icp_[0-9a-f]{24}$/),
      slug: 'enterprise-us',
      label: 'Enterprise US',
      rules,
      priority: 0,
      isActive: true,
      createdAt: expect.stringMatching(isoPattern),
      updatedAt: icpConfig.createdAt,
      recalculation: expect.objectContaining({
        status: expect.toBeOneOf(['queued', 'running', 'succeeded']),
        requestedAt: expect.stringMatching(isoPattern),
        error: null,
      }),
    })
    const { recalculation, ...fields } = icpConfig
    const read = await settled(organizationId, 'enterprise-us')
    expect(read).toMatchObject(fields)
    expect(read.recalculation).toMatchObject({ status: 'succeeded', visitors: 0, matches: 0 })
  })

  it('derives enterprise-us, then enterprise-us-2, -3; priority and isActive are kept', async () => {
    const organizationId = await managedOrganization()
    expect((await create(organizationId, { label: 'Enterprise US', rules: germany })).slug).toBe(
      'enterprise-us',
    )
    expect((await create(organizationId, { label: 'Enterprise US', rules: germany })).slug).toBe(
      'enterprise-us-2',
    )
    const third = await create(organizationId, {
      label: 'Enterprise — US!',
      rules: germany,
      priority: -4,
      isActive: false,
    })
    expect(third).toMatchObject({
      slug: 'enterprise-us-3',
      priority: -4,
      isActive: false,
      recalculation: null,
    })
    // A label that leaves nothing for a slug, and one that would take the stats path.
    expect((await create(organizationId, { label: '!!!', rules: germany })).slug).toBe('icp')
    expect((await create(organizationId, { label: 'Stats', rules: germany })).slug).toBe('stats-2')
  })

  it('organization-level and partner configs share one slug namespace, and never see each other', async () => {
    const organizationId = await managedOrganization()
    const own = await organizationCall(organizationId, 'POST', '', {
      name: 'Shared',
      filter: { company: { industries: ['SaaS'] } },
    })
    expect(own.statusCode).toBe(201)
    expect(own.json().slug).toBe('shared')
    expect((await create(organizationId, { label: 'Shared', rules: germany })).slug).toBe('shared-2')
    // An explicit organization-level slug may not take the partner's.
    const taken = await organizationCall(organizationId, 'POST', '', {
      name: 'Mine',
      slug: 'shared-2',
      filter: {},
    })
    expect(taken.statusCode).toBe(409)
    expect(taken.json()).toEqual(errorBody(409, 'conflict'))
    const rename = await organizationCall(organizationId, 'PUT', '/shared', { slug: 'shared-2' })
    expect(rename.statusCode).toBe(409)
    expect(rename.json()).toEqual(errorBody(409, 'conflict'))
    // Neither API reaches the other's config.
    for (const [method, suffix] of [
      ['GET', '/shared'],
      ['PUT', '/shared'],
      ['DELETE', '/shared'],
    ] as const) {
      const response = await call(
        organizationId,
        method,
        suffix,
        method === 'PUT' ? { priority: 1 } : undefined,
      )
      expect(response.statusCode, `partner ${method} ${suffix}`).toBe(404)
      expect(response.json()).toEqual(errorBody(404, 'resource_not_found'))
    }
    for (const [method, suffix] of [
      ['GET', '/shared-2'],
      ['PUT', '/shared-2'],
      ['DELETE', '/shared-2'],
      ['POST', '/shared-2/recalculate'],
    ] as const) {
      const response = await organizationCall(
        organizationId,
        method,
        suffix,
        method === 'PUT' ? { priority: 1 } : undefined,
      )
      expect(response.statusCode, `organization ${method} ${suffix}`).toBe(404)
      expect(response.json()).toEqual(errorBody(404, 'resource_not_found'))
    }
    const partnerList = (await call(organizationId, 'GET')).json()
    expect(partnerList.icpConfigs.map((c: { slug: string }) => c.slug)).toEqual(['shared-2'])
    const organizationList = (await organizationCall(organizationId, 'GET')).json()
    expect(organizationList.map((c: { slug: string; priority: number }) => [c.slug, c.priority])).toEqual([
      ['shared', 0],
    ])
    // Once the organization-level config is gone, its slug is free for the partner.
    expect((await organizationCall(organizationId, 'DELETE', '/shared')).statusCode).toBe(204)
    expect((await create(organizationId, { label: 'Shared', rules: germany })).slug).toBe('shared')
  })

  const valid = { label: 'Valid', rules: germany }
  const broken = {
    groups: [
      {
        operator: 'XOR',
        conditions: [
          { type: 'country', comparator: 'equals', value: 'DE' },
          { type: 'page_view_count', comparator: 'gt', value: 'ten' },
        ],
      },
      { operator: 'AND', conditions: [{ type: 'no_such_type', comparator: 'equals', value: 'x' }] },
    ],
  }
  it.each([
    ['an empty body', {}, ['label', 'rules']],
    ['no label', { rules: germany }, ['label']],
    ['a blank label', { ...valid, label: '  ' }, ['label']],
    ['a label of the wrong type', { ...valid, label: ['Valid'] }, ['label']],
    ['an oversized label', { ...valid, label: 'x'.repeat(201) }, ['label']],
    ['no rules', { label: 'Valid' }, ['rules']],
    ['rules that are not an object', { ...valid, rules: 'country = DE' }, ['rules']],
    ['rules without groups', { ...valid, rules: { groups: [] } }, ['rules.groups']],
    [
      'a condition without a value',
      {
        ...valid,
        rules: { groups: [{ operator: 'AND', conditions: [{ type: 'country', comparator: 'equals' }] }] },
      },
      ['rules.groups.0.conditions.0.value'],
    ],
    [
      'a comparator the type does not take',
      { ...valid, rules: rulesOf('is_hosting', 'contains', 'yes') },
      ['rules.groups.0.conditions.0.comparator'],
    ],
    [
      'every problem of the rules',
      { ...valid, rules: broken },
      ['rules.groups.0.conditions.1.value', 'rules.groups.0.operator', 'rules.groups.1.conditions.0.type'],
    ],
    [
      'problems of the label and of the rules together',
      { label: '', rules: broken, priority: 0.5 },
      [
        'label',
        'priority',
        'rules.groups.0.conditions.1.value',
        'rules.groups.0.operator',
        'rules.groups.1.conditions.0.type',
      ],
    ],
    ['a fractional priority', { ...valid, priority: 0.5 }, ['priority']],
    ['a priority of the wrong type', { ...valid, priority: '1' }, ['priority']],
    ['isActive of the wrong type', { ...valid, isActive: 'yes' }, ['isActive']],
    ['a slug (derived, never given)', { ...valid, slug: 'chosen' }, ['']],
    ['an organization-level filter', { ...valid, filter: { company: {} } }, ['']],
  ])('rejects %s with one 400 listing every problem', async (_label, payload, expected) => {
    const organizationId = await managedOrganization()
    const response = await call(organizationId, 'POST', '', payload)
    expect(response.statusCode).toBe(400)
    expect(response.json()).toMatchObject(errorBody(400, 'invalid_request'))
    expect(paths(response.json())).toEqual(expected)
    expect((await call(organizationId, 'GET')).json()).toEqual({ icpConfigs: [] })
  })

  it('says what is wrong at each path', async () => {
    const organizationId = await managedOrganization()
    const response = await call(organizationId, 'POST', '', { label: 'Broken', rules: broken })
    const issues = response.json().details.issues as { path: string; message: string }[]
    expect(Object.fromEntries(issues.map((i) => [i.path, i.message]))).toEqual({
      'rules.groups.0.operator': expect.stringContaining('XOR'),
      'rules.groups.0.conditions.1.value': expect.stringContaining('ten'),
      'rules.groups.1.conditions.0.type': expect.stringContaining('no_such_type'),
    })
  })
})

describe('GET /partner/organizations/{id}/icp-configs and /{slug}', () => {
  it('lists {icpConfigs}, lower priority values first, then the oldest', async () => {
    const organizationId = await managedOrganization()
    expect((await call(organizationId, 'GET')).json()).toEqual({ icpConfigs: [] })
    for (const [label, priority] of [
      ['Late', 10],
      ['First', -5],
      ['Middle', 0],
      ['Middle too', 0],
    ] as const) {
      await create(organizationId, { label, rules: germany, priority })
      await sleep(3)
    }
    const { icpConfigs } = (await call(organizationId, 'GET')).json()
    expect(icpConfigs.map((c: { slug: string; priority: number }) => [c.slug, c.priority])).toEqual([
      ['first', -5],
      ['middle', 0],
      ['middle-too', 0],
      ['late', 10],
    ])
    const one = (await call(organizationId, 'GET', '/middle')).json()
    expect(Object.keys(one)).toEqual(['icpConfig'])
    expect(icpConfigs[1]).toMatchObject({ ...one.icpConfig, recalculation: expect.anything() })
    const unknown = await call(organizationId, 'GET', '/unknown')
    expect(unknown.statusCode).toBe(404)
    expect(unknown.json()).toEqual(errorBody(404, 'resource_not_found'))
  })
})

describe('PUT /partner/organizations/{id}/icp-configs/{slug}', () => {
  it('updates label, rules, priority and isActive each alone; a new label keeps the slug', async () => {
    const organizationId = await managedOrganization()
    const created = await create(organizationId, { label: 'Original', rules: germany, priority: 2 })
    await sleep(3)
    const put = async (body: object) => {
      const response = await call(organizationId, 'PUT', '/original', body)
      expect(response.statusCode, response.body).toBe(200)
      const { icpConfig } = response.json()
      const { recalculation, ...fields } = icpConfig
      expect((await call(organizationId, 'GET', '/original')).json().icpConfig).toMatchObject(fields)
      return icpConfig
    }
    let expected = {
      id: created.id,
      slug: 'original',
      label: 'Original',
      rules: germany as object,
      priority: 2,
      isActive: true,
      createdAt: created.createdAt,
    }
    const relabelled = await put({ label: 'Brand new label' })
    expected = { ...expected, label: 'Brand new label' }
    expect(relabelled).toMatchObject(expected)
    expect(relabelled.updatedAt > created.createdAt).toBe(true)
    const news = rulesOf('utm_source', 'in', ['news', 'mail'])
    expected = { ...expected, rules: news }
    expect(await put({ rules: news })).toMatchObject(expected)
    expected = { ...expected, priority: 9 }
    expect(await put({ priority: 9 })).toMatchObject(expected)
    expected = { ...expected, isActive: false }
    expect(await put({ isActive: false })).toMatchObject(expected)
    expected = { ...expected, label: 'All', priority: 1, isActive: true }
    expect(await put({ label: 'All', priority: 1, isActive: true })).toMatchObject(expected)
  })

  it('400 for an empty body, bad rules (at their paths) and fields it does not take; 404 for unknown slugs', async () => {
    const organizationId = await managedOrganization()
    const created = await create(organizationId, { label: 'Kept', rules: germany })
    for (const [payload, expected] of [
      [{}, ['']],
      [{ slug: 'renamed' }, ['']],
      [{ name: 'Organization field' }, ['']],
      [{ label: '' }, ['label']],
      [{ rules: null }, ['rules']],
      [
        {
          rules: {
            groups: [
              {
                operator: 'AND',
                conditions: [
                  { type: 'country', comparator: 'equals', value: 'DE' },
                  { type: 'session_count', comparator: 'between', value: [5] },
                ],
              },
            ],
          },
        },
        ['rules.groups.0.conditions.1.value'],
      ],
      [{ priority: 2_000_000 }, ['priority']],
      [{ isActive: null }, ['isActive']],
    ] as const) {
      const response = await call(organizationId, 'PUT', '/kept', payload)
      expect(response.statusCode, JSON.stringify(payload)).toBe(400)
      expect(response.json()).toMatchObject(errorBody(400, 'invalid_request'))
      expect(paths(response.json())).toEqual(expected)
    }
    const unknown = await call(organizationId, 'PUT', '/unknown', { priority: 1 })
    expect(unknown.statusCode).toBe(404)
    expect(unknown.json()).toEqual(errorBody(404, 'resource_not_found'))
    const { recalculation, ...fields } = created
    expect((await call(organizationId, 'GET', '/kept')).json().icpConfig).toMatchObject(fields)
  })
})

describe('DELETE /partner/organizations/{id}/icp-configs/{slug}', () => {
  it('204 without a body, then 404; the slug is free again', async () => {
    const organizationId = await managedOrganization()
    await create(organizationId, { label: 'Doomed', rules: germany })
    const deleted = await call(organizationId, 'DELETE', '/doomed')
    expect(deleted.statusCode).toBe(204)
    expect(deleted.body).toBe('')
    for (const method of ['GET', 'DELETE'] as const) {
      const response = await call(organizationId, method, '/doomed')
      expect(response.statusCode).toBe(404)
      expect(response.json()).toEqual(errorBody(404, 'resource_not_found'))
    }
    expect((await call(organizationId, 'GET')).json()).toEqual({ icpConfigs: [] })
    expect((await create(organizationId, { label: 'Doomed', rules: germany })).slug).toBe('doomed')
  })
})

describe('tenancy: only organizations the partner manages', () => {
  it("404 for an organization of another partner, or of none; the other partner's key works there", async () => {
    const other = await createPartner(h.repos, { name: 'Other partner' })
    const owner = await createUser(h.repos, { email: `${randomUUID()}@other.test` })
    const { organization: foreign } = await createOrganization(h.repos, {
      name: 'Foreign',
      ownerUserId: owner.id,
      partnerId: other.partner.id,
    })
    const unmanaged = await h.createTenant()
    for (const organizationId of [foreign.id, unmanaged.organizationId]) {
      for (const [method, suffix, payload] of [
        ['GET', '', undefined],
        ['POST', '', { label: 'Intruder', rules: germany }],
        ['GET', '/stats', undefined],
        ['GET', '/intruder', undefined],
      ] as const) {
        const response = await call(organizationId, method, suffix, payload)
        expect(response.statusCode, `${method} ${suffix}`).toBe(404)
        expect(response.json()).toEqual(errorBody(404, 'resource_not_found'))
      }
    }
    // The other partner manages `foreign`, and nothing of the bootstrap partner.
    const theirs = await call(foreign.id, 'POST', '', { label: 'Theirs', rules: germany }, other.plainKey)
    expect(theirs.statusCode).toBe(201)
    const managed = await managedOrganization()
    await create(managed, { label: 'Ours', rules: germany })
    for (const [method, suffix] of [
      ['GET', ''],
      ['GET', '/ours'],
      ['DELETE', '/ours'],
    ] as const) {
      const response = await call(managed, method, suffix, undefined, other.plainKey)
      expect(response.statusCode, `${method} ${suffix}`).toBe(404)
    }
    expect((await call(managed, 'GET', '/ours')).statusCode).toBe(200)
    // And the bootstrap partner cannot read the other partner's config.
    expect((await call(foreign.id, 'GET', '/theirs')).statusCode).toBe(404)
  })
})

describe('end to end: rules, recalculation, stats and the profile', () => {
  let organizationId: string
  const visitors = {} as Record<'de1' | 'de2' | 'fr', string>
  let today: string

  beforeAll(async () => {
    organizationId = await managedOrganization()
    today = new Date(Date.now() - 120_000).toISOString().slice(0, 10)
    // seedVisitor's visitors come from DE with utm_source news.
    visitors.de1 = (await h.seedVisitor(organizationId)).visitorId
    visitors.de2 = (await h.seedVisitor(organizationId)).visitorId
    visitors.fr = await visit(organizationId, 'FR')
    await create(organizationId, { label: 'Germany', rules: germany })
    await create(organizationId, {
      label: 'Newsletter',
      rules: rulesOf('utm_source', 'equals', 'NEWS'),
      priority: 1,
    })
  })

  it('the recalculation after create scores every visitor', async () => {
    expect((await settled(organizationId, 'germany')).recalculation).toMatchObject({
      status: 'succeeded',
      visitors: 3,
      matches: 2,
      error: null,
    })
    expect((await settled(organizationId, 'newsletter')).recalculation).toMatchObject({
      visitors: 3,
      matches: 2,
    })
  })

  it('stats: {totalMatches, byConfig, from, to}, counting a visitor two configs match once', async () => {
    const body = await stats(organizationId)
    expect(body).toEqual({
      stats: {
        totalMatches: 2,
        byConfig: [
          { slug: 'germany', label: 'Germany', matches: 2 },
          { slug: 'newsletter', label: 'Newsletter', matches: 2 },
        ],
        from: expect.stringMatching(isoPattern),
        to: expect.stringMatching(isoPattern),
      },
    })
    // The last 30 days up to now by default.
    expect(Date.parse(body.stats.to) - Date.parse(body.stats.from)).toBe(30 * 86_400_000)
    expect(Math.abs(Date.parse(body.stats.to) - Date.now())).toBeLessThan(60_000)
    // A date alone: the start of the day for `from`, its end for `to`.
    expect((await stats(organizationId, `?from=${today}&to=${today}`)).stats).toEqual({
      ...body.stats,
      from: `${today}T00:00:00.000Z`,
      to: `${today}T23:59:59.999Z`,
    })
    expect((await stats(organizationId, '?from=2020-01-01&to=2020-01-31T12:00:00%2B01:00')).stats).toEqual({
      totalMatches: 0,
      byConfig: [
        { slug: 'germany', label: 'Germany', matches: 0 },
        { slug: 'newsletter', label: 'Newsletter', matches: 0 },
      ],
      from: '2020-01-01T00:00:00.000Z',
      to: '2020-01-31T11:00:00.000Z',
    })
    for (const [query, field] of [
      ['?from=2026-02-31', 'from'],
      ['?to=soon', 'to'],
      ['?from=2026-03-02&to=2026-03-01', 'from'],
    ]) {
      const response = await call(organizationId, 'GET', `/stats${query}`)
      expect(response.statusCode, query).toBe(400)
      expect(paths(response.json())).toEqual([field])
    }
  })

  it("the profile's icpStatuses show the partner slugs", async () => {
    for (const visitorId of [visitors.de1, visitors.de2]) {
      expect(await profile(organizationId, visitorId)).toEqual({
        icp: true,
        icpStatuses: { germany: true, newsletter: true },
      })
    }
    expect(await profile(organizationId, visitors.fr)).toEqual({
      icp: false,
      icpStatuses: { germany: false, newsletter: false },
    })
  })

  it('a new label shows in the stats at once and asks for no recalculation', async () => {
    const before = (await call(organizationId, 'GET', '/newsletter')).json().icpConfig.recalculation
    const response = await call(organizationId, 'PUT', '/newsletter', { label: 'News readers', priority: 2 })
    expect(response.json().icpConfig).toMatchObject({
      slug: 'newsletter',
      label: 'News readers',
      priority: 2,
    })
    expect(response.json().icpConfig.recalculation).toEqual(before)
    expect((await stats(organizationId)).stats.byConfig[1]).toEqual({
      slug: 'newsletter',
      label: 'News readers',
      matches: 2,
    })
  })

  it('new rules re-score every visitor: country DE becomes FR', async () => {
    const response = await call(organizationId, 'PUT', '/germany', {
      rules: rulesOf('country', 'equals', 'FR'),
    })
    expect(response.statusCode).toBe(200)
    expect(response.json().icpConfig.recalculation.status).toBeOneOf(['queued', 'running'])
    expect((await settled(organizationId, 'germany')).recalculation).toMatchObject({
      visitors: 3,
      matches: 1,
    })
    expect((await stats(organizationId)).stats).toMatchObject({
      totalMatches: 3,
      byConfig: [
        { slug: 'germany', label: 'Germany', matches: 1 },
        { slug: 'newsletter', label: 'News readers', matches: 2 },
      ],
    })
    expect(await profile(organizationId, visitors.de1)).toEqual({
      icp: true,
      icpStatuses: { germany: false, newsletter: true },
    })
    expect(await profile(organizationId, visitors.fr)).toEqual({
      icp: true,
      icpStatuses: { germany: true, newsletter: false },
    })
  })

  it('new activity is scored by the partner rules without a recalculation', async () => {
    const before = (await call(organizationId, 'GET', '/germany')).json().icpConfig.recalculation
    const newcomer = await visit(organizationId, 'FR')
    await timeUntil(
      async () => (await profile(organizationId, newcomer)).icpStatuses.germany === true,
      10_000,
    )
    expect(await profile(organizationId, newcomer)).toEqual({
      icp: true,
      icpStatuses: { germany: true, newsletter: false },
    })
    expect((await stats(organizationId)).stats).toMatchObject({
      totalMatches: 4,
      byConfig: [{ matches: 2 }, { matches: 2 }],
    })
    expect((await call(organizationId, 'GET', '/germany')).json().icpConfig.recalculation).toEqual(before)
  })

  it('matches drop to 0 under rules nobody meets', async () => {
    await call(organizationId, 'PUT', '/germany', { rules: rulesOf('country', 'equals', 'JP') })
    expect((await settled(organizationId, 'germany')).recalculation).toMatchObject({
      visitors: 4,
      matches: 0,
    })
    expect((await stats(organizationId)).stats).toMatchObject({
      totalMatches: 2,
      byConfig: [
        { slug: 'germany', matches: 0 },
        { slug: 'newsletter', matches: 2 },
      ],
    })
    expect(await profile(organizationId, visitors.fr)).toEqual({
      icp: false,
      icpStatuses: { germany: false, newsletter: false },
    })
  })

  it('deactivating and deleting take a config out of the stats and the statuses at once', async () => {
    expect((await call(organizationId, 'PUT', '/newsletter', { isActive: false })).statusCode).toBe(200)
    expect((await stats(organizationId)).stats).toMatchObject({
      totalMatches: 0,
      byConfig: [{ slug: 'germany', label: 'Germany', matches: 0 }],
    })
    expect(await profile(organizationId, visitors.de1)).toEqual({
      icp: false,
      icpStatuses: { germany: false },
    })
    expect((await call(organizationId, 'PUT', '/newsletter', { isActive: true })).statusCode).toBe(200)
    expect(await profile(organizationId, visitors.de1)).toEqual({
      icp: true,
      icpStatuses: { germany: false, newsletter: true },
    })
    expect((await call(organizationId, 'DELETE', '/newsletter')).statusCode).toBe(204)
    expect((await stats(organizationId)).stats).toMatchObject({
      totalMatches: 0,
      byConfig: [{ slug: 'germany', matches: 0 }],
    })
    expect(await profile(organizationId, visitors.de1)).toEqual({
      icp: false,
      icpStatuses: { germany: false },
    })
    expect((await call(organizationId, 'DELETE', '/germany')).statusCode).toBe(204)
    expect((await stats(organizationId)).stats).toMatchObject({ totalMatches: 0, byConfig: [] })
    expect(await profile(organizationId, visitors.fr)).toEqual({ icp: false, icpStatuses: {} })
  })
})

describe('partner rules that build on the organization-level results', () => {
  it('follow them: a new filter, turning the config off and on, and deleting it score them again', async () => {
    const organizationId = await managedOrganization()
    const companyId = await h.seedCompany({ name: 'Acme', industry: 'SaaS' })
    const fit = (await h.seedVisitor(organizationId, 1, { country: 'US', utmSource: '', companyId }))
      .visitorId
    const other = (await h.seedVisitor(organizationId)).visitorId
    const organizationSettled = async (slug: string) => {
      await timeUntil(
        async () =>
          (await organizationCall(organizationId, 'GET', `/${slug}`)).json().recalculation?.status ===
          'succeeded',
        20_000,
      )
    }
    const orgPut = async (body: object) => {
      expect((await organizationCall(organizationId, 'PUT', '/fit', body)).statusCode).toBe(200)
    }
    /** The statuses of both visitors once the partner config's run (asked for by now) has succeeded. */
    const statuses = async () => {
      const { recalculation } = await settled(organizationId, 'builds-on-fit')
      return {
        matches: recalculation.matches,
        fit: (await profile(organizationId, fit)).icpStatuses,
        other: (await profile(organizationId, other)).icpStatuses,
      }
    }
    const create201 = await organizationCall(organizationId, 'POST', '', {
      name: 'Fit',
      filter: { company: { industries: ['SaaS'] } },
    })
    expect(create201.statusCode).toBe(201)
    await organizationSettled('fit')
    await create(organizationId, { label: 'Builds on fit', rules: rulesOf('icp_match', 'equals', true) })
    expect(await statuses()).toEqual({
      matches: 1,
      fit: { fit: true, 'builds-on-fit': true },
      other: { fit: false, 'builds-on-fit': false },
    })

    await orgPut({ filter: { company: { industries: ['Retail'] } } })
    await organizationSettled('fit')
    expect(await statuses()).toEqual({
      matches: 0,
      fit: { fit: false, 'builds-on-fit': false },
      other: { fit: false, 'builds-on-fit': false },
    })

    await orgPut({ filter: { company: { industries: ['SaaS'] } } })
    await organizationSettled('fit')
    expect((await statuses()).fit).toEqual({ fit: true, 'builds-on-fit': true })

    await orgPut({ isActive: false })
    expect(await statuses()).toEqual({
      matches: 0,
      fit: { 'builds-on-fit': false },
      other: { 'builds-on-fit': false },
    })

    await orgPut({ isActive: true })
    await organizationSettled('fit')
    expect((await statuses()).fit).toEqual({ fit: true, 'builds-on-fit': true })

    expect((await organizationCall(organizationId, 'DELETE', '/fit')).statusCode).toBe(204)
    expect(await statuses()).toEqual({
      matches: 0,
      fit: { 'builds-on-fit': false },
      other: { 'builds-on-fit': false },
    })
  })
})
