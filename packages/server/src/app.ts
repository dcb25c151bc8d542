import { apiDocsPlugin, apiPlugin } from '@visitor-id/api'
import {
  appError,
  type Config,
  type Coordination,
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
  metricsPlugin,
} from '@visitor-id/ingest'
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply } from 'fastify'

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
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]!.slice(0, 200)
    const body = toErrorBody(appError('route_not_found', `Route ${request.method} ${path} not found`))
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
  if (deps.metrics) await app.register(metricsPlugin, { registry: deps.metrics })
  if (serveApi) {
    await app.register(apiPlugin, {
      prefix: '/api/v1',
      store: deps.store,
      repos: deps.repos,
      coordination: deps.coordination,
      config,
    })
    await app.register(apiDocsPlugin)
  }
  return app
}
