import type { Config } from '@visitor-id/core/config'
import type { EndpointDoc } from '@visitor-id/core/endpoint-doc'
import type { FastifyPluginAsync } from 'fastify'
import { renderDocsPage } from './docs-page.js'
import { buildOpenApiDocument } from './openapi.js'
import { routes } from './routes/index.js'

export interface ApiDocsPluginOptions {
  /** The rate limit the document states comes from here. */
  config: Pick<Config, 'apiRateLimit'>
  /** Endpoints outside /api/v1 (tracker, health, metrics), documented after the API. */
  endpoints?: readonly EndpointDoc[]
  /** Descriptions of tags, by name. */
  tagDescriptions?: Record<string, string>
}

/**
 * Serves the OpenAPI document at `/openapi.json` and its HTML rendering at `/docs`, both built once
 * from the configuration. Register at the root.
 * @example await app.register(apiDocsPlugin, { config, endpoints: [...trackingEndpoints()] })
 */
export const apiDocsPlugin: FastifyPluginAsync<ApiDocsPluginOptions> = async (app, options) => {
  const document = buildOpenApiDocument(routes, {
    rateLimit: options.config.apiRateLimit,
    ...(options.endpoints ? { endpoints: options.endpoints } : {}),
    ...(options.tagDescriptions ? { tagDescriptions: options.tagDescriptions } : {}),
  })
  const body = JSON.stringify(document)
  const page = renderDocsPage(document)
  app.get('/openapi.json', async (_request, reply) =>
    reply.type('application/json; charset=utf-8').send(body),
  )
  app.get('/docs', async (_request, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'")
      .send(page),
  )
}
