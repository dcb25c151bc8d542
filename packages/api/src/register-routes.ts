import { Readable } from 'node:stream'
import {
  addressOrganization,
  addressPartnerOrganization,
  callerOrganization,
  type OrganizationRow,
  type Principal,
  type RateLimiter,
} from '@visitor-id/core'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { z } from 'zod'
import { authenticate, principalOf, rateLimit, requireRouteScope } from './auth.js'
import { type ApiServices, csvReply, type Route, toFastifyPath } from './route-definition.js'
import { callerPrincipal } from './routes/context.js'
import { parseRequest } from './validation.js'

const defaultBodyLimit = 64 * 1024

/**
 * The organization the route acts on. Resolved from the raw path (or query) parameter before any
 * validation, so another tenant's organization is 404 whatever else the request carries.
 */
async function resolveOrganization(
  route: Route,
  services: ApiServices,
  principal: Principal,
  request: FastifyRequest,
): Promise<OrganizationRow | undefined> {
  if (route.tenancy === 'none') return undefined
  if (route.tenancy === 'caller') return callerOrganization(services.repos, callerPrincipal(principal))
  const source = route.tenancy === 'organization-query' ? request.query : request.params
  const raw = (source as Record<string, unknown> | undefined)?.organizationId
  // A repeated query parameter arrives as an array: not an id, so 404 like any malformed one.
  const organizationId = typeof raw === 'string' ? raw : ''
  if (route.tenancy === 'partner-organization-param') {
    return addressPartnerOrganization(services.repos, principal, organizationId)
  }
  const access = route.scope === 'read' ? 'read' : 'write'
  return addressOrganization(services.repos, principal, organizationId, access)
}

/** The key kind each tenancy resolves for; a route declaring another is a bug of the table. */
const tenancyAuth = {
  'organization-param': 'organization',
  'organization-query': 'organization',
  'partner-organization-param': 'partner',
  caller: 'organization',
  none: undefined,
} as const

/** Whether the route's query schema takes this parameter, and requires it, as the document says. */
function queryParameter(route: Route, name: string): 'required' | 'optional' | undefined {
  if (!route.query) return undefined
  const schema = z.toJSONSchema(route.query, { io: 'input', unrepresentable: 'any' }) as {
    properties?: Record<string, unknown>
    required?: string[]
  }
  if (!schema.properties || !Object.hasOwn(schema.properties, name)) return undefined
  return schema.required?.includes(name) ? 'required' : 'optional'
}

function checkTenancy(route: Route): void {
  const auth = tenancyAuth[route.tenancy]
  if (auth && route.auth !== auth) {
    throw new Error(`${route.operationId}: tenancy ${route.tenancy} needs ${auth} keys, not ${route.auth}`)
  }
  if (route.tenancy.endsWith('organization-param') && !route.path.includes('{organizationId}')) {
    throw new Error(`${route.operationId}: tenancy ${route.tenancy} needs an {organizationId} path parameter`)
  }
  if (route.tenancy === 'organization-query') {
    // One place for the id: a path parameter as well would let the two disagree.
    if (route.path.includes('{organizationId}')) {
      throw new Error(
        `${route.operationId}: tenancy organization-query takes organizationId from the query, not the path`,
      )
    }
    if (queryParameter(route, 'organizationId') !== 'required') {
      throw new Error(
        `${route.operationId}: tenancy organization-query needs a required organizationId query parameter`,
      )
    }
  }
}

function checkResponse(route: Route): void {
  if (route.response.contentType !== 'text/csv') return
  if (route.response.schema !== csvReply || route.response.status !== 200) {
    throw new Error(`${route.operationId}: declare a CSV response with csvResponse(description)`)
  }
  if (queryParameter(route, 'bom') !== 'optional') {
    throw new Error(
      `${route.operationId}: a CSV route takes ?bom=1 (DESIGN.md): add \`bom: bomParam\` to its query`,
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
  const body = await started(parsed.data.body)
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
 * route declared otherwise than with `csvResponse` and `bomParam`, throws. Per request: key (401) ->
 * rate limit (429) -> scope (403) -> body parsing (400/413/415) -> tenancy (404) -> params, query
 * and body validation (400) -> handler -> the reply shaped by the response schema, so it carries
 * exactly the documented fields (a CSV route's body is streamed as is).
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
        const organization = await resolveOrganization(route, services, principal, request)
        const input = parseRequest(route, request)
        const result = await route.handler({ principal, organization, ...input, request, services })
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
