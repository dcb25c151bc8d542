import type { IncomingMessage, ServerResponse } from 'node:http'
import { type ApiPluginOptions, apiDocsPlugin, apiPlugin } from '@visitor-id/api'
import type { Config } from '@visitor-id/core/config'
import type { Coordination } from '@visitor-id/core/coordination'
import { findVerifiedDomain } from '@visitor-id/core/custom-domain'
import {
  emailSecret,
  unsubscribePath,
  updateOrganizationEmailPreferences,
  verifyUnsubscribeToken,
} from '@visitor-id/core/email'
import type { EndpointDoc } from '@visitor-id/core/endpoint-doc'
import { appError } from '@visitor-id/core/errors'
import { toErrorBody } from '@visitor-id/core/http-errors'
import { acceptPhoneCallback, type PhoneSearchDeps } from '@visitor-id/core/phone-search'
import type { Repositories } from '@visitor-id/core/repositories'
import { isMigrated, type Migration, type Store } from '@visitor-id/core/store'
import {
  type CollectFastPath,
  type IngestPluginOptions,
  ingestPlugin,
  type MetricsRegistry,
  metricsEndpointDoc,
  metricsPlugin,
  operationsTag,
  trackingEndpointDocs,
  trackingTag,
} from '@visitor-id/ingest'
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify'
import { z } from 'zod'
import type { ProcessServices } from './adapters.js'
import { billingPageDocs, billingPagesPlugin } from './billing-pages.js'
import { dashboardDocs, dashboardPlugin } from './dashboard.js'
import { page } from './html-page.js'
import { integrationPageDocs, integrationPagesPlugin } from './integration-pages.js'

export interface AppDependencies {
  logger: FastifyBaseLogger
  config: Config
  store: Store
  coordination: Coordination
  repos: Repositories
  migrations: Migration[]
  ingest?: IngestPluginOptions
  /** Billing, phone search and integrations, built once (adapters.ts); the API role needs them. */
  services?: ProcessServices
  /** Served at GET /metrics (Prometheus text) when given. */
  metrics?: MetricsRegistry
  /** The privacy requests' process parts (the erased visitor ids ingest checks). */
  privacy?: ApiPluginOptions['privacy']
}

/** Headers that carry secrets: never written to a log. */
export const redactedPaths = [
  'req.headers["x-api-key"]',
  'req.headers["x-partner-api-key"]',
  'req.headers.authorization',
]

const healthEndpointDocs: EndpointDoc[] = [
  {
    operationId: 'health',
    method: 'GET',
    path: '/healthz',
    tag: operationsTag,
    summary: 'Liveness',
    description: 'The process is alive and serving HTTP. It reads nothing: use it for restarts.',
    responses: [{ status: 200, description: 'Alive', schema: z.object({ status: z.literal('ok') }) }],
    errors: [],
    example: {},
  },
  {
    operationId: 'ready',
    method: 'GET',
    path: '/readyz',
    tag: operationsTag,
    summary: 'Readiness',
    description: 'The store answers and every migration is applied: use it to route traffic to this process.',
    responses: [
      { status: 200, description: 'Ready', schema: z.object({ status: z.literal('ready') }) },
      {
        status: 503,
        description: 'Not ready: the store does not answer, or a migration is pending',
        schema: z.object({ status: z.literal('not_ready') }),
      },
    ],
    errors: [],
    example: {},
  },
]

const tagDescriptions = {
  [trackingTag]:
    'What the pixel calls, at the root (not under `/api/v1`), served by processes of role `all` or ' +
    '`ingest`. No API key: the tracking key travels in the hit, and a hit is never refused for its key.',
  [operationsTag]: 'Health, readiness and metrics, served by every role.',
}

/** Methods served per path pattern, to tell "no such path" (404) from "not with this method" (405). */
function createMethodIndex() {
  const patterns = new Map<string, { match: RegExp; methods: Set<string> }>()
  return {
    add(url: string, methods: string[]) {
      let entry = patterns.get(url)
      if (!entry) {
        const source = url
          .split('/')
          .map((part) =>
            part.startsWith(':')
              ? '[^/]+'
              : part === '*'
                ? '.*'
                : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
          )
          .join('/')
        entry = { match: new RegExp(`^${source}$`), methods: new Set() }
        patterns.set(url, entry)
      }
      for (const method of methods) entry.methods.add(method)
    },
    /** Methods served at a concrete path, sorted; empty when none is. */
    allowed(path: string): string[] {
      const methods = new Set<string>()
      for (const { match, methods: served } of patterns.values()) {
        if (match.test(path)) for (const method of served) methods.add(method)
      }
      return [...methods].sort()
    },
  }
}

