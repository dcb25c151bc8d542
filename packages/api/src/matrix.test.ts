// The tenant and scope matrix, built from the route table: a route added to the table is checked
// here without anyone writing a line, and a route cannot be registered outside the table (see
// openapi.test.ts).
import { type Scope, scopes } from '@visitor-id/core/access'
import { createPartnerKey, revokeApiKey, revokePartnerKey } from '@visitor-id/core/api-keys'
import { createPartner } from '@visitor-id/core/organizations'
import { createValidator, expectDocumented } from '@visitor-id/testing/documented'
import { errorBody, type Harness, startHarness } from '@visitor-id/testing/harness'
import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildOpenApiDocument } from './openapi.js'
import type { Route } from './route-definition.js'
import { routes } from './routes/index.js'

let h: Harness
type KeyKind = Route['auth']
const keys = {} as {
  revoked: Record<KeyKind, string>
  expired: Record<KeyKind, string>
  otherTenant: string
  otherTenantOrganizationId: string
  otherPartner: string
  /** Per key kind, a key holding everything but the scope. */
  lacking: Record<KeyKind, Record<Scope, string>>
}
let visitorId: string
const document = buildOpenApiDocument(routes)
const ajv = createValidator()

beforeAll(async () => {
  h = await startHarness()
  const organizationId = h.boot.organizationId
  const partnerId = h.boot.partnerId
  const partnerKey = (scopes: Scope[], expiresAt?: string) =>
    // An expired key is made as if it were created before its expiry.
    createPartnerKey(h.repos, { partnerId, name: 'matrix', scopes, expiresAt }, Date.parse('2019-01-01'))
  const revoked = await h.createKey(organizationId, ['admin'])
  await revokeApiKey(h.repos, organizationId, revoked.id)
  const revokedPartner = await partnerKey(['admin'])
  await revokePartnerKey(h.repos, partnerId, revokedPartner.apiKey.id)
  keys.revoked = { organization: revoked.plainKey, partner: revokedPartner.plainKey }
  const expired = '2020-01-01T00:00:00.000Z'
  keys.expired = {
    organization: (await h.createKey(organizationId, ['admin'], expired)).plainKey,
    partner: (await partnerKey(['admin'], expired)).plainKey,
  }
  const tenant = await h.createTenant({ plusEmployee: true })
  keys.otherTenant = tenant.key
  keys.otherTenantOrganizationId = tenant.organizationId
  keys.otherPartner = (await createPartner(h.repos, { name: 'Other partner' })).plainKey
  // Partner keys carry no agency scopes: `admin` lacks them too.
  const lackingScopes: Record<Scope, Scope[]> = {
    read: ['write'],
    write: ['read'],
    admin: ['read', 'write'],
    'agency:read': ['admin'],
    'agency:write': ['admin'],
  }
  keys.lacking = { organization: {}, partner: {} } as Record<KeyKind, Record<Scope, string>>
  for (const [scope, granted] of Object.entries(lackingScopes) as [Scope, Scope[]][]) {
    keys.lacking.organization[scope] = (await h.createKey(organizationId, granted)).plainKey
    keys.lacking.partner[scope] = (await partnerKey(granted)).plainKey
  }
  visitorId = (await h.seedVisitor(organizationId)).visitorId
})

afterAll(async () => {
  await h?.stop()
})

/** Tenancies that take the organization from the request (path, query or body): others' ids are 404. */
const addressingTenancies: readonly Route['tenancy'][] = [
  'organization-param',
  'organization-query',
  'organization-body',
  'partner-organization-param',
  'list-param',
  'list-or-organization-param',
  'checkout-query',
]

/** The code of that 404: a list route answers for the list, as if it did not exist. */
const notFoundCode = (route: Route) =>
  route.tenancy === 'list-param'
    ? 'list_not_found'
    : route.tenancy === 'checkout-query'
      ? 'checkout_not_found'
      : 'resource_not_found'

/**
 * The route's example request against fresh fixtures, so destructive routes can run every time; for
 * the organization it addresses, the bootstrap one unless told.
 */
