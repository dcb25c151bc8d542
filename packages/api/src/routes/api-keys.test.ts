import { errorBody, type Harness, startHarness } from '@visitor-id/testing/harness'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

let h: Harness
let base: string

beforeAll(async () => {
  h = await startHarness()
  base = `/api/v1/organization/${h.boot.organizationId}/api-keys`
})

afterAll(async () => {
  await h?.stop()
})

const create = (payload: unknown, key?: string) =>
  h.request({ method: 'POST', url: base, payload: payload as object, key })

const issuePaths = (body: { details?: { issues: { path: string }[] } }) =>
  body.details?.issues.map((issue) => issue.path) ?? []

describe('GET /organization/{id}/api-keys', () => {
  it('lists the keys without their hash, with the 12-character prefix', async () => {
    const response = await h.request({ method: 'GET', url: base })
    expect(response.statusCode).toBe(200)
    const { apiKeys } = response.json()
    const bootstrapKey = apiKeys.find((k: { keyPrefix: string }) => h.boot.apiKey.startsWith(k.keyPrefix))
    expect(bootstrapKey).toMatchObject({
      organizationId: h.boot.organizationId,
      createdByUserId: h.boot.userId,
      keyPrefix: h.boot.apiKey.slice(0, 12),
      scopes: ['admin', 'agency:read', 'agency:write'],
      status: 'active',
      expiresAt: null,
    })
    expect(Object.keys(bootstrapKey).sort()).toEqual(
      [
        'createdAt',
        'createdByUserId',
        'expiresAt',
        'id',
        'keyPrefix',
        'lastUsedAt',
        'name',
        'organizationId',
        'scopes',
        'status',
      ].sort(),
    )
    expect(response.body).not.toContain(h.boot.apiKey)
    expect(response.body).not.toMatch(/[0-9a-f]{64}/)
  })

  it('records lastUsedAt without a write per request', async () => {
    const { id, plainKey } = await h.createKey(h.boot.organizationId, ['read'])
    for (let i = 0; i < 5; i++)
      expect((await h.request({ method: 'GET', url: '/api/v1/ping', key: plainKey })).statusCode).toBe(200)
    let lastUsedAt: string | null = null
    for (let attempt = 0; attempt < 50 && !lastUsedAt; attempt++) {
      const { apiKeys } = (await h.request({ method: 'GET', url: base })).json()
      lastUsedAt = apiKeys.find((k: { id: string }) => k.id === id).lastUsedAt
      if (!lastUsedAt) await new Promise((resolve) => setTimeout(resolve, 20))
    }
    expect(Date.parse(lastUsedAt!)).toBeGreaterThan(Date.now() - 60_000)
    const writes = await h.store.query<{ n: number }>(
      'SELECT count() AS n FROM api_key_usage WHERE key_id = {id:String}',
      { id },
    )
    expect(writes[0]!.n).toBe(1)
  })

  it('needs the read scope', async () => {
    const { plainKey } = await h.createKey(h.boot.organizationId, ['write'])
    const response = await h.request({ method: 'GET', url: base, key: plainKey })
    expect(response.statusCode).toBe(403)
    expect(response.json()).toEqual(errorBody(403, 'forbidden'))
  })
})