const tlsAskDoc: EndpointDoc = {
  operationId: 'tlsAsk',
  method: 'GET',
  path: '/tls/ask',
  tag: operationsTag,
  summary: 'Whether a TLS certificate may be issued for a host (Caddy on-demand TLS)',
  description:
    "200 when `domain` is a partner's verified custom domain, 404 otherwise: the `ask` endpoint of " +
    "Caddy's on-demand TLS, so certificates are only requested for domains that verified (see the " +
    'README, "Custom domain"). Served by every role, no key; it reveals only whether a domain is verified.',
  query: z.object({ domain: z.string().max(300).describe('The host a TLS handshake asked for') }),
  responses: [
    { status: 200, description: 'Verified: issue a certificate', schema: z.object({ ok: z.literal(true) }) },
    { status: 404, description: 'Not a verified custom domain', schema: z.object({ ok: z.literal(false) }) },
  ],
  errors: [],
  example: { query: { domain: 'track.example.com' } },
}

const unsubscribeQuery = z.object({ token: z.string().max(4096).describe('The signed token of the link') })

const unsubscribeDocs: EndpointDoc[] = [
  {
    operationId: 'unsubscribePage',
    method: 'GET',
    path: '/email/unsubscribe',
    tag: operationsTag,
    summary: 'The unsubscribe link of a lifecycle email: a confirmation page',
    description:
      'Changes nothing (mail scanners open links): a page with one button that confirms. An invalid ' +
      'link says so on the page.',
    query: unsubscribeQuery,
    responses: [{ status: 200, description: 'The page', contentType: 'text/html' }],
    errors: [],
    example: { query: { token: 'eyJvIjoi...' } },
  },
  {
    operationId: 'unsubscribe',
    method: 'POST',
    path: '/email/unsubscribe',
    tag: operationsTag,
    summary: 'One-click unsubscribe (RFC 8058): that email off for that organization',
    description:
      "Mail clients post `List-Unsubscribe=One-Click` here; the page's button does the same. Turns the " +
      "email's key off in the organization's preferences (the partner route shows it as its own " +
      'value). An invalid token changes nothing; the answer is a page either way.',
    query: unsubscribeQuery,
    body: {
      contentTypes: ['application/x-www-form-urlencoded'],
      schema: z.object({ 'List-Unsubscribe': z.string().optional() }),
    },
    responses: [{ status: 200, description: 'A page saying what was done', contentType: 'text/html' }],
    errors: ['invalid_request', 'payload_too_large', 'unsupported_media_type'],
    example: { query: { token: 'eyJvIjoi...' }, body: { 'List-Unsubscribe': 'One-Click' } },
  },
]

/**
 * The unsubscribe links of lifecycle emails (core email/mail-unsubscribe.ts signs them), in their
 * own plugin scope: the form parser they need applies to them alone.
 */
async function unsubscribePlugin(app: FastifyInstance, deps: AppDependencies): Promise<void> {
  const secret = emailSecret(deps.config.email.secret, deps.config.dataDir)
  const target = (request: { query: unknown }) => {
    const token = (request.query as Record<string, unknown>).token
    return typeof token === 'string' ? verifyUnsubscribeToken(secret, token) : undefined
  }
  const invalid = page(
    'This link is not valid',
    '<p>It may be incomplete. Change your email settings in the app.</p>',
  )
  app.get(unsubscribePath, async (request, reply) => {
    reply.type('text/html; charset=utf-8')
    if (!target(request)) return invalid
    const token = encodeURIComponent(String((request.query as Record<string, string>).token))
    return page(
      'Unsubscribe',
      `<form method="post" action="${unsubscribePath}?token=${token}">` +
        '<input type="hidden" name="List-Unsubscribe" value="One-Click">' +
        '<button type="submit">Stop these emails</button></form>',
    )
  })
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: 4096 },
    (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(String(body)))),
  )
  app.post(unsubscribePath, { bodyLimit: 4096 }, async (request, reply) => {
    reply.type('text/html; charset=utf-8')
    const found = target(request)
    if (!found) return invalid
    await updateOrganizationEmailPreferences(deps.store, found.organizationId, { [found.key]: false })
    return page('Unsubscribed', '<p>You will not get this kind of email for this organization any more.</p>')
  })
}

