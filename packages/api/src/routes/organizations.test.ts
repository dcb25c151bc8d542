import { randomUUID } from 'node:crypto'
import { createApiKey } from '@visitor-id/core/api-keys'
import { adjustCredits, chargeIdentification, grantCredits } from '@visitor-id/core/credits'
import { createOrganization, createPartner, createUser } from '@visitor-id/core/organizations'
import type { Store } from '@visitor-id/core/store'
import { errorBody, type Harness, startHarness } from '@visitor-id/testing/harness'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

let h: Harness

beforeAll(async () => {
  h = await startHarness()
})

afterAll(async () => {
  await h?.stop()
})

const org = (id: string, suffix = '') => `/api/v1/organization/${id}${suffix}`
const paths = (body: { details?: { issues: { path: string }[] } }) =>
  body.details?.issues.map((i) => i.path) ?? []

async function expectInvalid(response: Awaited<ReturnType<Harness['request']>>, field: string) {
  expect(response.statusCode).toBe(400)
  const body = response.json()
  expect(body).toMatchObject(errorBody(400, 'invalid_request'))
  expect(paths(body)).toContain(field)
}

describe('POST /organization', () => {
  it('under an agency key: a sub-organization the key may address, domain lowercased', async () => {
    const response = await h.request({
      method: 'POST',
      url: '/api/v1/organization',
      payload: { organizationName: '  Acme  ', domain: 'WWW.Acme.Example' },
    })
    expect(response.statusCode).toBe(200)
    const created = response.json()
    expect(created).toMatchObject({
      name: 'Acme',
      domain: 'www.acme.example',
      productType: 'standard',
      isAgency: false,
      agencyId: h.boot.organizationId,
      maxOverages: null,
      autoPhoneEnrichmentEnabled: false,
    })
    expect((await h.request({ method: 'GET', url: org(created.id) })).json()).toEqual(created)
    const list = (await h.request({ method: 'GET', url: '/api/v1/organization/list' })).json()
    expect(list[0].id).toBe(h.boot.organizationId)
    expect(list.map((o: { id: string }) => o.id)).toContain(created.id)
    // The new organization has its pixel config with the domain verified.
    const pixel = (await h.request({ method: 'GET', url: `/api/v1/visitor-tracking/${created.id}` })).json()
    expect(pixel.pixelConfig.verifiedDomains).toEqual(['www.acme.example'])
  })

  it('without agency:write: a separate organization the key cannot address', async () => {
    const { plainKey } = await h.createKey(h.boot.organizationId, ['read', 'write'])
    const response = await h.request({
      method: 'POST',
      url: '/api/v1/organization',
      payload: { organizationName: 'Standalone' },
      key: plainKey,
    })
    expect(response.statusCode).toBe(200)
    const created = response.json()
    expect(created.agencyId).toBeNull()
    expect((await h.request({ method: 'GET', url: org(created.id), key: plainKey })).statusCode).toBe(404)
    const list = (await h.request({ method: 'GET', url: '/api/v1/organization/list', key: plainKey })).json()
    expect(list.map((o: { id: string }) => o.id)).toEqual([h.boot.organizationId])
    // The partner manages it.
    const partner = await h.request({
      method: 'GET',
      url: '/api/v1/partner/organizations?limit=500',
      key: null,
      partnerKey: h.boot.partnerKey,
    })
    expect(partner.json().data.map((o: { id: string }) => o.id)).toContain(created.id)
  })

  it.each([
    ['missing name', {}, 'organizationName'],
    ['empty name', { organizationName: ' ' }, 'organizationName'],
    ['name of the wrong type', { organizationName: ['x'] }, 'organizationName'],
    ['oversized name', { organizationName: 'x'.repeat(201) }, 'organizationName'],
    ['a URL as domain', { organizationName: 'A', domain: 'https://acme.example' }, 'domain'],
    ['a path in the domain', { organizationName: 'A', domain: 'acme.example/path' }, 'domain'],
    ['a port in the domain', { organizationName: 'A', domain: 'acme.example:8080' }, 'domain'],
    ['a single-label domain', { organizationName: 'A', domain: 'localhost' }, 'domain'],
    ['an empty label', { organizationName: 'A', domain: 'acme..example' }, 'domain'],
    ['an oversized domain', { organizationName: 'A', domain: `${'a'.repeat(250)}.com` }, 'domain'],
    ['a domain of the wrong type', { organizationName: 'A', domain: 7 }, 'domain'],
    ['an unknown field', { organizationName: 'A', plan: 'gold' }, ''],
  ])('rejects %s', async (_label, payload, field) => {
    await expectInvalid(await h.request({ method: 'POST', url: '/api/v1/organization', payload }), field)
  })

  it('needs write', async () => {
    const { plainKey } = await h.createKey(h.boot.organizationId, ['read'])
    const response = await h.request({
      method: 'POST',
      url: '/api/v1/organization',
      payload: { organizationName: 'A' },
      key: plainKey,
    })
    expect(response.json()).toEqual(errorBody(403, 'forbidden'))
  })
})

