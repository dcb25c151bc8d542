import { Readable } from 'node:stream'
import { addressOrganization, addressPartnerOrganization, type Principal } from '@visitor-id/core/access'
import type { OrganizationRow } from '@visitor-id/core/accounts'
import type { RateLimiter } from '@visitor-id/core/coordination'
import { appError } from '@visitor-id/core/errors'
import { findList, type ListRow, listIdPattern } from '@visitor-id/core/lists'
import { callerOrganization } from '@visitor-id/core/organizations'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { z } from 'zod'
import { authenticate, principalOf, rateLimit, requireRouteScope } from './auth.js'
import { type ApiServices, csvReply, type Route, toFastifyPath } from './route-definition.js'
import { callerPrincipal } from './routes/context.js'
import { parseRequest } from './validation.js'

const defaultBodyLimit = 64 * 1024

/** What a route acts on: its organization and, for list routes, the list. */
interface Target {
  organization: OrganizationRow | undefined
  list: ListRow | undefined
}

/**
 * The list with this id, if the key may address its organization; anything else (another tenant's
 * list, an unknown or malformed id) is 404 `list_not_found`, the same for all.
 */
async function addressList(
  services: ApiServices,
  principal: Principal,
  id: string,
  access: 'read' | 'write',
) {
  const list = await findList(services.repos, id)
  if (!list) throw appError('list_not_found')
  const organization = await addressOrganization(
    services.repos,
    principal,
    list.organization_id,
    access,
  ).catch(() => {
    throw appError('list_not_found')
  })
  return { organization, list }
}

/** Where each addressing tenancy finds the organization id it resolves. */
const organizationIdPart = {
  'organization-param': 'params',
  'partner-organization-param': 'params',
  'organization-query': 'query',
  'organization-body': 'body',
} as const

/** A parsed request part, as an object of fields (a part without a schema is undefined). */
const fieldsOf = (part: unknown) => (part ?? {}) as Record<string, unknown>

/**
 * What the route acts on, from the request already validated: its organization id (path, query or
 * body), list id or checkout secret is well formed and present where required, so what is left to
 * answer is whether the key may address it. Another tenant's organization or list is 404, the same
 * as one that does not exist.
 */
async function resolveTarget(
  route: Route,
  services: ApiServices,
  principal: Principal,
  input: { params: unknown; query: unknown; body: unknown },
): Promise<Target> {
  const none = { organization: undefined, list: undefined }
  if (route.tenancy === 'none') return none
  if (route.tenancy === 'caller') {
    return { ...none, organization: await callerOrganization(services.repos, callerPrincipal(principal)) }
  }
  const access = route.scope === 'read' ? 'read' : 'write'
  if (route.tenancy === 'list-param' || route.tenancy === 'list-or-organization-param') {
    const id = String(fieldsOf(input.params).id)
    if (route.tenancy === 'list-param' || listIdPattern.test(id)) {
      return addressList(services, principal, id, access)
    }
    return { ...none, organization: await addressOrganization(services.repos, principal, id, access) }
  }
  if (route.tenancy === 'checkout-query') {
    const checkout = await services.billing.provider.retrieveCheckout(String(fieldsOf(input.query).secret))
    if (!checkout) throw appError('checkout_not_found')
    const organization = await addressOrganization(
      services.repos,
      principal,
      checkout.organizationId,
      access,
    ).catch(() => {
      throw appError('checkout_not_found')
    })
    return { ...none, organization }
  }
  const organizationId = String(fieldsOf(input[organizationIdPart[route.tenancy]]).organizationId)
  if (route.tenancy === 'partner-organization-param') {
    return {
      ...none,
      organization: await addressPartnerOrganization(services.repos, principal, organizationId),
    }
  }
  return {
    ...none,
    organization: await addressOrganization(services.repos, principal, organizationId, access),
  }
}

/** The key kind each tenancy resolves for; a route declaring another is a bug of the table. */
const tenancyAuth = {
  'organization-param': 'organization',
  'organization-query': 'organization',
  'organization-body': 'organization',
  'partner-organization-param': 'partner',
  'list-param': 'organization',
  'list-or-organization-param': 'organization',
  'checkout-query': 'organization',
  caller: 'organization',
  none: undefined,
} as const

/**
 * Whether the route's params, query or body schema takes this field, and requires it, as the
 * document says; `'organization id'` when it is a required `organizationIdField` (a UUID).
 */
function declaredField(
  route: Route,
  name: string,
  part: 'params' | 'query' | 'body' = 'query',
): 'organization id' | 'required' | 'optional' | undefined {
  const input = route[part]
  if (!input) return undefined
  const schema = z.toJSONSchema(input, { io: 'input', unrepresentable: 'any' }) as {
    properties?: Record<string, { format?: string }>
    required?: string[]
  }
  if (!schema.properties || !Object.hasOwn(schema.properties, name)) return undefined
  if (!schema.required?.includes(name)) return 'optional'
  return schema.properties[name]?.format === 'uuid' ? 'organization id' : 'required'
}

