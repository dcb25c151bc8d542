// Tenancy `organization-query`, through registerRoutes with probe routes (the table's routes of this
// tenancy are covered by the tenant/scope matrix as they are added).
import { newId } from '@visitor-id/core/ids'
import { createOrganization } from '@visitor-id/core/organizations'
import { errorBody, type Harness, startHarness } from '@visitor-id/testing/harness'
import { type ProbeApp, startProbeApp } from '@visitor-id/testing/probe-app'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { buildOpenApiDocument, routeErrorCodes } from './openapi.js'
import { registerRoutes } from './register-routes.js'
import { defineRoute, type Route } from './route-definition.js'
import { addressed } from './routes/context.js'
import { organizationIdParam } from './schemas/common.js'

const probe = (overrides: Partial<Route> = {}): Route => ({
  ...defineRoute({
    operationId: 'probeOrganizationQuery',
    method: 'GET',
    path: '/probe/organization',
    auth: 'organization',
    scope: 'read',
    tenancy: 'organization-query',
    tag: 'Test',
    summary: 'The organization the tenancy resolved',
    query: z.object({
      organizationId: organizationIdParam,
      limit: z.coerce.number().int().min(1).max(500).default(25),
    }),
    response: {
      status: 200,
      description: 'Resolved',
      schema: z.object({ organizationId: z.string(), limit: z.number() }),
    },
    errors: [],
    example: (ids) => ({ query: { organizationId: ids.organizationId } }),
    async handler({ organization, query }) {
      return { organizationId: addressed(organization).id, limit: query.limit }
    },
  }),
  ...overrides,
})

const writeProbe = probe({ operationId: 'probeOrganizationQueryWrite', method: 'POST', scope: 'write' })

let h: Harness
let probes: ProbeApp
const ids = {} as Record<'sub' | 'otherTenant', string>
const keys = {} as Record<'otherTenant' | 'noAgency' | 'agencyRead' | 'agencyWrite', string>

beforeAll(async () => {
  h = await startHarness()
  probes = await startProbeApp(h, [probe(), writeProbe], registerRoutes)
  // A sub-organization of the bootstrap agency, which agency scopes reach.
  ids.sub = (
    await createOrganization(h.repos, {
      name: 'sub',
      ownerUserId: h.boot.userId,
      partnerId: h.boot.partnerId,
      agencyId: h.boot.organizationId,
    })
  ).organization.id
  const tenant = await h.createTenant()
  ids.otherTenant = tenant.organizationId
  keys.otherTenant = tenant.key
  const key = async (scopes: Parameters<Harness['createKey']>[1]) =>
    (await h.createKey(h.boot.organizationId, scopes)).plainKey
  keys.noAgency = await key(['read', 'write'])
  keys.agencyRead = await key(['read', 'write', 'agency:read'])
  keys.agencyWrite = await key(['read', 'write', 'agency:write'])
})

afterAll(async () => {
  await probes?.close()
  await h?.stop()
})

const send = (query: string, options: { key?: string; method?: 'GET' | 'POST'; partner?: boolean } = {}) =>
  probes.app.inject({
    method: options.method ?? 'GET',
    url: `/api/v1/probe/organization${query}`,
    headers: { [options.partner ? 'x-partner-api-key' : 'x-api-key']: options.key ?? h.boot.apiKey },
  })
const of = (organizationId: string) => `?organizationId=${encodeURIComponent(organizationId)}`

