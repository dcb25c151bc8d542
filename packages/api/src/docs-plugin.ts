import type { FastifyPluginAsync } from 'fastify'
import { renderDocsPage } from './docs-page.js'
import { buildOpenApiDocument } from './openapi.js'
import { routes } from './routes/index.js'

/** Serves the OpenAPI document at `/openapi.json` and its HTML rendering at `/docs`. Register at the root. */
export const apiDocsPlugin: FastifyPluginAsync = async (app) => {
  const document = buildOpenApiDocument(routes)
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