async function exampleRequest(route: Route, organizationId = h.boot.organizationId): Promise<InjectOptions> {
  // Billing: a checkout needs no subscription running; an update, cancel or portal needs one.
  if (route.path.endsWith('/subscription-checkout')) await h.endSubscription(organizationId)
  if (/\/(subscription-update|subscription-cancel|customer-portal)$/.test(route.path))
    await h.subscribe(organizationId)
  // Integrations: an account to select, an integration to disconnect.
  if (route.path.endsWith('/account/select') || route.path.endsWith('/{integrationType}')) {
    await h.connectIntegration(organizationId)
  }
  const example = route.example({
    organizationId,
    memberUserId: await h.addMember(h.boot.organizationId),
    visitorId,
    keyId: (await h.createKey(h.boot.organizationId, ['read'])).id,
    icpConfigSlug: route.path.includes('{slug}')
      ? await h.createIcpConfig(h.boot.organizationId, 'organization')
      : '',
    partnerIcpConfigSlug: route.path.includes('{slug}')
      ? await h.createIcpConfig(h.boot.organizationId, 'partner')
      : '',
    // The list belongs to the organization addressed: another tenant's list when told so.
    listId:
      route.tenancy === 'list-param' || route.path === '/integrations/flows'
        ? await h.createList(organizationId)
        : '',
    // A fresh person each time: a search started by one request is ongoing for the next.
    personVisitorId: route.path.includes('phone-number-search') ? await h.seedPerson(organizationId) : '',
    webhookLogId: route.path.includes('/webhooks/logs/') ? await h.seedWebhookLog(h.boot.partnerId) : '',
    checkoutSessionId: route.tenancy === 'checkout-query' ? await h.completedCheckout(organizationId) : '',
    flowId: route.path.includes('{flowId}') ? await h.createFlow(organizationId) : '',
    adsAccountId: '1234567890',
  })
  let url = `/api/v1${route.path}`
  for (const [name, value] of Object.entries(example.params ?? {}))
    url = url.replace(`{${name}}`, encodeURIComponent(value))
  expect(url, `${route.operationId}: the example fills every path parameter`).not.toMatch(/[{}]/)
  if (route.tenancy === 'organization-query') {
    expect(example.query?.organizationId, `${route.operationId}: the example's organizationId query`).toBe(
      organizationId,
    )
  }
  if (route.tenancy === 'organization-body') {
    expect(
      (example.body as { organizationId?: string } | undefined)?.organizationId,
      `${route.operationId}: the example's organizationId in the body`,
    ).toBe(organizationId)
  }
  const query = new URLSearchParams(example.query ?? {}).toString()
  return {
    method: route.method,
    url: query ? `${url}?${query}` : url,
    ...(example.body === undefined ? {} : { payload: example.body as object }),
  }
}

/** A new key of the bootstrap organization (or its partner) holding exactly these scopes. */
async function keyWith(route: Route, granted: Scope[]): Promise<string> {
  if (route.auth === 'organization') return (await h.createKey(h.boot.organizationId, granted)).plainKey
  const key = await createPartnerKey(h.repos, {
    partnerId: h.boot.partnerId,
    name: 'scopes',
    scopes: granted,
  })
  return key.plainKey
}

/** Sends the request with exactly these key headers (and the example's organization, or this one). */
async function send(route: Route, headers: Record<string, string>, organizationId?: string) {
  const request = await exampleRequest(route, organizationId)
  return h.server.app.inject({ ...request, headers: { ...(request.headers as object), ...headers } })
}

/** A CSV route's reply: an attachment with a header row, documented as text/csv. */
function expectCsvDownload(route: Route, response: LightMyRequestResponse) {
  expect(response.statusCode, `${route.operationId}: ${response.body.slice(0, 300)}`).toBe(200)
  expect(response.headers['content-type']).toBe('text/csv; charset=utf-8')
  expect(response.headers['content-disposition']).toMatch(/^attachment; filename="[A-Za-z0-9._-]+"$/)
  expect(response.body).toMatch(/^[^\r\n]+\r\n/)
  const operation = document.paths[`/api/v1${route.path}`]?.[route.method.toLowerCase()]
  expect(Object.keys(operation?.responses['200']?.content ?? {})).toEqual(['text/csv'])
}