describe('tenancy organization-query', () => {
  it("resolves the key's own organization and, with agency scopes, its sub-organizations", async () => {
    for (const id of [h.boot.organizationId, ids.sub]) {
      const response = await send(of(id))
      expect(response.statusCode, id).toBe(200)
      expect(response.json()).toEqual({ organizationId: id, limit: 25 })
    }
    expect((await send(of(ids.sub.toUpperCase()))).json()).toEqual({ organizationId: ids.sub, limit: 25 })
  })

  it("is 404 for another tenant's organization and unknown ids", async () => {
    for (const query of [of(ids.otherTenant), of(newId())]) {
      const response = await send(query)
      expect(response.statusCode, query).toBe(404)
      expect(response.json()).toEqual(errorBody(404, 'resource_not_found'))
    }
  })

  it('is 400 naming organizationId for missing, malformed and repeated ids, never 404', async () => {
    const own = h.boot.organizationId
    for (const query of [
      of('nope'),
      of('-'.repeat(36)),
      of('x'.repeat(64)),
      of(`${own}x`),
      '',
      '?organizationId=',
      `?organizationid=${own}`,
      `?organizationId=${own}&organizationId=${own}`,
      `?organizationId[]=${own}`,
    ]) {
      const response = await send(query)
      expect(response.statusCode, query).toBe(400)
      expect(response.json()).toMatchObject({
        ...errorBody(400, 'invalid_request'),
        details: { issues: [expect.objectContaining({ path: 'organizationId' })] },
      })
    }
  })

  it('validates the query before resolving the organization: 400 first, then 404', async () => {
    const foreign = await send(`${of(ids.otherTenant)}&limit=0`)
    expect(foreign.statusCode).toBe(400)
    expect(foreign.json()).toMatchObject({
      code: 'invalid_request',
      details: { issues: [{ path: 'limit' }] },
    })
    const own = await send(`${of(h.boot.organizationId)}&limit=0`)
    expect(own.statusCode).toBe(400)
    expect(own.json()).toMatchObject({ code: 'invalid_request', details: { issues: [{ path: 'limit' }] } })
    expect((await send(`${of(ids.otherTenant)}&limit=5`)).statusCode).toBe(404)
  })

  it("is 404 under another tenant's key, even for the organizations the bootstrap key addresses", async () => {
    for (const id of [h.boot.organizationId, ids.sub]) {
      const response = await send(of(id), { key: keys.otherTenant })
      expect(response.statusCode, id).toBe(404)
      expect(response.json()).toEqual(errorBody(404, 'resource_not_found'))
    }
    expect((await send(of(ids.otherTenant), { key: keys.otherTenant })).statusCode).toBe(200)
  })

  it("takes read or write access from the route's scope, as organization-param does", async () => {
    const status = async (key: string, method: 'GET' | 'POST') =>
      (await send(of(ids.sub), { key, method })).statusCode
    expect(await status(keys.noAgency, 'GET')).toBe(404)
    expect(await status(keys.agencyRead, 'GET')).toBe(200)
    expect(await status(keys.agencyRead, 'POST')).toBe(404)
    expect(await status(keys.agencyWrite, 'POST')).toBe(200)
    // The key's own organization needs no agency scope.
    expect((await send(of(h.boot.organizationId), { key: keys.noAgency, method: 'POST' })).statusCode).toBe(
      200,
    )
  })

  it('is 401 for partner keys, in either header', async () => {
    for (const partner of [false, true]) {
      const response = await send(of(h.boot.organizationId), { key: h.boot.partnerKey, partner })
      expect(response.statusCode).toBe(401)
      expect(response.json()).toEqual(errorBody(401, 'unauthorized'))
    }
  })

  it('refuses a route whose key kind, path or query does not fit the tenancy', async () => {
    const rejected: Route[] = [
      probe({ auth: 'partner' }),
      // The id in the path as well as the query: the two could disagree.
      probe({ path: '/probe/{organizationId}', params: z.object({ organizationId: organizationIdParam }) }),
      probe({ query: undefined }),
      probe({ query: z.object({ limit: z.coerce.number() }) }),
      probe({ query: z.object({ organizationId: organizationIdParam.optional() }) }),
      // Any string would let a malformed id reach the lookup and come back 404, not 400.
      probe({ query: z.object({ organizationId: z.string().min(1).max(64) }) }),
    ]
    for (const route of rejected) await expect(probes.register([route])).rejects.toThrow(/tenancy/)
    await expect(probes.register([probe()])).resolves.toBeUndefined()
  })

  it('documents the 404 and the required organizationId query parameter', () => {
    expect(routeErrorCodes(probe())).toContain('resource_not_found')
    const operation = buildOpenApiDocument([probe()]).paths['/api/v1/probe/organization']!.get!
    expect(operation.responses['404']?.description).toContain('resource_not_found')
    expect(operation.parameters).toContainEqual(
      expect.objectContaining({ name: 'organizationId', in: 'query', required: true }),
    )
  })
})