describe('POST /organization/{id}/api-keys', () => {
  it('creates a key with the default scopes; the plain key works and appears only once', async () => {
    const response = await create({ name: 'ci' })
    expect(response.statusCode).toBe(200)
    const { apiKey, plainKey } = response.json()
    expect(plainKey).toMatch(/^bsk_live_[0-9a-f]{32}$/)
    expect(apiKey).toMatchObject({
      name: 'ci',
      scopes: ['read', 'write'],
      status: 'active',
      expiresAt: null,
      lastUsedAt: null,
    })
    expect(apiKey.keyPrefix).toBe(plainKey.slice(0, 12))
    expect((await h.request({ method: 'GET', url: '/api/v1/ping', key: plainKey })).statusCode).toBe(200)
    const list = await h.request({ method: 'GET', url: base })
    expect(list.body).not.toContain(plainKey)
    expect(list.json().apiKeys.map((k: { id: string }) => k.id)).toContain(apiKey.id)
  })

  it('keeps the given scopes and expiry; an expired key gets 401', async () => {
    const expiresAt = new Date(Date.now() + 1500).toISOString()
    const response = await create({ name: 'short', scopes: ['read', 'read'], expiresAt })
    expect(response.statusCode).toBe(200)
    const { apiKey, plainKey } = response.json()
    expect(apiKey.scopes).toEqual(['read'])
    expect(apiKey.expiresAt).toBe(expiresAt)
    expect((await h.request({ method: 'GET', url: '/api/v1/ping', key: plainKey })).statusCode).toBe(200)
    await new Promise((resolve) => setTimeout(resolve, Date.parse(expiresAt) - Date.now() + 50))
    const expired = await h.request({ method: 'GET', url: '/api/v1/ping', key: plainKey })
    expect(expired.statusCode).toBe(401)
    expect(expired.json()).toEqual(errorBody(401, 'unauthorized'))
  })

  it('accepts an RFC 3339 offset and null expiry', async () => {
    const inAYear = new Date(Date.now() + 365 * 24 * 3600_000)
    const offset = `${inAYear.toISOString().slice(0, 19)}+02:00`
    const withOffset = await create({ name: 'offset', expiresAt: offset })
    expect(withOffset.statusCode).toBe(200)
    expect(withOffset.json().apiKey.expiresAt).toBe(new Date(offset).toISOString())
    const never = await create({ name: 'never', expiresAt: null })
    expect(never.json().apiKey.expiresAt).toBeNull()
  })

  it.each([
    ['missing name', {}, ['name']],
    ['empty name', { name: '  ' }, ['name']],
    ['name of the wrong type', { name: 42 }, ['name']],
    ['oversized name', { name: 'x'.repeat(101) }, ['name']],
    ['unknown scope', { name: 'k', scopes: ['root'] }, ['scopes.0']],
    ['no scopes', { name: 'k', scopes: [] }, ['scopes']],
    ['scopes not an array', { name: 'k', scopes: 'read' }, ['scopes']],
    ['expiresAt not RFC 3339', { name: 'k', expiresAt: 'tomorrow' }, ['expiresAt']],
    ['expiresAt without a zone', { name: 'k', expiresAt: '2030-01-01T00:00:00' }, ['expiresAt']],
    ['expiresAt in the past', { name: 'k', expiresAt: '2020-01-01T00:00:00Z' }, ['expiresAt']],
    ['expiresAt beyond 10 years', { name: 'k', expiresAt: '2999-01-01T00:00:00Z' }, ['expiresAt']],
    ['an unknown field', { name: 'k', keyHash: 'x' }, ['']],
    ['a body that is not an object', ['name'], ['']],
  ])('rejects %s with 400 invalid_request and the failing field', async (_label, payload, paths) => {
    const response = await create(payload)
    expect(response.statusCode).toBe(400)
    const body = response.json()
    expect(body).toMatchObject(errorBody(400, 'invalid_request'))
    expect(issuePaths(body)).toEqual(paths)
  })

  it('rejects a missing body, bad JSON, other media types and oversized bodies', async () => {
    const missing = await h.request({ method: 'POST', url: base })
    expect(missing.statusCode).toBe(400)
    expect(missing.json()).toMatchObject(errorBody(400, 'invalid_request'))
    const badJson = await h.request({
      method: 'POST',
      url: base,
      headers: { 'content-type': 'application/json' },
      payload: '{"name":',
    })
    expect(badJson.json()).toEqual(errorBody(400, 'invalid_json'))
    const poisoned = await h.request({
      method: 'POST',
      url: base,
      headers: { 'content-type': 'application/json' },
      payload: '{"name":"k","__proto__":{"admin":true}}',
    })
    expect(poisoned.statusCode).toBe(400)
    expect(poisoned.json().code).toMatch(/^invalid_(json|request)$/)
    const text = await h.request({
      method: 'POST',
      url: base,
      headers: { 'content-type': 'text/plain' },
      payload: '{"name":"k"}',
    })
    expect(text.json()).toEqual(errorBody(415, 'unsupported_media_type'))
    const big = await create({ name: 'x'.repeat(70 * 1024) })
    expect(big.statusCode).toBe(413)
    expect(big.json()).toEqual(errorBody(413, 'payload_too_large'))
    expect(big.headers['x-ratelimit-limit']).toBe('1000')
  })

  it('needs admin; a key cannot grant a scope it lacks', async () => {
    const { plainKey: writer } = await h.createKey(h.boot.organizationId, ['read', 'write'])
    expect((await create({ name: 'k' }, writer)).statusCode).toBe(403)
    const { plainKey: admin } = await h.createKey(h.boot.organizationId, ['admin'])
    const escalation = await create({ name: 'k', scopes: ['agency:write'] }, admin)
    expect(escalation.statusCode).toBe(403)
    expect(escalation.json()).toEqual(errorBody(403, 'forbidden'))
    expect((await create({ name: 'k', scopes: ['admin', 'read'] }, admin)).statusCode).toBe(200)
  })

  it('gives agency scopes only to agency organizations', async () => {
    const sub = await h.request({
      method: 'POST',
      url: '/api/v1/organization',
      payload: { organizationName: 'Sub' },
    })
    const subId = sub.json().id
    const response = await h.request({
      method: 'POST',
      url: `/api/v1/organization/${subId}/api-keys`,
      payload: { name: 'k', scopes: ['agency:read'] },
    })
    expect(response.statusCode).toBe(400)
    expect(issuePaths(response.json())).toEqual(['scopes'])
    // The agency's admin key manages the sub-organization's keys.
    const created = await h.request({
      method: 'POST',
      url: `/api/v1/organization/${subId}/api-keys`,
      payload: { name: 'k', scopes: ['admin'] },
    })
    expect(created.statusCode).toBe(200)
    expect(created.json().apiKey.organizationId).toBe(subId)
  })
})

