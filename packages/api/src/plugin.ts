import {
  billingDeps,
  type Config,
  type Coordination,
  createKeyAuthenticator,
  createKeyUsageRecorder,
  integrationDeps,
  phoneSearchDeps,
  type Repositories,
  type Store,
} from '@visitor-id/core'
import type { FastifyPluginAsync } from 'fastify'
import { registerRoutes } from './register-routes.js'
import type { ApiServices } from './route-definition.js'
import { routes } from './routes/index.js'

export interface ApiPluginOptions {
  config: Config
  store: Store
  repos: Repositories
  coordination: Coordination
}

/** Every /api/v1 route, from the route table. Register with `{ prefix: '/api/v1' }`. */
export const apiPlugin: FastifyPluginAsync<ApiPluginOptions> = async (app, options) => {
  const { config, store, repos, coordination } = options
  const keys = createKeyAuthenticator({ repos })
  const usage = createKeyUsageRecorder({
    store,
    onError: (error) => app.log.error({ err: error }, 'could not record API key usage'),
  })
  app.addHook('onClose', async () => {
    await usage.close()
  })

  // JSON only (anything else is 415). An empty JSON body counts as no body, so a DELETE sent with
  // `Content-Type: application/json` and nothing else is not a parse error.
  const parseJson = app.getDefaultJsonParser('error', 'error')
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body.toString()
    if (text === '') return done(null, undefined)
    return parseJson(request, text, done)
  })

  const phone = phoneSearchDeps({ config, store, repos, coordination })
  const billing = billingDeps({ config, store, repos, coordination })
  const integrations = integrationDeps({ config, store, repos, coordination })
  const services: ApiServices = {
    config,
    store,
    repos,
    coordination,
    keys,
    usage,
    phone,
    billing,
    integrations,
    log: app.log,
  }
  const limiter = coordination.createRateLimiter({ limit: config.apiRateLimit, windowMs: 60_000 })
  registerRoutes(app, routes, services, { limiter, limit: config.apiRateLimit })
}