const phoneCallbackParams = z.object({
  organizationId: z.string().max(64).describe('Organization id (UUID)'),
  visitorId: z.string().max(64).describe('Visitor id (UUID)'),
  searchId: z.string().max(64).describe('The search (`ps_` + 24 hex)'),
  token: z.string().max(128).describe("The search's secret token, as the callback URL carries it"),
})

const phoneCallbackDoc: EndpointDoc = {
  operationId: 'phoneSearchCallback',
  method: 'POST',
  path: '/phone-search/callback/{organizationId}/{visitorId}/{searchId}/{token}',
  tag: 'Visitor tracking',
  summary: "A phone provider's answer to a search (PHONE_HTTP_MODE=callback)",
  description:
    'Not for API clients: the URL is handed to the provider with each search (from PUBLIC_URL), and ' +
    "its secret token is the credential (no API key; checked against the token's SHA-256, never " +
    'logged). The body is read with PHONE_HTTP_PHONE_PATH, as a synchronous answer would be; ' +
    '`{"status": "not_found"}` or no phone at the path means not found. The answer is 200 whatever ' +
    'the search: `received: true` when it was applied; `false` for a search that is unknown, ' +
    'finished (a repeated delivery) or of another token, so the endpoint tells no caller which ' +
    'searches exist.',
  params: phoneCallbackParams,
  body: { contentTypes: ['application/json'], schema: z.unknown() },
  responses: [
    {
      status: 200,
      description: 'Acknowledged; `received` says whether it was applied',
      schema: z.object({ received: z.boolean() }),
    },
  ],
  errors: ['invalid_request', 'invalid_json', 'payload_too_large', 'unsupported_media_type'],
  example: {
    params: {
      organizationId: '3f1c2a4e-0000-4000-8000-000000000001',
      visitorId: '3f1c2a4e-0000-4000-8000-000000000004',
      searchId: 'ps_0123456789abcdef01234567',
      token: '0123456789abcdef0123456789abcdef0123456789abcdef',
    },
    body: { phone: '+14155552671' },
  },
}

/**
 * Where a callback phone provider posts its answer (PHONE_HTTP_MODE=callback): the URL it was given
 * holds the search and a random token of that search, checked against the token's stored SHA-256.
 * No API key: the token is the credential. The URL is never logged (the route logs at `warn`, and
 * its own failures without the URL). Always 200: `received` says whether the answer was applied.
 */
function registerPhoneCallback(app: FastifyInstance, phone: PhoneSearchDeps): void {
  const params = phoneCallbackParams
  app.post(
    '/phone-search/callback/:organizationId/:visitorId/:searchId/:token',
    { logLevel: 'warn', bodyLimit: 64 * 1024 },
    async (request, reply) => {
      const target = params.safeParse(request.params)
      if (!target.success) {
        return reply.code(400).send(toErrorBody(appError('invalid_request', 'Malformed callback URL')))
      }
      const received = await acceptPhoneCallback(phone, target.data, request.body).catch((error: unknown) => {
        app.log.warn({ err: error }, 'phone search callback failed')
        return false
      })
      return reply.code(200).send({ received })
    },
  )
}

/**
 * The HTTP application for one process: health routes, and ingest and/or the API by role.
 * @example const app = await buildApp({ config, logger, store, coordination, repos, migrations, services, ingest })
 */
export async function buildApp(deps: AppDependencies): Promise<FastifyInstance> {
  const { config } = deps
  const app = createFastify(deps)
  registerErrorHandlers(app)
  registerOperationsRoutes(app, deps)
  const serveIngest = config.role === 'all' || config.role === 'ingest'
  const serveApi = config.role === 'all' || config.role === 'api'
  if (serveIngest) {
    if (!deps.ingest) throw new Error('The ingest role needs the ingest service')
    await app.register(ingestPlugin, {
      ...deps.ingest,
      trustProxy: config.trustProxy,
      onFastPath: (fastPath) => serveFirst(app, fastPath),
    })
  }
  if (deps.metrics) {
    await app.register(metricsPlugin, { registry: deps.metrics, token: config.metricsToken })
  }
  if (serveApi) {
    if (!deps.services) throw new Error('The api role needs the billing, phone and integration services')
    await registerApi(app, deps, deps.services)
  }
  return app
}

/**
 * Lets `fastPath` answer the requests it takes before Fastify routes them (the lean path of POST
 * /collect); Fastify's own request listener serves the rest. `inject` still goes through Fastify.
 */
