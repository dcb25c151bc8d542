import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { appError } from '@visitor-id/core'
import { trackerBundlePath, wire } from '@visitor-id/pixel'
import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import type { BatchWriter } from './batch-writer.js'
import { parseCollectBody } from './collect-schema.js'
import { type PageViewRow, toPageViewRow } from './page-view-row.js'
import type { TrackingKeyCache } from './tracking-keys.js'

export interface IngestPluginOptions {
  trackingKeys: TrackingKeyCache
  writer: BatchWriter<PageViewRow>
  /** Tracker bundle to serve at /p.js (defaults to the pixel package's build). */
  trackerPath?: string
}

const collectBodyLimit = 16 * 1024

function parseJson(_request: unknown, body: string, done: (error: Error | null, value?: unknown) => void) {
  try {
    done(null, JSON.parse(body))
  } catch {
    done(appError('invalid_json'))
  }
}

/** Serves the pixel and receives its hits. Mount at the root: `/p.js`, `/collect`. */
export const ingestPlugin: FastifyPluginAsync<IngestPluginOptions> = async (
  app: FastifyInstance,
  options,
) => {
  const script = readFileSync(options.trackerPath ?? trackerBundlePath)
  const etag = `"${createHash('sha256').update(script).digest('hex').slice(0, 16)}"`

  app.get('/p.js', async (request, reply) => {
    reply
      .header('content-type', 'application/javascript; charset=utf-8')
      .header('cache-control', 'public, max-age=86400, stale-while-revalidate=604800')
      .header('etag', etag)
      .header('access-control-allow-origin', '*')
    if (request.headers['if-none-match'] === etag) return reply.code(304).send()
    return reply.send(script)
  })

  // The pixel posts text/plain (no CORS preflight); JSON is accepted too. Both parse as JSON.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser(['text/plain', 'application/json'], { parseAs: 'string' }, parseJson)

  app.post('/collect', { bodyLimit: collectBodyLimit }, async (request, reply) => {
    const parsed = parseCollectBody(request.body)
    if (!parsed.success) {
      throw appError('invalid_request', 'The hit is invalid', {
        issues: parsed.error.issues
          .slice(0, 10)
          .map((issue) => ({ path: issue.path.join('.'), message: issue.message })),
      })
    }
    const hits = Array.isArray(parsed.data) ? parsed.data : [parsed.data]
    const context = {
      ip: request.ip,
      userAgent: String(request.headers['user-agent'] ?? ''),
      receivedAt: Date.now(),
    }
    const rows: PageViewRow[] = []
    for (const hit of hits) {
      const config = await options.trackingKeys.resolve(hit[wire.trackingKey])
      // Unknown keys are dropped silently: the answer never tells whether a key exists.
      if (config) rows.push(toPageViewRow(hit, config, context))
    }
    await options.writer.add(rows)
    reply.header('access-control-allow-origin', '*')
    return reply.code(202).send()
  })
}
