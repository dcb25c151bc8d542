import { createAnswerCache } from '@visitor-id/core/analytics'
import { createKeyAuthenticator, createKeyUsageRecorder } from '@visitor-id/core/api-keys'
import type { BillingDeps } from '@visitor-id/core/billing'
import type { Config } from '@visitor-id/core/config'
import type { Coordination } from '@visitor-id/core/coordination'
import type { FlowDeps } from '@visitor-id/core/integrations'
import { createPhoneSearchReader, type PhoneSearchDeps } from '@visitor-id/core/phone-search'
import type { Repositories } from '@visitor-id/core/repositories'
import type { Store } from '@visitor-id/core/store'
import { createVisitorProfileReader } from '@visitor-id/core/visitor-tracking'
import type { FastifyPluginAsync } from 'fastify'
import { registerRoutes } from './register-routes.js'
import type { ApiServices } from './route-definition.js'
import { routes } from './routes/index.js'
import { addStatisticsCacheHeader } from './statistics-cache.js'

export interface ApiPluginOptions {
  config: Config
  store: Store
  repos: Repositories
  coordination: Coordination
  /**
   * The services the server built for this process (its composition root chooses their adapters
   * from the configuration): the plugin uses them as given and builds none of its own.
   */
  phone: PhoneSearchDeps
  billing: BillingDeps
  integrations: FlowDeps
  /** Privacy requests' process parts (the set of erased visitor ids ingest checks); none in tests. */
  privacy?: ApiServices['privacy']
}

/** Every /api/v1 route, from the route table. Register with `{ prefix: '/api/v1' }`. */
export const apiPlugin: FastifyPluginAsync<ApiPluginOptions> = async (app, options) => {
  const { config, store, repos, coordination, phone, billing, integrations } = options
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

  const services: ApiServices = {
    config,
    store,
    repos,
    coordination,
    keys,
    usage,
    phone,
    reads: { profiles: createVisitorProfileReader(store), phoneSearches: createPhoneSearchReader(store) },
    statistics: createAnswerCache(store, { maxRows: config.statisticsCacheRows }),
    billing,
    integrations,
    privacy: options.privacy ?? {},
    log: app.log,
  }
  const limiter = coordination.createRateLimiter({ limit: config.apiRateLimit, windowMs: 60_000 })
  addStatisticsCacheHeader(app)
  registerRoutes(app, routes, services, { limiter, limit: config.apiRateLimit })
}
