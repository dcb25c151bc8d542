import {
  addressOrganization,
  addressPartnerOrganization,
  callerOrganization,
  type OrganizationRow,
  type Principal,
  type RateLimiter,
} from '@visitor-id/core'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { authenticate, principalOf, rateLimit, requireRouteScope } from './auth.js'
import { type ApiServices, type Route, toFastifyPath } from './route-definition.js'
import { callerPrincipal } from './routes/context.js'
import { parseRequest } from './validation.js'

const defaultBodyLimit = 64 * 1024

/**
 * The organization the route acts on. Resolved from the raw path parameter before any validation,
 * so another tenant's organization is 404 whatever else the request carries.
 */
async function resolveOrganization(
  route: Route,
  services: ApiServices,
  principal: Principal,
  request: FastifyRequest,
): Promise<OrganizationRow | undefined> {
  if (route.tenancy === 'none') return undefined
  if (route.tenancy === 'caller') return callerOrganization(services.repos, callerPrincipal(principal))
  const raw = (request.params as Record<string, unknown>).organizationId
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
  'partner-organization-param': 'partner',
  caller: 'organization',
  none: undefined,
} as const

function checkTenancy(route: Route): void {
  const auth = tenancyAuth[route.tenancy]
  if (auth && route.auth !== auth) {
    throw new Error(`${route.operationId}: tenancy ${route.tenancy} needs ${auth} keys, not ${route.auth}`)
  }
  if (route.tenancy.endsWith('organization-param') && !route.path.includes('{organizationId}')) {
    throw new Error(`${route.operationId}: tenancy ${route.tenancy} needs an {organizationId} path parameter`)
  }
}

/**
 * Registers a route table; a route whose tenancy does not fit its key kind or path throws. Per
 * request: key (401) -> rate limit (429) -> scope (403) -> body parsing (400/413/415) -> tenancy
 * (404) -> params, query and body validation (400) -> handler -> the reply shaped by the response
 * schema, so it carries exactly the documented fields.
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
