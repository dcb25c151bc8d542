// The "Lists" routes over HTTP: save, the two GET /lists/{...} meanings, refresh, delete and the
// audience export with every error code, bad input and other tenants. Counts themselves are checked
// against plain SQL in core (lists/lists.test.ts); the tenant/scope matrix covers 401/403.
import { createHash, randomUUID } from 'node:crypto'
import { errorBody, type Harness, startHarness } from '@visitor-id/testing/harness'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

let h: Harness
let tenant: { organizationId: string; key: string }
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

// Engineers of one company with the raw emails the export must hash: mixed case, spaces around,
// one address shared by two contacts, a personal-only contact and one with no email at all.
const raw = [
  { id: 'e1', email: 'Ada@Acme.test', seniority: 'senior' },
  { id: 'e2', email: '  ada@acme.TEST ', seniority: 'senior' },
  { id: 'e3', email: 'grace@acme.test', personal_email: 'grace@home.test', seniority: 'vp' },
  { id: 'e4', personal_email: ' Linus@Home.test', seniority: 'vp' },
  { id: 'e5', seniority: 'vp' },
]
const plaintext = ['ada@acme.test', 'grace@acme.test', 'grace@home.test', 'linus@home.test']
const expectedHashes = [sha256('ada@acme.test'), sha256('grace@acme.test'), sha256('linus@home.test')].sort()

beforeAll(async () => {
  h = await startHarness()
  tenant = await h.createTenant()
  const acme = await h.seedCompany({ industry: 'Robotics', domain: 'acme.test' })
  const at = new Date().toISOString()
  await h.store.insert(
    'contacts',
    [
      ...raw.map((row) => ({ ...row, department: 'engineering', company_id: acme })),
      { id: 'nomail', department: 'legal', seniority: 'vp', company_id: acme },
    ].map((row) => ({ ...row, created_at: at, updated_at: at, version: 1 })),
  )
})

afterAll(async () => {
  await h?.stop()
})

const engineers = { company: { industries: ['robotics'] }, contact: { departments: ['Engineering'] } }

function save(body: Record<string, unknown>, key?: string) {
  return h.request({
    method: 'POST',
    url: '/api/v1/lists/save',
    payload: { organizationId: h.boot.organizationId, contacts_found: 5, filter: engineers, ...body },
    ...(key ? { key } : {}),
  })
}

const get = (id: string, key?: string) =>
  h.request({ method: 'GET', url: `/api/v1/lists/${id}`, ...(key ? { key } : {}) })
const exportUrl = (id: string, organizationId = h.boot.organizationId) =>
  `/api/v1/lists/${id}/chat-ads-export?organizationId=${organizationId}`

