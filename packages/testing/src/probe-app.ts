// Probe routes through registerRoutes, the way the plugin registers the table, on a harness's store:
// for frame features no route of the table uses yet.

import type { ApiServices, Route } from '@visitor-id/api'
import { createAnswerCache } from '@visitor-id/core/analytics'
import { createKeyAuthenticator, createKeyUsageRecorder } from '@visitor-id/core/api-keys'
import { loadConfig } from '@visitor-id/core/config'
import { createMemoryCoordination, type RateLimiter } from '@visitor-id/core/coordination'
import { toErrorBody } from '@visitor-id/core/http-errors'
import { createPhoneSearchReader } from '@visitor-id/core/phone-search'
import { createErasedVisitors } from '@visitor-id/core/privacy'
import { createVisitorProfileReader } from '@visitor-id/core/visitor-tracking'
import Fastify, { type FastifyInstance } from 'fastify'
import type { Harness } from './harness.js'

/**
 * `registerRoutes` of packages/api/src/register-routes.ts. The API package does not export it (only
 * its plugin), so the API's own tests, which may import their package's modules, hand it in.
 */
export type RegisterRoutes = (
  app: FastifyInstance,
  routes: readonly Route[],
  services: ApiServices,
  rateLimiter: { limiter: RateLimiter; limit: number },
) => void

export interface ProbeApp {
  /** Serves the probe routes under /api/v1. */
  app: FastifyInstance
  /** Registers routes on a scratch instance: throws as registerRoutes does for a bad declaration. */
  register(routes: Route[]): Promise<void>
  close(): Promise<void>
}

/** An app serving `routes` with the harness's store and keys, errors rendered as the server does. */
export async function startProbeApp(
  h: Harness,
  routes: Route[],
  registerRoutes: RegisterRoutes,
): Promise<ProbeApp> {
  const coordination = createMemoryCoordination()
  const usage = createKeyUsageRecorder({ store: h.store, onError: () => {} })
  const app = Fastify()
  app.setErrorHandler((error, _request, reply) => {
    const body = toErrorBody(error)
    return reply.code(body.statusCode).send(body)
  })
  const config = loadConfig({ DATA_DIR: '/nonexistent' })
  const services: ApiServices = {
    config,
    store: h.store,
    repos: h.repos,
    coordination,
    phone: h.server.phone!,
    reads: { profiles: createVisitorProfileReader(h.store), phoneSearches: createPhoneSearchReader(h.store) },
    statistics: createAnswerCache(h.store, { maxRows: config.statisticsCacheRows }),
    billing: h.billing,
    integrations: h.integrations,
    keys: createKeyAuthenticator({ repos: h.repos }),
    usage,
    // Erasures record their visitor ids in the store; this app's copy of the set is never started.
    privacy: { erasedVisitors: createErasedVisitors(h.store) },
    log: app.log,
  }
  const limiter = coordination.createRateLimiter({ limit: 1000, windowMs: 60_000 })
  await app.register(async (scope) => registerRoutes(scope, routes, services, { limiter, limit: 1000 }), {
    prefix: '/api/v1',
  })
  await app.ready()
  return {
    app,
    async register(more) {
      const scratch = Fastify()
      try {
        registerRoutes(scratch, more, services, { limiter, limit: 1000 })
      } finally {
        await scratch.close()
      }
    },
    async close() {
      await app.close()
      await usage.close()
      await coordination.close()
    },
  }
}