/** The owner of an organization made by the harness (createTenant makes one user per tenant). */
async function ownerOf(organizationId: string): Promise<string> {
  const [owner] = await h.repos.memberships.find({ organization_id: organizationId, role: 'owner' })
  return owner!.user_id
}

const idsOf = (response: Awaited<ReturnType<Harness['request']>>) =>
  response.json().map((o: { id: string }) => o.id)

describe("an organization created through the API is usable by its creator's admin keys", () => {
  it('the admin key that created it lists, reads, updates it and creates its first key', async () => {
    const tenant = await h.createTenant()
    const created = await h.request({
      method: 'POST',
      url: '/api/v1/organization',
      payload: { organizationName: 'Second brand' },
      key: tenant.key,
    })
    expect(created.statusCode).toBe(200)
    const second = created.json()
    expect(second.agencyId).toBeNull()
    expect(await ownerOf(second.id)).toBe(await ownerOf(tenant.organizationId))

    const list = await h.request({ method: 'GET', url: '/api/v1/organization/list', key: tenant.key })
    expect(idsOf(list)).toEqual([tenant.organizationId, second.id])
    const read = await h.request({ method: 'GET', url: org(second.id), key: tenant.key })
    expect(read.statusCode).toBe(200)
    expect(read.json()).toEqual(second)
    const renamed = await h.request({
      method: 'PUT',
      url: org(second.id),
      key: tenant.key,
      payload: { name: 'Second brand, renamed', domain: 'second.example' },
    })
    expect(renamed.statusCode).toBe(200)
    expect(renamed.json()).toMatchObject({
      id: second.id,
      name: 'Second brand, renamed',
      domain: 'second.example',
    })

    const firstKey = await h.request({
      method: 'POST',
      url: org(second.id, '/api-keys'),
      key: tenant.key,
      payload: { name: 'first key', scopes: ['read', 'write'] },
    })
    expect(firstKey.statusCode).toBe(200)
    // The key belongs to the new organization: it addresses it, and only it.
    const ownKey = firstKey.json().plainKey as string
    const listed = await h.request({ method: 'GET', url: org(second.id, '/api-keys'), key: ownKey })
    expect(listed.statusCode).toBe(200)
    expect(listed.json().apiKeys.map((k: { id: string }) => k.id)).toEqual([firstKey.json().apiKey.id])
    expect(idsOf(await h.request({ method: 'GET', url: '/api/v1/organization/list', key: ownKey }))).toEqual([
      second.id,
    ])
    expect(
      (await h.request({ method: 'GET', url: org(tenant.organizationId), key: ownKey })).statusCode,
    ).toBe(404)
    // The owner's key revokes it too.
    const revoked = await h.request({
      method: 'DELETE',
      url: org(second.id, `/api-keys/${firstKey.json().apiKey.id}`),
      key: tenant.key,
    })
    expect(revoked.json()).toEqual({ success: true })
    expect((await h.request({ method: 'GET', url: '/api/v1/ping', key: ownKey })).statusCode).toBe(401)
  })

  it("only its user's admin keys address it: not the user's read/write keys, nor other users' keys", async () => {
    const tenant = await h.createTenant()
    const second = (
      await h.request({
        method: 'POST',
        url: '/api/v1/organization',
        payload: { organizationName: 'Not for everyone' },
        key: tenant.key,
      })
    ).json()
    const { plainKey: readWrite } = await createApiKey(h.repos, {
      organizationId: tenant.organizationId,
      createdByUserId: await ownerOf(tenant.organizationId),
      name: 'read/write',
      scopes: ['read', 'write'],
    })
    expect((await h.request({ method: 'GET', url: org(second.id), key: tenant.key })).statusCode).toBe(200)
    const other = await h.createTenant()
    for (const key of [readWrite, other.key, h.boot.apiKey]) {
      expect((await h.request({ method: 'GET', url: org(second.id), key })).json()).toEqual(
        errorBody(404, 'resource_not_found'),
      )
      const put = await h.request({ method: 'PUT', url: org(second.id), key, payload: { name: 'Taken' } })
      expect(put.statusCode).toBe(404)
      expect(idsOf(await h.request({ method: 'GET', url: '/api/v1/organization/list', key }))).not.toContain(
        second.id,
      )
    }
  })

  it("a member's admin key reads and writes, manages no keys, and loses access when removed", async () => {
    const member = await h.createTenant()
    const memberUserId = await ownerOf(member.organizationId)
    const team = await h.createTenant()
    const at = new Date().toISOString()
    await h.repos.memberships.save({
      organization_id: team.organizationId,
      user_id: memberUserId,
      role: 'member',
      created_at: at,
      updated_at: at,
    })
    const teamKey = await h.createKey(team.organizationId, ['read'])

    const list = await h.request({ method: 'GET', url: '/api/v1/organization/list', key: member.key })
    expect(idsOf(list)).toEqual([member.organizationId, team.organizationId])
    expect(
      (await h.request({ method: 'GET', url: org(team.organizationId), key: member.key })).statusCode,
    ).toBe(200)
    const put = await h.request({
      method: 'PUT',
      url: org(team.organizationId),
      key: member.key,
      payload: { name: 'Team' },
    })
    expect(put.statusCode).toBe(200)
    // Keys it could mint there would outlive the membership: 403, not 404 (it addresses the organization).
    const mint = await h.request({
      method: 'POST',
      url: org(team.organizationId, '/api-keys'),
      key: member.key,
      payload: { name: 'kept after removal', scopes: ['read'] },
    })
    expect(mint.json()).toEqual(errorBody(403, 'forbidden'))
    const revoke = await h.request({
      method: 'DELETE',
      url: org(team.organizationId, `/api-keys/${teamKey.id}`),
      key: member.key,
    })
    expect(revoke.json()).toEqual(errorBody(403, 'forbidden'))
    expect((await h.request({ method: 'GET', url: '/api/v1/ping', key: teamKey.plainKey })).statusCode).toBe(
      200,
    )

    const removed = await h.request({
      method: 'DELETE',
      url: org(team.organizationId, `/member/${memberUserId}`),
      key: team.key,
    })
    expect(removed.statusCode).toBe(200)
    expect(
      (await h.request({ method: 'GET', url: org(team.organizationId), key: member.key })).json(),
    ).toEqual(errorBody(404, 'resource_not_found'))
    expect(
      idsOf(await h.request({ method: 'GET', url: '/api/v1/organization/list', key: member.key })),
    ).toEqual([member.organizationId])
  })
})