describe('lists', () => {
  let listId: string

  it('save creates a list with its members computed; the same name updates it', async () => {
    const created = await save({ listName: 'Robotics engineers', autoUpdateStatus: 'enabled' })
    expect(created.statusCode, created.body).toBe(200)
    const list = created.json()
    expect(list).toEqual({
      id: expect.stringMatching(/^list_[0-9a-f]{24}$/),
      name: 'Robotics engineers',
      organizationId: h.boot.organizationId,
      usedFilter: engineers,
      contactsNum: 5,
      matchedContactsNum: 0,
      autoUpdateStatus: 'enabled',
      lastSyncedTime: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
      connectedIntegration: null,
      lastAudienceSync: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    })
    listId = list.id
    const updated = (
      await save({ listName: 'Robotics engineers', filter: { contact: { seniorities: ['vp'] } } })
    ).json()
    expect(updated).toMatchObject({ id: listId, contactsNum: 4, autoUpdateStatus: 'enabled' })
    const back = (await save({ listName: 'Robotics engineers', filter: engineers })).json()
    expect(back).toMatchObject({ id: listId, contactsNum: 5, usedFilter: engineers })
  })

  it('GET /lists/{organizationId} is the array of lists; GET /lists/{listId} one list', async () => {
    const other = (await save({ listName: 'Everyone', filter: {}, autoUpdateStatus: 'disabled' })).json()
    const lists = (await get(h.boot.organizationId)).json()
    expect(lists.map((l: { id: string }) => l.id)).toEqual(expect.arrayContaining([listId, other.id]))
    const one = await get(listId)
    expect(one.statusCode).toBe(200)
    expect(one.json()).toMatchObject({ id: listId, usedFilter: engineers, contactsNum: 5 })
    expect((await get(tenant.organizationId)).json()).toEqual(errorBody(404, 'resource_not_found'))
    // Other tenants see neither the lists nor the list.
    expect((await get(tenant.organizationId, tenant.key)).json()).toEqual([])
    expect((await get(listId, tenant.key)).json()).toEqual(errorBody(404, 'list_not_found'))
    expect((await get('list_000000000000000000000000')).json()).toEqual(errorBody(404, 'list_not_found'))
    expect((await get('not-a-uuid')).json()).toEqual(errorBody(404, 'resource_not_found'))
  })

  it('refresh recomputes from the stored filter; a foreign organizationId is 404', async () => {
    const before = (await get(listId)).json()
    const at = new Date().toISOString()
    await h.store.insert(
      'contacts',
      [{ id: 'e6', email: 'new@acme.test', department: 'Engineering' }].map((row) => ({
        ...row,
        company_domain: 'acme.test',
        created_at: at,
        updated_at: at,
        version: 1,
      })),
    )
    const refreshed = await h.request({ method: 'POST', url: `/api/v1/lists/refresh/${listId}` })
    expect(refreshed.statusCode, refreshed.body).toBe(200)
    expect(refreshed.json().contactsNum).toBe(6)
    expect(Date.parse(refreshed.json().lastSyncedTime)).toBeGreaterThanOrEqual(
      Date.parse(before.lastSyncedTime),
    )
    const withBody = await h.request({
      method: 'POST',
      url: `/api/v1/lists/refresh/${listId}`,
      payload: { organizationId: h.boot.organizationId },
    })
    expect(withBody.statusCode).toBe(200)
    const foreign = await h.request({
      method: 'POST',
      url: `/api/v1/lists/refresh/${listId}`,
      payload: { organizationId: tenant.organizationId },
    })
    expect(foreign.json()).toEqual(errorBody(404, 'list_not_found'))
    const asTenant = await h.request({
      method: 'POST',
      url: `/api/v1/lists/refresh/${listId}`,
      key: tenant.key,
    })
    expect(asTenant.json()).toEqual(errorBody(404, 'list_not_found'))
    await h.store.insert('contacts', [
      { id: 'e6', created_at: at, updated_at: at, version: 2, is_deleted: 1 },
    ])
    expect(
      (await h.request({ method: 'POST', url: `/api/v1/lists/refresh/${listId}` })).json().contactsNum,
    ).toBe(5)
  })

  it('the export is the hashes of the trimmed, lowercased enriched emails, once each', async () => {
    const response = await h.request({ method: 'GET', url: exportUrl(listId) })
    expect(response.statusCode, response.body).toBe(200)
    expect(response.headers['content-type']).toBe('text/csv; charset=utf-8')
    expect(response.headers['content-disposition']).toMatch(/^attachment; filename="[A-Za-z0-9._-]+\.csv"$/)
    expect(response.headers['x-unique-email-count']).toBe(String(expectedHashes.length))
    expect(response.body).toBe(`email_sha256\r\n${expectedHashes.map((hash) => `${hash}\r\n`).join('')}`)
    for (const email of plaintext) expect(response.body.toLowerCase()).not.toContain(email)
    const bom = await h.request({ method: 'GET', url: `${exportUrl(listId)}&bom=1` })
    expect(bom.body.startsWith('\uFEFFemail_sha256\r\n')).toBe(true)
  })

  it('export errors: organization_not_found, list_not_found, no_enriched_emails', async () => {
    const code = async (url: string, key?: string) => {
      const response = await h.request({ method: 'GET', url, ...(key ? { key } : {}) })
      return [response.statusCode, response.json().code]
    }
    expect(await code(exportUrl(listId, randomUUID()))).toEqual([404, 'organization_not_found'])
    expect(await code(exportUrl(listId, tenant.organizationId))).toEqual([404, 'organization_not_found'])
    // A malformed id is the client's mistake, told as such (docs/decisions.md, "Order of checks").
    expect(await code(exportUrl(listId, 'nope'))).toEqual([400, 'invalid_request'])
    expect(await code(exportUrl('list_000000000000000000000000'))).toEqual([404, 'list_not_found'])
    expect(await code(exportUrl(listId, tenant.organizationId), tenant.key)).toEqual([404, 'list_not_found'])
    // A list of the tenant, asked with the tenant's organization by the tenant: fine; by us: 404.
    const theirs = (
      await save({ organizationId: tenant.organizationId, listName: 'Theirs' }, tenant.key)
    ).json()
    expect(await code(exportUrl(theirs.id, tenant.organizationId))).toEqual([404, 'list_not_found'])
    const noMail = (
      await save({ listName: 'No email', filter: { contact: { departments: ['legal'] } } })
    ).json()
    expect(noMail.contactsNum).toBe(1)
    expect(await code(exportUrl(noMail.id))).toEqual([409, 'no_enriched_emails'])
    const missing = await h.request({ method: 'GET', url: `/api/v1/lists/${listId}/chat-ads-export` })
    // The query parameter is required: its absence is a bad request, not an unknown organization.
    expect(missing.json()).toMatchObject(errorBody(400, 'invalid_request'))
  })

  it('bad input: 400 naming the field; never a 500', async () => {
    for (const [payload, path] of [
      [{ listName: '' }, 'listName'],
      [{ listName: 'x'.repeat(201) }, 'listName'],
      [{ listName: 'ok', contacts_found: '5' }, 'contacts_found'],
      [{ listName: 'ok', contacts_found: -1 }, 'contacts_found'],
      [{ listName: 'ok', contacts_found: 1.5 }, 'contacts_found'],
      [{ listName: 'ok', filter: { company: { industry: ['x'] } } }, 'company'],
      [{ listName: 'ok', filter: 'engineers' }, 'filter'],
      [{ listName: 'ok', autoUpdateStatus: 'syncing' }, 'autoUpdateStatus'],
      [{ listName: 'ok', extra: true }, ''],
    ] as const) {
      const response = await save(payload)
      expect(response.statusCode, JSON.stringify(payload)).toBe(400)
      expect(response.json()).toMatchObject(errorBody(400, 'invalid_request'))
      expect(JSON.stringify(response.json().details)).toContain(path)
    }
    const noFilter = await h.request({
      method: 'POST',
      url: '/api/v1/lists/save',
      payload: { organizationId: h.boot.organizationId, listName: 'x', contacts_found: 1 },
    })
    expect(noFilter.statusCode).toBe(400)
    // The request's shape before its organization: missing or malformed is 400 naming the field,
    // a well-formed id of another tenant is 404.
    for (const organizationId of [undefined, 42, 'nope', [h.boot.organizationId]]) {
      const response = await save({ organizationId, listName: 'x' })
      expect(response.json(), String(organizationId)).toMatchObject(errorBody(400, 'invalid_request'))
      expect(response.json().details.issues.map((i: { path: string }) => i.path)).toContain('organizationId')
    }
    const foreign = await save({ organizationId: tenant.organizationId, listName: 'x' })
    expect(foreign.json()).toEqual(errorBody(404, 'resource_not_found'))
    const badRefresh = await h.request({
      method: 'POST',
      url: `/api/v1/lists/refresh/${listId}`,
      payload: { organizationId: 7 },
    })
    expect(badRefresh.statusCode).toBe(400)
    const long = await get(`list_${'a'.repeat(200)}`)
    expect(long.statusCode).toBeLessThan(500)
    expect(long.statusCode).toBeGreaterThanOrEqual(400)
  })

  it('delete: 200 with no body, then the list is gone everywhere', async () => {
    const asTenant = await h.request({ method: 'DELETE', url: `/api/v1/lists/${listId}`, key: tenant.key })
    expect(asTenant.json()).toEqual(errorBody(404, 'list_not_found'))
    const deleted = await h.request({ method: 'DELETE', url: `/api/v1/lists/${listId}` })
    expect(deleted.statusCode).toBe(200)
    expect(deleted.body).toBe('')
    expect((await get(listId)).json()).toEqual(errorBody(404, 'list_not_found'))
    expect((await h.request({ method: 'GET', url: exportUrl(listId) })).json().code).toBe('list_not_found')
    expect((await h.request({ method: 'DELETE', url: `/api/v1/lists/${listId}` })).statusCode).toBe(404)
    const lists = (await get(h.boot.organizationId)).json()
    expect(lists.map((l: { id: string }) => l.id)).not.toContain(listId)
  })
})
