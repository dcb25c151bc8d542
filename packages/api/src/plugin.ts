import type { Config, Coordination, Repositories, Store } from '@visitor-id/core'
import type { FastifyPluginAsync } from 'fastify'
import { createAuthHook } from './auth.js'
import { visitorTrackingRoutes } from './routes/visitor-tracking.js'

export interface ApiPluginOptions {
  config: Config
  store: Store
  repos: Repositories
  coordination: Coordination
}

/** Every /api/v1 route. Register with `{ prefix: '/api/v1' }`. */
export const apiPlugin: FastifyPluginAsync<ApiPluginOptions> = async (app, options) => {
  app.addHook('onRequest', createAuthHook(options.repos))
  await app.register(visitorTrackingRoutes, { store: options.store, repos: options.repos })
}