describe('GET /organization/list and /organization/{id}', () => {
  it("a sub-organization's own key sees only it; an agency key without agency:read only its own", async () => {
    // Owned by another user than the agency keys': a key with `admin` also addresses the
    // organizations its own user owns, which is not what this test is about.
    const owner = await createUser(h.repos, { email: `${randomUUID()}@sub.test` })
    const { organization: sub } = await createOrganization(h.repos, {
      name: 'S',
      ownerUserId: owner.id,
      agencyId: h.boot.organizationId,
    })
    const { plainKey: subKey } = await h.createKey(sub.id, ['read'])
    const subList = (await h.request({ method: 'GET', url: '/api/v1/organization/list', key: subKey })).json()
    expect(subList.map((o: { id: string }) => o.id)).toEqual([sub.id])
    expect(
      (await h.request({ method: 'GET', url: org(h.boot.organizationId), key: subKey })).statusCode,
    ).toBe(404)
    // A key made without a user acts for nobody elsewhere: only the agency scope is at play here.
    const { plainKey: plainAdmin } = await createApiKey(h.repos, {
      organizationId: h.boot.organizationId,
      createdByUserId: null,
      name: 'admin without agency scopes',
      scopes: ['admin'],
    })
    const own = (await h.request({ method: 'GET', url: '/api/v1/organization/list', key: plainAdmin })).json()
    expect(own.map((o: { id: string }) => o.id)).toEqual([h.boot.organizationId])
    expect((await h.request({ method: 'GET', url: org(sub.id), key: plainAdmin })).statusCode).toBe(404)
  })

  it('404 for unknown and foreign ids, 400 for malformed ones', async () => {
    const tenant = await h.createTenant()
    for (const id of [randomUUID(), tenant.organizationId, h.boot.partnerId]) {
      const response = await h.request({ method: 'GET', url: org(id) })
      expect(response.statusCode).toBe(404)
      expect(response.json()).toEqual(errorBody(404, 'resource_not_found'))
    }
    const malformed = await h.request({ method: 'GET', url: org('not-a-uuid') })
    expect(malformed.json()).toMatchObject(errorBody(400, 'invalid_request'))
  })
})