/** Where the route finds what it addresses outside its path: the field a client could leave out. */
function namedField(route: Route): { part: 'query' | 'body'; name: string } | undefined {
  if (route.tenancy === 'organization-query') return { part: 'query', name: 'organizationId' }
  if (route.tenancy === 'organization-body') return { part: 'body', name: 'organizationId' }
  if (route.tenancy === 'checkout-query') return { part: 'query', name: 'secret' }
  return undefined
}

const header = (route: Route) => (route.auth === 'organization' ? 'x-api-key' : 'x-partner-api-key')
const rightKey = (route: Route) => (route.auth === 'organization' ? h.boot.apiKey : h.boot.partnerKey)
const malformed = [
  '',
  'bsk_live_',
  'bsk_live_XYZ',
  `bsk_live_${'g'.repeat(32)}`,
  `bsk_partner_${'0'.repeat(31)}`,
  'x'.repeat(4096),
]

describe.each(routes.map((route) => [`${route.method} ${route.path}`, route] as const))(
  '%s',
  (_name, route) => {
    it('no key: 401', async () => {
      const response = await send(route, {})
      expect(response.statusCode).toBe(401)
      expect(response.json()).toEqual(errorBody(401, 'unauthorized'))
      expect(response.headers['x-ratelimit-limit']).toBeUndefined()
    })

    it('malformed or unknown key: 401', async () => {
      for (const key of [...malformed, `bsk_live_${'0'.repeat(32)}`, `bsk_partner_${'0'.repeat(32)}`]) {
        const response = await send(route, { [header(route)]: key })
        expect(response.statusCode, key.slice(0, 40)).toBe(401)
        expect(response.json()).toEqual(errorBody(401, 'unauthorized'))
      }
    })

    it('revoked key: 401', async () => {
      const response = await send(route, { [header(route)]: keys.revoked[route.auth] })
      expect(response.statusCode).toBe(401)
      expect(response.json()).toEqual(errorBody(401, 'unauthorized'))
    })

    it('expired key: 401', async () => {
      const response = await send(route, { [header(route)]: keys.expired[route.auth] })
      expect(response.statusCode).toBe(401)
      expect(response.json()).toEqual(errorBody(401, 'unauthorized'))
    })

    it('the other kind of key, in either header: 401', async () => {
      const wrong = route.auth === 'organization' ? h.boot.partnerKey : h.boot.apiKey
      const attempts: Record<string, string>[] = [
        { 'x-api-key': wrong },
        { 'x-partner-api-key': wrong },
        { 'x-api-key': wrong, 'x-partner-api-key': wrong },
      ]
      for (const headers of attempts) {
        const response = await send(route, headers)
        expect(response.statusCode).toBe(401)
        expect(response.json()).toEqual(errorBody(401, 'unauthorized'))
      }
    })

    it(`a key without ${route.scope}: 403`, async () => {
      const response = await send(route, { [header(route)]: keys.lacking[route.auth][route.scope] })
      expect(response.statusCode).toBe(403)
      expect(response.json()).toEqual(errorBody(403, 'forbidden'))
      expect(response.headers['x-ratelimit-limit']).toBe('1000')
    })

    it('the document names the scopes the frame enforces: each one passes, a key of every other is 403', async () => {
      const operation = document.paths[`/api/v1${route.path}`]![route.method.toLowerCase()]!
      const scheme = route.auth === 'organization' ? 'ApiKey' : 'PartnerApiKey'
      const documented = operation['x-required-scopes']!
      expect(operation.security).toEqual(documented.map((scope) => ({ [scheme]: [scope] })))
      expect(operation.description).toContain(`Required scope: \`${route.scope}\``)
      // Partner keys carry no agency scopes.
      const kindScopes =
        route.auth === 'organization' ? scopes : scopes.filter((s) => !s.startsWith('agency:'))
      for (const scope of documented) {
        const response = await send(route, { [header(route)]: await keyWith(route, [scope as Scope]) })
        expect([401, 403], `${scope}: ${response.body.slice(0, 200)}`).not.toContain(response.statusCode)
      }
      const others = kindScopes.filter((scope) => !documented.includes(scope))
      const refused = await send(route, { [header(route)]: await keyWith(route, others) })
      expect(refused.json(), others.join(',')).toEqual(errorBody(403, 'forbidden'))
    })

    it("another tenant's key: 404, or only its own data", async () => {
      const other = route.auth === 'organization' ? keys.otherTenant : keys.otherPartner
      const response = await send(route, { [header(route)]: other })
      if (addressingTenancies.includes(route.tenancy)) {
        expect(response.statusCode).toBe(404)
        expect(response.json()).toEqual(errorBody(404, notFoundCode(route)))
      } else if (route.path.includes('{')) {
        // A route on a resource of the caller's own (a partner's log entry) named in the path:
        // another tenant's key finds nothing there.
        expect(response.json()).toEqual(errorBody(404, 'resource_not_found'))
      } else {
        expect(response.statusCode).toBeLessThan(300)
        expect(response.body).not.toContain(h.boot.organizationId)
      }
    })

    it.runIf(addressingTenancies.includes(route.tenancy))(
      "another tenant's organization id (path or query), with the right key: 404",
      async () => {
        const response = await send(
          route,
          { [header(route)]: rightKey(route) },
          keys.otherTenantOrganizationId,
        )
        expect(response.statusCode).toBe(404)
        expect(response.json()).toEqual(errorBody(404, notFoundCode(route)))
      },
    )

    it.runIf(namedField(route) !== undefined)(
      'its organization id (or checkout secret) missing or malformed: 400 naming it, never 404',
      async () => {
        const { part, name } = namedField(route)!
        // Missing, then malformed: a checkout secret is any non-empty string, an id a UUID.
        const malformed = name === 'secret' ? [''] : ['not-an-id', `${h.boot.organizationId}0`]
        const values = [undefined, ...malformed, ...(part === 'body' ? [42, [h.boot.organizationId]] : [])]
        for (const value of values) {
          const request = await exampleRequest(route)
          const url = new URL(String(request.url), 'http://x')
          let payload = request.payload as Record<string, unknown> | undefined
          if (part === 'query') {
            if (value === undefined) url.searchParams.delete(name)
            else url.searchParams.set(name, String(value))
          } else {
            payload = { ...payload }
            if (value === undefined) delete payload[name]
            else payload[name] = value
          }
          const response = await h.server.app.inject({
            ...request,
            url: `${url.pathname}${url.search}`,
            ...(payload ? { payload } : {}),
            headers: { [header(route)]: rightKey(route) },
          })
          expect(response.json(), `${name}=${String(value)}`).toMatchObject({
            ...errorBody(400, 'invalid_request'),
            details: { issues: expect.arrayContaining([expect.objectContaining({ path: name })]) },
          })
        }
      },
    )

    it('the right key: the documented status and body, with rate-limit headers', async () => {
      // The window's reset is after the hit, so after the request was sent (not always after the
      // answer came back, on a busy machine).
      const sentAt = Date.now() / 1000
      const response = await send(route, { [header(route)]: rightKey(route) })
      if (route.response.contentType === 'text/csv') expectCsvDownload(route, response)
      else expectDocumented(route, response, document, ajv)
      expect(Number(response.headers['x-ratelimit-limit'])).toBe(1000)
      expect(Number(response.headers['x-ratelimit-remaining'])).toBeLessThan(1000)
      expect(Number(response.headers['x-ratelimit-reset'])).toBeGreaterThanOrEqual(sentAt)
    })
  },
)

it('covers every route of the table', () => {
  expect(routes.length).toBeGreaterThanOrEqual(15)
  expect(new Set(routes.map((r) => `${r.method} ${r.path}`)).size).toBe(routes.length)
  expect(routes.some((r) => r.auth === 'partner')).toBe(true)
})
