import { apiDocsPlugin, apiPlugin } from '@visitor-id/api'
import {
  appError,
  type Config,
  type Coordination,
  type EndpointDoc,
  isMigrated,
  type Migration,
  type Repositories,
  type Store,
  toErrorBody,
} from '@visitor-id/core'
import {
  type IngestPluginOptions,
  ingestPlugin,
  type MetricsRegistry,
  metricsEndpointDoc,
  metricsPlugin,
  operationsTag,
  trackingEndpointDocs,
  trackingTag,
} from '@visitor-id/ingest'
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply } from 'fastify'
import { z } from 'zod'

export interface AppDependencies {
  logger: FastifyBaseLogger
  config: Config
  store: Store
  coordination: Coordination
  repos: Repositories
  migrations: Migration[]
  ingest?: IngestPluginOptions
  /** Served at GET /metrics (Prometheus text) when given. */
  metrics?: MetricsRegistry
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

/**
 * The HTTP application for one process: health routes, and ingest and/or the API by role.
 * @example const app = await buildApp({ config, store, repos, migrations, ingest })
 */
export async function buildApp(deps: AppDependencies): Promise<FastifyInstance> {
  const { config } = deps
  const app = Fastify({
    loggerInstance: deps.logger,
    trustProxy: config.trustProxy,
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

  app.setErrorHandler((error, request, reply) => {
    const body = toErrorBody(error)
    if (body.statusCode >= 500) request.log.error({ err: error }, 'request failed')
    return reply.code(body.statusCode).send(body)
  })
  const methods = createMethodIndex()
  app.addHook('onRoute', (route) => methods.add(route.url, [route.method].flat()))
  app.setNotFoundHandler((request, reply) => {
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
  })

  app.get('/healthz', async () => ({ status: 'ok' }))
  app.get('/readyz', async (_request, reply) => {
    const ready = (await deps.store.ping()) && (await isMigrated(deps.store, deps.migrations))
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not_ready' })
  })

  const serveIngest = config.role === 'all' || config.role === 'ingest'
  const serveApi = config.role === 'all' || config.role === 'api'
  if (serveIngest) {
    if (!deps.ingest) throw new Error('The ingest role needs the ingest service')
    await app.register(ingestPlugin, deps.ingest)
  }
  if (deps.metrics) {
    await app.register(metricsPlugin, { registry: deps.metrics, token: config.metricsToken })
  }
  if (serveApi) {
    await app.register(apiPlugin, {
      prefix: '/api/v1',
      store: deps.store,
      repos: deps.repos,
      coordination: deps.coordination,
      config,
    })
    // The tracker's endpoints are documented whatever this process's role: they are the service's.
    await app.register(apiDocsPlugin, {
      config,
      endpoints: [
        ...trackingEndpointDocs(),
        ...healthEndpointDocs,
        ...(deps.metrics ? [metricsEndpointDoc({ token: config.metricsToken !== undefined })] : []),
      ],
      tagDescriptions,
    })
  }
  return app
}