describe('PUT /organization/{id}', () => {
  it('updates the name and the domain; null clears the domain', async () => {
    const tenant = await h.createTenant()
    const url = org(tenant.organizationId)
    const renamed = await h.request({
      method: 'PUT',
      url,
      key: tenant.key,
      payload: { name: 'Renamed', domain: 'New.Example' },
    })
    expect(renamed.statusCode).toBe(200)
    expect(renamed.json()).toMatchObject({
      id: tenant.organizationId,
      name: 'Renamed',
      domain: 'new.example',
    })
    const cleared = await h.request({ method: 'PUT', url, key: tenant.key, payload: { domain: null } })
    expect(cleared.json()).toMatchObject({ name: 'Renamed', domain: null })
    expect((await h.request({ method: 'GET', url, key: tenant.key })).json().domain).toBeNull()
  })

  it.each([
    ['an empty body', {}, ''],
    ['an empty name', { name: '' }, 'name'],
    ['a name of the wrong type', { name: 1 }, 'name'],
    ['an oversized name', { name: 'n'.repeat(201) }, 'name'],
    ['an invalid domain', { domain: 'not a domain' }, 'domain'],
    ['an unknown field', { productType: 'plus_employee' }, ''],
  ])('rejects %s', async (_label, payload, field) => {
    await expectInvalid(await h.request({ method: 'PUT', url: org(h.boot.organizationId), payload }), field)
  })
})

describe('DELETE /organization/{id}/member/{userId}', () => {
  it('removes a member and returns the remaining members', async () => {
    const member = await h.addMember(h.boot.organizationId)
    const other = await h.addMember(h.boot.organizationId)
    const response = await h.request({
      method: 'DELETE',
      url: org(h.boot.organizationId, `/member/${member}`),
    })
    expect(response.statusCode).toBe(200)
    const body = response.json()
    expect(body.organizationId).toBe(h.boot.organizationId)
    expect(body.members[0]).toMatchObject({ userId: h.boot.userId, role: 'owner', email: 'owner@localhost' })
    const ids = body.members.map((m: { userId: string }) => m.userId)
    expect(ids).toContain(other)
    expect(ids).not.toContain(member)
    const again = await h.request({ method: 'DELETE', url: org(h.boot.organizationId, `/member/${member}`) })
    expect(again.json()).toEqual(errorBody(404, 'resource_not_found'))
  })

  it('refuses to remove the owner (409) and 404s non-members', async () => {
    const owner = await h.request({
      method: 'DELETE',
      url: org(h.boot.organizationId, `/member/${h.boot.userId}`),
    })
    expect(owner.statusCode).toBe(409)
    expect(owner.json()).toEqual(errorBody(409, 'owner_not_removable'))
    for (const id of [randomUUID(), 'nobody']) {
      const response = await h.request({ method: 'DELETE', url: org(h.boot.organizationId, `/member/${id}`) })
      expect(response.statusCode).toBe(404)
    }
  })
})

describe('PATCH /organization/{id}/max-overages', () => {
  it('sets a non-negative amount', async () => {
    const url = org(h.boot.organizationId, '/max-overages')
    for (const maxOverages of [250, 0, 12.5]) {
      const response = await h.request({ method: 'PATCH', url, payload: { maxOverages } })
      expect(response.statusCode).toBe(200)
      expect(response.json()).toEqual({ organizationId: h.boot.organizationId, maxOverages })
    }
    expect((await h.request({ method: 'GET', url: org(h.boot.organizationId) })).json().maxOverages).toBe(
      12.5,
    )
  })

  it.each([
    ['a negative number', { maxOverages: -1 }],
    ['a string', { maxOverages: '10' }],
    ['null', { maxOverages: null }],
    ['nothing', {}],
    ['a huge number', { maxOverages: 1e12 }],
  ])('rejects %s', async (_label, payload) => {
    await expectInvalid(
      await h.request({ method: 'PATCH', url: org(h.boot.organizationId, '/max-overages'), payload }),
      'maxOverages',
    )
  })
})

