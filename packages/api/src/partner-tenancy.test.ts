// Tenancy `partner-organization-param`, through registerRoutes: no route of the table uses it yet,
// so a probe route is registered the way the plugin registers the table, on the harness's store.
import { createApiKey } from '@visitor-id/core/api-keys'
import { newId } from '@visitor-id/core/ids'
import { createOrganization, createPartner } from '@visitor-id/core/organizations'
import { errorBody, type Harness, startHarness } from '@visitor-id/testing/harness'
import { type ProbeApp, startProbeApp } from '@visitor-id/testing/probe-app'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { registerRoutes } from './register-routes.js'
import { defineRoute, type Route } from './route-definition.js'
import { addressed } from './routes/context.js'
import { organizationIdParam } from './schemas/common.js'

const probe = (overrides: Partial<Route> = {}): Route => ({
  ...defineRoute({
    operationId: 'probePartnerOrganization',
    method: 'GET',
    path: '/partner/probe/{organizationId}',
    auth: 'partner',
    scope: 'read',
    tenancy: 'partner-organization-param',
    tag: 'Test',
    summary: 'The organization the tenancy resolved',
    params: z.object({ organizationId: organizationIdParam }),
    response: { status: 200, description: 'Resolved', schema: z.object({ organizationId: z.string() }) },
    errors: [],
    example: (ids) => ({ params: { organizationId: ids.organizationId } }),
    async handler({ organization }) {
      return { organizationId: addressed(organization).id }
    },
  }),
  ...overrides,
})

let h: Harness
let probes: ProbeApp
const ids = {} as Record<'subOfAgency' | 'subWithoutPartner' | 'otherPartnerOrg' | 'loose', string>
let subOrganizationKey: string

beforeAll(async () => {
  h = await startHarness()
  probes = await startProbeApp(h, [probe()], registerRoutes)

  // The bootstrap organization is an agency of the bootstrap partner: its sub-organizations, with
  // the partner set (as POST /organization sets it) or not (as the CLI may make them).
  const agency = h.boot.organizationId
  const org = async (input: { partnerId?: string | null; agencyId?: string }) =>
    (await createOrganization(h.repos, { name: 'o', ownerUserId: h.boot.userId, ...input })).organization.id
  ids.subOfAgency = await org({ partnerId: h.boot.partnerId, agencyId: agency })
  ids.subWithoutPartner = await org({ partnerId: null, agencyId: agency })
  const other = await createPartner(h.repos, { name: 'Other partner' })
  ids.otherPartnerOrg = await org({ partnerId: other.partner.id })
  ids.loose = await org({ partnerId: null })
  subOrganizationKey = (
    await createApiKey(h.repos, {
      organizationId: ids.subOfAgency,
      createdByUserId: h.boot.userId,
      name: 'sub admin',
      scopes: ['admin'],
    })
  ).plainKey
})

afterAll(async () => {
  await probes?.close()
  await h?.stop()
})

const get = (organizationId: string, headers: Record<string, string> = {}) =>
  probes.app.inject({
    method: 'GET',
    url: `/api/v1/partner/probe/${encodeURIComponent(organizationId)}`,
    headers: { 'x-partner-api-key': h.boot.partnerKey, ...headers },
  })

describe('tenancy partner-organization-param', () => {
  it("resolves the partner's own organization and its agency's sub-organizations", async () => {
    for (const id of [h.boot.organizationId, ids.subOfAgency, ids.subWithoutPartner]) {
      const response = await get(id)
      expect(response.statusCode, id).toBe(200)
      expect(response.json()).toEqual({ organizationId: id })
    }
    expect((await get(ids.subOfAgency.toUpperCase())).json()).toEqual({ organizationId: ids.subOfAgency })
  })

  it("is 404 for another partner's organization, an unmanaged one and unknown ids", async () => {
    for (const id of [ids.otherPartnerOrg, ids.loose, newId()]) {
      const response = await get(id)
      expect(response.statusCode, id).toBe(404)
      expect(response.json()).toEqual(errorBody(404, 'resource_not_found'))
    }
  })

  it('is 400 naming organizationId for malformed ids, never 404', async () => {
    for (const id of ['nope', '-'.repeat(36), 'x'.repeat(64)]) {
      const response = await get(id)
      expect(response.statusCode, id).toBe(400)
      expect(response.json()).toMatchObject({
        ...errorBody(400, 'invalid_request'),
        details: { issues: [expect.objectContaining({ path: 'organizationId' })] },
      })
    }
  })

  it("is 404 under another partner's key, even for the organizations this partner manages", async () => {
    const other = await createPartner(h.repos, { name: 'Third partner' })
    for (const id of [h.boot.organizationId, ids.subOfAgency]) {
      const response = await get(id, { 'x-partner-api-key': other.plainKey })
      expect(response.statusCode).toBe(404)
      expect(response.json()).toEqual(errorBody(404, 'resource_not_found'))
    }
  })

  it('is 401 for organization keys, in either header, even the addressed organization’s own', async () => {
    for (const key of [h.boot.apiKey, subOrganizationKey]) {
      const attempts: Record<string, string>[] = [
        { 'x-partner-api-key': key },
        { 'x-api-key': key, 'x-partner-api-key': '' },
      ]
      for (const headers of attempts) {
        const response = await get(ids.subOfAgency, headers)
        expect(response.statusCode).toBe(401)
        expect(response.json()).toEqual(errorBody(401, 'unauthorized'))
      }
    }
  })

  it('refuses to register a route whose tenancy does not fit its key kind or path', async () => {
    const rejected: Route[] = [
      probe({ auth: 'organization' }),
      probe({ path: '/partner/probe' }),
      probe({ tenancy: 'organization-param' }),
      probe({ tenancy: 'caller' }),
    ]
    for (const route of rejected) await expect(probes.register([route])).rejects.toThrow(/tenancy/)
  })
})
