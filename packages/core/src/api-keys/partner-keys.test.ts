import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { addressOrganization, addressPartnerOrganization } from '../access/access.js'
import type { Principal } from '../access/auth.js'
import { organizationsTable } from '../accounts/rows.js'
import { createMemoryCoordination } from '../coordination/memory.js'
import type { Coordination } from '../coordination/ports.js'
import { newId, sha256Hex } from '../ids.js'
import { createOrganization, createPartner, createUser } from '../organizations/tenancy.js'
import { createRepositories, type Repositories } from '../repositories.js'
import { createStore, type Store } from '../store/client.js'
import { migrate } from '../store/migrate.js'
import { createReadModel, type ReadModel } from '../store/read-model.js'
import { listPartnerKeys, revokeApiKey, revokePartnerKey } from './api-keys.js'
import { createApiKey, createPartnerKey } from './issue.js'
import { createKeyAuthenticator } from './key-authenticator.js'

// Partner keys (create, list, revoke) and the organizations a partner key may address. One embedded
// engine per process: every test shares one data directory, read through a read model as the server does.
const tmp = tempDir('vid-partner-keys-')
let store: Store
let coordination: Coordination
let readModel: ReadModel
let repos: Repositories
/** Organization reads that reached the store. */
let organizationLookups = 0

beforeAll(async () => {
  store = createStore({ database: 'default', dataDir: tmp.dir })
  await migrate(store)
  coordination = createMemoryCoordination()
  readModel = createReadModel({ pubsub: coordination.pubsub })
  await readModel.start()
  const plain = createRepositories(store)
  const get = plain.organizations.get
  plain.organizations.get = async (...args) => {
    organizationLookups += 1
    return get(...args)
  }
  repos = {
    ...createRepositories(store, readModel),
    organizations: readModel.cached(organizationsTable, plain.organizations),
  }
})

afterAll(async () => {
  await readModel?.close()
  await coordination?.close()
  await store?.close()
  tmp.remove()
})

const invalidRequest = (path: string) => ({
  code: 'invalid_request',
  statusCode: 400,
  details: { issues: [expect.objectContaining({ path })] },
})
const notFound = { code: 'resource_not_found', statusCode: 404 }

describe('partner keys', () => {
  it('createPartner makes one admin key; createPartnerKey more, with scopes and expiry', async () => {
    const { partner, plainKey } = await createPartner(repos, { name: 'P' })
    expect(plainKey).toMatch(/^bsk_partner_[0-9a-f]{32}$/)
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString()
    const created = await createPartnerKey(repos, {
      partnerId: partner.id.toUpperCase(),
      name: ' reader ',
      scopes: ['read', 'read'],
      expiresAt,
    })
    expect(created.plainKey).toMatch(/^bsk_partner_[0-9a-f]{32}$/)
    expect(created.apiKey).toMatchObject({
      kind: 'partner',
      partner_id: partner.id,
      organization_id: null,
      name: 'reader',
      scopes: ['read'],
      status: 'active',
      expires_at: expiresAt,
      key_prefix: created.plainKey.slice(0, 12),
      key_hash: sha256Hex(created.plainKey),
    })
    const listed = await listPartnerKeys(repos, partner.id)
    expect(listed.map((k) => [k.name, k.scopes])).toEqual([
      ['Partner key', ['admin']],
      ['reader', ['read']],
    ])
    const keys = createKeyAuthenticator({ repos })
    expect(await keys.authenticate('partner', created.plainKey)).toEqual({
      kind: 'partner',
      keyId: created.apiKey.id,
      partnerId: partner.id,
      scopes: ['read'],
    })
  })

  it('refuses agency and unknown scopes, no scope, an empty name and a bad expiry', async () => {
    const { partner } = await createPartner(repos, { name: 'P' })
    const make = (input: { scopes?: string[]; name?: string; expiresAt?: string }) =>
      createPartnerKey(repos, { partnerId: partner.id, name: 'k', scopes: ['read'], ...input })
    await expect(make({ scopes: ['read', 'agency:read'] })).rejects.toMatchObject({
      ...invalidRequest('scopes'),
      message: expect.stringMatching(/agency:read .*partner key takes read, write or admin/),
    })
    await expect(make({ scopes: ['agency:write'] })).rejects.toMatchObject(invalidRequest('scopes'))
    await expect(make({ scopes: ['owner'] })).rejects.toMatchObject(invalidRequest('scopes'))
    await expect(make({ scopes: [] })).rejects.toMatchObject(invalidRequest('scopes'))
    await expect(make({ name: '  ' })).rejects.toMatchObject(invalidRequest('name'))
    await expect(make({ expiresAt: 'tomorrow' })).rejects.toMatchObject(invalidRequest('expiresAt'))
    await expect(make({ expiresAt: '2020-01-01T00:00:00Z' })).rejects.toMatchObject(
      invalidRequest('expiresAt'),
    )
    await expect(make({ expiresAt: '2999-01-01T00:00:00Z' })).rejects.toMatchObject(
      invalidRequest('expiresAt'),
    )
    expect(await listPartnerKeys(repos, partner.id)).toHaveLength(1)
    for (const partnerId of [newId(), 'not-a-uuid', '-'.repeat(36)]) {
      await expect(createPartnerKey(repos, { partnerId, name: 'k', scopes: ['read'] })).rejects.toMatchObject(
        notFound,
      )
      await expect(listPartnerKeys(repos, partnerId)).rejects.toMatchObject(notFound)
    }
  })

  it("revokes a partner's key (401 at once), again if asked; never another owner's key", async () => {
    const { partner } = await createPartner(repos, { name: 'P' })
    const { partner: other } = await createPartner(repos, { name: 'Other' })
    const { apiKey, plainKey } = await createPartnerKey(repos, {
      partnerId: partner.id,
      name: 'k',
      scopes: ['write'],
    })
    const keys = createKeyAuthenticator({ repos })
    await keys.authenticate('partner', plainKey)
    await expect(revokePartnerKey(repos, other.id, apiKey.id)).rejects.toMatchObject(notFound)
    await keys.authenticate('partner', plainKey)

    const revoked = await revokePartnerKey(repos, partner.id, apiKey.id)
    expect(revoked).toMatchObject({ id: apiKey.id, status: 'revoked' })
    await expect(keys.authenticate('partner', plainKey)).rejects.toMatchObject({ code: 'unauthorized' })
    expect((await revokePartnerKey(repos, partner.id, apiKey.id)).status).toBe('revoked')
    expect((await listPartnerKeys(repos, partner.id)).find((k) => k.id === apiKey.id)?.status).toBe('revoked')

    // One helper for both kinds: neither revokes the other kind's keys.
    const organizationId = newId()
    const orgKey = await createApiKey(repos, {
      organizationId,
      createdByUserId: null,
      name: 'o',
      scopes: ['read'],
    })
    await expect(revokePartnerKey(repos, partner.id, orgKey.apiKey.id)).rejects.toMatchObject(notFound)
    await expect(revokeApiKey(repos, organizationId, apiKey.id)).rejects.toMatchObject(notFound)
    await expect(revokePartnerKey(repos, partner.id, 'key_unknown')).rejects.toMatchObject(notFound)
    await expect(revokePartnerKey(repos, partner.id, 'k'.repeat(65))).rejects.toMatchObject(notFound)
  })

  it('an expired partner key is 401', async () => {
    const { partner } = await createPartner(repos, { name: 'P' })
    const { plainKey } = await createPartnerKey(
      repos,
      { partnerId: partner.id, name: 'old', scopes: ['admin'], expiresAt: '2020-01-01T00:00:00Z' },
      Date.parse('2019-06-01T00:00:00Z'),
    )
    await expect(createKeyAuthenticator({ repos }).authenticate('partner', plainKey)).rejects.toMatchObject({
      code: 'unauthorized',
    })
  })
})