describe('PATCH /organization/{id}/auto-phone-enrichment', () => {
  it('switches it on a plus_employee organization and returns the organization', async () => {
    const url = org(h.boot.organizationId, '/auto-phone-enrichment')
    const on = await h.request({ method: 'PATCH', url, payload: { enabled: true } })
    expect(on.statusCode).toBe(200)
    expect(on.json()).toMatchObject({
      id: h.boot.organizationId,
      productType: 'plus_employee',
      autoPhoneEnrichmentEnabled: true,
    })
    const off = await h.request({ method: 'PATCH', url, payload: { enabled: false } })
    expect(off.json().autoPhoneEnrichmentEnabled).toBe(false)
  })

  it('is not_plus_employee (403) for other organizations', async () => {
    const tenant = await h.createTenant()
    const response = await h.request({
      method: 'PATCH',
      url: org(tenant.organizationId, '/auto-phone-enrichment'),
      payload: { enabled: true },
      key: tenant.key,
    })
    expect(response.statusCode).toBe(403)
    expect(response.json()).toEqual(errorBody(403, 'not_plus_employee'))
  })

  it.each([
    ['a string', { enabled: 'yes' }],
    ['a number', { enabled: 1 }],
    ['nothing', {}],
  ])('rejects %s', async (_label, payload) => {
    await expectInvalid(
      await h.request({
        method: 'PATCH',
        url: org(h.boot.organizationId, '/auto-phone-enrichment'),
        payload,
      }),
      'enabled',
    )
  })
})

describe('GET /partner/organizations', () => {
  const list = (query: string, partnerKey = h.boot.partnerKey) =>
    h.request({ method: 'GET', url: `/api/v1/partner/organizations${query}`, key: null, partnerKey })

  it('pages through the partner organizations, oldest first', async () => {
    for (let i = 0; i < 3; i++) {
      await h.request({
        method: 'POST',
        url: '/api/v1/organization',
        payload: { organizationName: `Page ${i}` },
      })
    }
    const all = (await list('')).json()
    expect(all).toMatchObject({ page: 1, limit: 25 })
    expect(all.total).toBeGreaterThanOrEqual(4)
    expect(all.totalPages).toBe(Math.ceil(all.total / 25))
    expect(all.data[0].id).toBe(h.boot.organizationId)
    const pages = await Promise.all([1, 2, 3].map((page) => list(`?page=${page}&limit=2`)))
    const ids = pages.flatMap((page) => page.json().data.map((o: { id: string }) => o.id))
    expect(ids).toEqual(all.data.slice(0, 6).map((o: { id: string }) => o.id))
    expect(pages[0]!.json()).toMatchObject({
      page: 1,
      limit: 2,
      total: all.total,
      totalPages: Math.ceil(all.total / 2),
    })
    const beyond = (await list('?page=1000')).json()
    expect(beyond.data).toEqual([])
  })

  it("lists its agencies' sub-organizations, also those without a partner of their own", async () => {
    // As the CLI makes them: agency set, partner_id not.
    const { organization } = await createOrganization(h.repos, {
      name: 'CLI sub-organization',
      ownerUserId: h.boot.userId,
      agencyId: h.boot.organizationId,
    })
    const ids = (await list('?limit=500')).json().data.map((o: { id: string }) => o.id)
    expect(ids).toContain(organization.id)
    const { plainKey } = await createPartner(h.repos, { name: 'Another partner' })
    expect((await list('?limit=500', plainKey)).json().data).toEqual([])
  })

  it.each([
    ['limit=0', 'limit'],
    ['limit=501', 'limit'],
    ['limit=ten', 'limit'],
    ['page=0', 'page'],
    ['page=1.5', 'page'],
    ['page=-1', 'page'],
  ])('rejects %s', async (query, field) => {
    const response = await list(`?${query}`)
    expect(response.statusCode).toBe(400)
    expect(paths(response.json())).toEqual([field])
  })
})