function serveFirst(app: FastifyInstance, fastPath: CollectFastPath): void {
  const fastify = app.server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[]
  app.server.removeAllListeners('request')
  app.server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    if (fastPath(request, response)) return
    for (const listener of fastify) listener(request, response)
  })
}

function createFastify(deps: AppDependencies): FastifyInstance {
  return Fastify({
    loggerInstance: deps.logger,
    trustProxy: deps.config.trustProxy,
    bodyLimit: 1024 * 1024,
    // Respond to a client that goes away mid-request without keeping sockets open at shutdown.
    forceCloseConnections: 'idle',
    return503OnClosing: true,
    // Errors the router raises before any route runs (bad URL encoding, over-long path parameters)
    // get the same body as every other error.
    frameworkErrors: (error, _request, reply) => {
      const body = toErrorBody(error)
      ;(reply as FastifyReply).code(body.statusCode).send(body)
    },
  })
}

/** Every error in the one error body; an unknown path 404, a known path with another method 405. */
function registerErrorHandlers(app: FastifyInstance): void {
  const methods = createMethodIndex()
  app.addHook('onRoute', (route) => methods.add(route.url, [route.method].flat()))
  const notFound = (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0]!
    const shown = path.slice(0, 200)
    const allowed = methods.allowed(path)
    if (allowed.length > 0) {
      const body = toErrorBody(
        appError(
          'method_not_allowed',
          `${request.method} is not served at ${shown}; use ${allowed.join(', ')}`,
        ),
      )
      return reply.code(body.statusCode).header('allow', allowed.join(', ')).send(body)
    }
    const body = toErrorBody(appError('route_not_found', `Route ${request.method} ${shown} not found`))
    return reply.code(body.statusCode).send(body)
  }
  app.setErrorHandler((error, request, reply) => {
    // The body is parsed before the not-found handler runs: at a path nothing serves, a body the
    // parser refuses (an empty JSON body, say) must still answer what the path is, 404 or 405.
    if (request.is404) return notFound(request, reply)
    const body = toErrorBody(error)
    if (body.statusCode >= 500) request.log.error({ err: error }, 'request failed')
    return reply.code(body.statusCode).send(body)
  })
  app.setNotFoundHandler(notFound)
}

/** Liveness, readiness and the TLS `ask` endpoint: served by every role. */
function registerOperationsRoutes(app: FastifyInstance, deps: AppDependencies): void {
  app.get('/healthz', async () => ({ status: 'ok' }))
  app.get('/tls/ask', async (request, reply) => {
    const domain = (request.query as Record<string, unknown>).domain
    const verified =
      typeof domain === 'string' && (await findVerifiedDomain(deps.store, domain)) !== undefined
    return reply.code(verified ? 200 : 404).send({ ok: verified })
  })
  app.get('/readyz', async (_request, reply) => {
    const ready = (await deps.store.ping()) && (await isMigrated(deps.store, deps.migrations))
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not_ready' })
  })
}

/** The API under `/api/v1`, the pages and callbacks around it, and the OpenAPI document of the whole service. */
async function registerApi(
  app: FastifyInstance,
  deps: AppDependencies,
  services: ProcessServices,
): Promise<void> {
  const { config } = deps
  const { billing, phone, integrations } = services
  registerPhoneCallback(app, phone)
  await app.register(async (scope) => unsubscribePlugin(scope, deps))
  await app.register(async (scope) => billingPagesPlugin(scope, billing))
  await app.register(async (scope) => dashboardPlugin(scope, {}))
  await app.register(async (scope) => integrationPagesPlugin(scope, integrations))
  await app.register(apiPlugin, {
    prefix: '/api/v1',
    store: deps.store,
    repos: deps.repos,
    coordination: deps.coordination,
    config,
    phone,
    billing,
    integrations,
    ...(deps.privacy ? { privacy: deps.privacy } : {}),
  })
  // The tracker's endpoints are documented whatever this process's role: they are the service's.
  await app.register(apiDocsPlugin, {
    config,
    endpoints: [
      ...trackingEndpointDocs(),
      ...healthEndpointDocs,
      tlsAskDoc,
      phoneCallbackDoc,
      ...unsubscribeDocs,
      ...billingPageDocs(billing.provider.kind),
      ...dashboardDocs,
      ...integrationPageDocs,
      ...(deps.metrics ? [metricsEndpointDoc({ token: config.metricsToken !== undefined })] : []),
    ],
    tagDescriptions,
  })
}