describe('DELETE /organization/{id}/api-keys/{keyId}', () => {
  it('revokes: success, 401 at once, listed as revoked; revoking again succeeds', async () => {
    const { id, plainKey } = await h.createKey(h.boot.organizationId, ['read'])
    expect((await h.request({ method: 'GET', url: '/api/v1/ping', key: plainKey })).statusCode).toBe(200)
    const response = await h.request({ method: 'DELETE', url: `${base}/${id}` })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ success: true })
    const after = await h.request({ method: 'GET', url: '/api/v1/ping', key: plainKey })
    expect(after.statusCode).toBe(401)
    expect(after.json()).toEqual(errorBody(401, 'unauthorized'))
    const { apiKeys } = (await h.request({ method: 'GET', url: base })).json()
    expect(apiKeys.find((k: { id: string }) => k.id === id).status).toBe('revoked')
    expect((await h.request({ method: 'DELETE', url: `${base}/${id}` })).json()).toEqual({ success: true })
  })

  it('accepts an empty JSON body on DELETE', async () => {
    const { id } = await h.createKey(h.boot.organizationId, ['read'])
    const response = await h.request({
      method: 'DELETE',
      url: `${base}/${id}`,
      headers: { 'content-type': 'application/json' },
    })
    expect(response.statusCode).toBe(200)
  })

  it("404 for unknown keys and for another organization's key", async () => {
    const unknown = await h.request({ method: 'DELETE', url: `${base}/key_nope` })
    expect(unknown.statusCode).toBe(404)
    expect(unknown.json()).toEqual(errorBody(404, 'resource_not_found'))
    const long = await h.request({ method: 'DELETE', url: `${base}/${'k'.repeat(300)}` })
    expect(long.statusCode).toBe(414)
    expect(long.json()).toEqual(errorBody(414, 'uri_too_long'))
    const badUrl = await h.request({ method: 'DELETE', url: `${base}/%E0%A4%A` })
    expect(badUrl.json()).toEqual(errorBody(400, 'invalid_request'))
    const tenant = await h.createTenant()
    const { id: otherKey, plainKey } = await h.createKey(tenant.organizationId, ['read'])
    expect((await h.request({ method: 'DELETE', url: `${base}/${otherKey}` })).statusCode).toBe(404)
    // And the other tenant's key still works.
    expect((await h.request({ method: 'GET', url: '/api/v1/ping', key: plainKey })).statusCode).toBe(200)
  })
})