describe('identificationCredits', () => {
  /** How many statements read the credit ledger while `work` runs. */
  async function ledgerReads(work: () => Promise<unknown>): Promise<number> {
    const query = h.store.query
    let reads = 0
    h.store.query = ((sql: string, params?: Record<string, unknown>) => {
      if (sql.includes('credit_ledger')) reads++
      return query.call(h.store, sql, params)
    }) as Store['query']
    try {
      await work()
    } finally {
      h.store.query = query
    }
    return reads
  }

  const credits = async (id: string, key?: string) =>
    (await h.request({ method: 'GET', url: org(id), ...(key ? { key } : {}) })).json().identificationCredits

  it('the bootstrap organization opens with INITIAL_CREDITS (default 1,000)', async () => {
    expect(await credits(h.boot.organizationId)).toBe(1000)
    const tenant = await h.createTenant()
    expect(await credits(tenant.organizationId, tenant.key)).toBe(1000)
  })

  it('a new organization starts at INITIAL_CREDITS; every change of the ledger shows at once', async () => {
    const created = await h.request({
      method: 'POST',
      url: '/api/v1/organization',
      payload: { organizationName: 'Credited' },
    })
    const { id, identificationCredits } = created.json()
    expect(identificationCredits).toBe(1000)
    await grantCredits(h.store, { organizationId: id, amount: 50, reason: 'top-up' })
    expect(await credits(id)).toBe(1050)
    await chargeIdentification(h.store, { organizationId: id, visitorId: randomUUID() })
    await adjustCredits(h.store, { organizationId: id, amount: -1100 })
    expect(await credits(id)).toBe(-51)
    const renamed = await h.request({ method: 'PUT', url: org(id), payload: { name: 'Credited Inc.' } })
    expect(renamed.json()).toMatchObject({ name: 'Credited Inc.', identificationCredits: -51 })
  })

  it('one ledger read per request, for one organization as for a list', async () => {
    const ids: string[] = []
    for (const amount of [7, 70]) {
      const { id } = (
        await h.request({ method: 'POST', url: '/api/v1/organization', payload: { organizationName: 'L' } })
      ).json()
      await grantCredits(h.store, { organizationId: id, amount })
      ids.push(id)
    }
    const expected = { [ids[0]!]: 1007, [ids[1]!]: 1070 }
    const balances = (list: { id: string; identificationCredits: number }[]) =>
      Object.fromEntries(list.filter((o) => ids.includes(o.id)).map((o) => [o.id, o.identificationCredits]))

    let body: { id: string; identificationCredits: number }[] = []
    expect(
      await ledgerReads(async () => {
        body = (await h.request({ method: 'GET', url: '/api/v1/organization/list' })).json()
      }),
    ).toBe(1)
    expect(balances(body)).toEqual(expected)
    expect(body[0]).toMatchObject({ id: h.boot.organizationId, identificationCredits: 1000 })

    expect(
      await ledgerReads(async () => {
        body = (
          await h.request({
            method: 'GET',
            url: '/api/v1/partner/organizations?limit=500',
            key: null,
            partnerKey: h.boot.partnerKey,
          })
        ).json().data
      }),
    ).toBe(1)
    expect(balances(body)).toEqual(expected)

    expect(
      await ledgerReads(async () => {
        body = [(await h.request({ method: 'GET', url: org(ids[1]!) })).json()]
      }),
    ).toBe(1)
    expect(body[0]!.identificationCredits).toBe(1070)
  })

  it('the auto-phone-enrichment reply (an organization) carries it; the max-overages reply stays as it is', async () => {
    const on = await h.request({
      method: 'PATCH',
      url: org(h.boot.organizationId, '/auto-phone-enrichment'),
      payload: { enabled: true },
    })
    expect(on.json().identificationCredits).toBe(1000)
    await h.request({
      method: 'PATCH',
      url: org(h.boot.organizationId, '/auto-phone-enrichment'),
      payload: { enabled: false },
    })
    const overages = await h.request({
      method: 'PATCH',
      url: org(h.boot.organizationId, '/max-overages'),
      payload: { maxOverages: 3 },
    })
    expect(overages.json()).toEqual({ organizationId: h.boot.organizationId, maxOverages: 3 })
  })
})