describe('addressPartnerOrganization', () => {
  let partnerId: string
  const ids = {} as Record<
    'own' | 'agency' | 'subWithPartner' | 'subWithoutPartner' | 'foreign' | 'foreignSub' | 'loose',
    string
  >

  beforeAll(async () => {
    const user = await createUser(repos, { email: 'owner@partner.test' })
    const org = async (input: { partnerId?: string | null; agencyId?: string; isAgency?: boolean }) =>
      (await createOrganization(repos, { name: 'o', ownerUserId: user.id, ...input })).organization.id
    partnerId = (await createPartner(repos, { name: 'Mine' })).partner.id
    const otherPartnerId = (await createPartner(repos, { name: 'Theirs' })).partner.id
    ids.own = await org({ partnerId })
    ids.agency = await org({ partnerId, isAgency: true })
    // As POST /organization makes them (the agency's partner) and as the CLI may (none).
    ids.subWithPartner = await org({ partnerId, agencyId: ids.agency })
    ids.subWithoutPartner = await org({ partnerId: null, agencyId: ids.agency })
    const foreignAgency = await org({ partnerId: otherPartnerId, isAgency: true })
    ids.foreign = await org({ partnerId: otherPartnerId })
    ids.foreignSub = await org({ partnerId: null, agencyId: foreignAgency })
    ids.loose = await org({ partnerId: null })
  })

  const principal = (): Principal => ({ kind: 'partner', keyId: 'key_x', partnerId, scopes: ['read'] })

  it("addresses the partner's organizations and its agencies' sub-organizations", async () => {
    for (const id of [ids.own, ids.agency, ids.subWithPartner, ids.subWithoutPartner]) {
      expect((await addressPartnerOrganization(repos, principal(), id)).id).toBe(id)
      expect((await addressPartnerOrganization(repos, principal(), id.toUpperCase())).id).toBe(id)
    }
  })

  it('is 404 for any other organization, unknown and malformed ids, and organization keys', async () => {
    const refused = [
      ids.foreign,
      ids.foreignSub,
      ids.loose,
      newId(),
      '',
      'not-an-id',
      '-'.repeat(36),
      `${ids.own}x`,
      ` ${ids.own}`,
    ]
    for (const id of refused) {
      await expect(addressPartnerOrganization(repos, principal(), id), id).rejects.toMatchObject(notFound)
    }
    const organizationKey: Principal = {
      kind: 'organization',
      keyId: 'key_y',
      organizationId: ids.own,
      userId: null,
      scopes: ['admin'],
    }
    await expect(addressPartnerOrganization(repos, organizationKey, ids.own)).rejects.toMatchObject(notFound)
    // And the other way round: a partner key addresses nothing through addressOrganization.
    await expect(addressOrganization(repos, principal(), ids.own, 'read')).rejects.toMatchObject(notFound)
  })

  it('reads organizations from memory once they are known', async () => {
    const warm = async () => {
      await addressPartnerOrganization(repos, principal(), ids.subWithoutPartner)
      await expect(addressPartnerOrganization(repos, principal(), ids.foreignSub)).rejects.toMatchObject(
        notFound,
      )
    }
    await warm()
    const before = organizationLookups
    for (let i = 0; i < 5; i++) await warm()
    expect(organizationLookups - before).toBe(0)
  })
})