function checkTenancy(route: Route): void {
  const auth = tenancyAuth[route.tenancy]
  if (auth && route.auth !== auth) {
    throw new Error(`${route.operationId}: tenancy ${route.tenancy} needs ${auth} keys, not ${route.auth}`)
  }
  const byPathOrganization =
    route.tenancy === 'organization-param' || route.tenancy === 'partner-organization-param'
  if (byPathOrganization && !route.path.includes('{organizationId}')) {
    throw new Error(`${route.operationId}: tenancy ${route.tenancy} needs an {organizationId} path parameter`)
  }
  if (route.tenancy === 'organization-query' && route.path.includes('{organizationId}')) {
    // One place for the id: a path parameter as well would let the two disagree.
    throw new Error(
      `${route.operationId}: tenancy organization-query takes organizationId from the query, not the path`,
    )
  }
  // Validated before the organization is looked up: missing or malformed is 400, never 404.
  const part = organizationIdPart[route.tenancy as keyof typeof organizationIdPart]
  if (part && declaredField(route, 'organizationId', part) !== 'organization id') {
    throw new Error(
      `${route.operationId}: tenancy ${route.tenancy} needs a required organizationId in its ${part} (organizationIdField)`,
    )
  }
  if (route.tenancy === 'checkout-query' && declaredField(route, 'secret') !== 'required') {
    throw new Error(`${route.operationId}: tenancy checkout-query needs a required secret query parameter`)
  }
  if (route.tenancy.startsWith('list-') && !route.path.includes('{id}')) {
    throw new Error(`${route.operationId}: tenancy ${route.tenancy} needs an {id} path parameter`)
  }
}

function checkResponse(route: Route): void {
  if (route.response.contentType !== 'text/csv') return
  if (route.response.schema !== csvReply || route.response.status !== 200) {
    throw new Error(`${route.operationId}: declare a CSV response with csvResponse(description)`)
  }
  if (declaredField(route, 'bom') !== 'optional') {
    throw new Error(
      `${route.operationId}: a CSV route takes ?bom=1 (docs/decisions.md, "CSV"): add \`bom: bomParam\` to its query`,
    )
  }
}

/** A `Content-Disposition` file name: `[A-Za-z0-9._-]` only, so no quote, path or header break. */
function attachmentName(filename: string): string {
  const safe = filename
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^\.+/, '')
    .slice(0, 200)
  return safe === '' ? 'download.csv' : safe
}

/**
 * The body, once its first chunk is ready. Until then nothing is sent, so an error while the first
 * rows are produced (a failing query, a 4xx of the service) is still the JSON error; later errors
 * can only cut the download short. Destroying the result destroys the body (a client that leaves
 * stops the rows).
 */
async function started(body: Readable): Promise<Readable> {
  const chunks = body[Symbol.asyncIterator]()
  let pending: IteratorResult<unknown> | undefined = await chunks.next()
  return new Readable({
    async read() {
      try {
        const next = pending ?? (await chunks.next())
        pending = undefined
        this.push(next.done ? null : next.value)
      } catch (error) {
        this.destroy(error as Error)
      }
    },
    destroy(error, callback) {
      body.destroy(error ?? undefined)
      callback(error)
    },
  })
}

async function sendCsv(route: Route, request: FastifyRequest, reply: FastifyReply, result: unknown) {
  const parsed = csvReply.safeParse(result)
  if (!parsed.success) {
    if (result instanceof Readable) result.destroy()
    throw new Error(`${route.operationId} returned no { filename, body }: ${parsed.error.message}`)
  }
  const extra = Object.keys(parsed.data.headers ?? {}).filter((name) => !route.response.headers?.[name])
  if (extra.length > 0) {
    parsed.data.body.destroy()
    throw new Error(`${route.operationId} sent undeclared headers: ${extra.join(', ')}`)
  }
  const body = await started(parsed.data.body)
  reply.headers(parsed.data.headers ?? {})
  reply
    .code(200)
    .header('content-type', 'text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${attachmentName(parsed.data.filename)}"`)
  if (request.method === 'HEAD') {
    // Fastify would read a streamed body to its end to answer a HEAD: stop the rows instead.
    body.destroy()
    return reply.send()
  }
  return reply.send(body)
}

/**
 * Registers a route table; a route whose tenancy does not fit its key kind, path or query, or a CSV
 * route declared otherwise than with `csvResponse` and `bomParam`, throws. Per request (docs/decisions.md,
 * "Order of checks"): key (401) -> rate limit (429) -> scope (403) -> body parsing (400/413/415) ->
 * params, query and body validation (400, every failing field named) -> tenancy (404) -> handler ->
 * the reply shaped by the response schema, so it carries exactly the documented fields (a CSV
 * route's body is streamed as is).
 */
export function registerRoutes(
  app: FastifyInstance,
  routes: readonly Route[],
  services: ApiServices,
  rateLimiter: { limiter: RateLimiter; limit: number },
): void {
  const limitRate = rateLimit(rateLimiter.limiter, rateLimiter.limit)
  for (const route of routes) {
    checkTenancy(route)
    checkResponse(route)
    app.route({
      method: route.method,
      url: toFastifyPath(route.path),
      bodyLimit: route.bodyLimit ?? defaultBodyLimit,
      onRequest: [authenticate(route, services), limitRate, requireRouteScope(route)],
      handler: async (request, reply) => {
        const principal = principalOf(request)
        // The request's shape first (400), then what it addresses (404): a missing or malformed
        // organization id or checkout secret is the client's mistake, never "not found".
        const input = parseRequest(route, request)
        const target = await resolveTarget(route, services, principal, input)
        const result = await route.handler({ principal, ...target, ...input, request, services })
        if (route.response.contentType === 'text/csv') return sendCsv(route, request, reply, result)
        if (route.response.status === 204) return reply.code(204).send()
        const shaped = route.response.schema.safeParse(result)
        if (!shaped.success) {
          // A bug, not the caller's fault: logged with the issues, answered as a bare 500.
          throw new Error(`${route.operationId} returned an undocumented shape: ${shaped.error.message}`)
        }
        return reply.code(route.response.status).send(shaped.data)
      },
    })
  }
}
