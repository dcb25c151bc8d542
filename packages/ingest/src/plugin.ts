import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { brotliCompressSync, constants, gzipSync } from 'node:zlib'
import { appError } from '@visitor-id/core/errors'
import { configPath, kFormCapture, kRespectPrivacy, trackerBundlePath, wire } from '@visitor-id/pixel'
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import type { BatchWriter } from './batch-writer.js'
import {
  asksRetry,
  type Collect,
  createCollect,
  createIngest,
  type Ingest,
  retryAfterSeconds,
} from './collect.js'
import { type CollectFastPath, createCollectFastPath } from './collect-fast-path.js'
import { isTrackingKeyShape } from './collect-schema.js'
import type { DroppedHits } from './dropped-hits.js'
import type { IngestMetrics } from './metrics.js'
import { noscriptHit } from './noscript.js'
import type { PageViewRow } from './page-view-row.js'
import type { HitPipeline, HitRequest } from './pipeline/index.js'
import type { TrackingKeyCache } from './tracking-keys.js'

export interface IngestPluginOptions {
  pipeline: HitPipeline
  writer: BatchWriter<PageViewRow>
  metrics: IngestMetrics
  trackingKeys: TrackingKeyCache
  /** Counts the dropped hits of known organizations by day and reason (unset: /metrics only). */
  droppedHits?: DroppedHits
  /** True while the spool is full: hits are refused with 503 and Retry-After. */
  isOverloaded?: () => boolean
  /** Tracker bundle to serve at /p.js (defaults to the pixel package's build). */
  trackerPath?: string
  /**
   * Given the lean path of POST /collect (collect-fast-path.ts) for the HTTP server to try before
   * Fastify; unset, Fastify serves every request.
   */
  onFastPath?: (fastPath: CollectFastPath) => void
  /** TRUST_PROXY, for the lean path's client address (Fastify's own setting for the routes). */
  trustProxy?: boolean
}

const collectBodyLimit = 16 * 1024
// The smallest transparent 1x1 GIF.
const gif = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64')

function parseJson(_request: unknown, body: string, done: (error: Error | null, value?: unknown) => void) {
  try {
    done(null, JSON.parse(body))
  } catch {
    done(appError('invalid_json'))
  }
}

/** The tracker in each encoding, compressed once at start-up. */
function loadScript(file: string) {
  const raw = readFileSync(file)
  return {
    raw,
    gzip: gzipSync(raw, { level: 9 }),
    br: brotliCompressSync(raw, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }),
    etag: `"${createHash('sha256').update(raw).digest('hex').slice(0, 16)}"`,
  }
}

const header = (request: FastifyRequest, name: string) => {
  const value = request.headers[name]
  return typeof value === 'string' ? value : undefined
}

function hitRequest(request: FastifyRequest): HitRequest {
  return {
    ip: request.ip,
    userAgent: header(request, 'user-agent') ?? '',
    origin: header(request, 'origin'),
    referer: header(request, 'referer'),
    privacySignal: header(request, 'sec-gpc') === '1' || header(request, 'dnt') === '1',
    receivedAt: Date.now(),
  }
}

/** Sets Retry-After on the answer of an error that asks the client to retry, and rethrows it. */
function withRetryAfter(reply: FastifyReply) {
  return (error: unknown): never => {
    if (asksRetry(error)) reply.header('retry-after', retryAfterSeconds)
    throw error
  }
}

/** GET /p.js: the tracker, in the encoding the browser accepts, or 304 when it has this one. */
function serveTracker(app: FastifyInstance, trackerPath: string) {
  const script = loadScript(trackerPath)
  app.get('/p.js', async (request, reply) => {
    reply
      .header('content-type', 'application/javascript; charset=utf-8')
      // Long enough to spare the network, short enough that a new tracker reaches sites within a day.
      .header('cache-control', 'public, max-age=86400, stale-while-revalidate=604800')
      .header('etag', script.etag)
      .header('vary', 'accept-encoding')
      .header('access-control-allow-origin', '*')
    if (header(request, 'if-none-match') === script.etag) return reply.code(304).send()
    const accepts = header(request, 'accept-encoding') ?? ''
    if (/\bbr\b/.test(accepts)) return reply.header('content-encoding', 'br').send(script.br)
    if (/\bgzip\b/.test(accepts)) return reply.header('content-encoding', 'gzip').send(script.gzip)
    return reply.send(script.raw)
  })
}

/**
 * GET /c/:trackingKey: the tracker's run-time config. An unknown key answers like a known one with
 * every flag off.
 */
function serveTrackerConfig(app: FastifyInstance, trackingKeys: TrackingKeyCache) {
  app.get<{ Params: { trackingKey: string } }>(`${configPath}:trackingKey`, async (request, reply) => {
    const key = request.params.trackingKey
    let config: Awaited<ReturnType<TrackingKeyCache['resolve']>>
    try {
      config = isTrackingKeyShape(key) ? await trackingKeys.resolve(key) : undefined
    } catch {
      config = undefined
    }
    return reply
      .header('cache-control', 'public, max-age=60')
      .header('access-control-allow-origin', '*')
      .send({
        ...(config?.respect_privacy_signals ? { [kRespectPrivacy]: 1 } : {}),
        ...(config?.form_capture ? { [kFormCapture]: 1 } : {}),
      })
  })
}

/** POST /collect: the pixel's hits, one or a batch, answered 202 once durable. */
function receiveHits(app: FastifyInstance, collect: Collect) {
  // The pixel posts text/plain (no CORS preflight); JSON is accepted too. Both parse as JSON.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser(['text/plain', 'application/json'], { parseAs: 'string' }, parseJson)

  app.post('/collect', { bodyLimit: collectBodyLimit }, async (request, reply) => {
    reply.header('access-control-allow-origin', '*')
    await collect(request.body, hitRequest(request)).catch(withRetryAfter(reply))
    return reply.code(202).send()
  })
}

/** GET /i.gif: the <noscript> fallback, a 1x1 GIF; the page URL comes from the Referer header. */
function receiveNoscriptHits(app: FastifyInstance, ingest: Ingest, metrics: IngestMetrics) {
  app.get<{ Querystring: Record<string, unknown> }>('/i.gif', async (request, reply) => {
    const context = hitRequest(request)
    const hit = noscriptHit(request.query[wire.trackingKey], context)
    if (hit) await ingest([hit], context).catch(withRetryAfter(reply))
    else metrics.dropped('invalid')
    return reply
      .header('content-type', 'image/gif')
      .header('cache-control', 'no-store')
      .header('access-control-allow-origin', '*')
      .send(gif)
  })
}

/** Serves the pixel and its run-time config, receives hits. Mount at the root. */
export const ingestPlugin: FastifyPluginAsync<IngestPluginOptions> = async (
  app: FastifyInstance,
  options,
) => {
  serveTracker(app, options.trackerPath ?? trackerBundlePath)
  serveTrackerConfig(app, options.trackingKeys)
  const ingest = createIngest(options, () => app.log)
  const collect = createCollect(ingest, options.metrics)
  receiveHits(app, collect)
  receiveNoscriptHits(app, ingest, options.metrics)
  if (options.onFastPath) {
    let closing = false
    app.addHook('preClose', async () => {
      closing = true
    })
    options.onFastPath(
      createCollectFastPath({
        collect,
        bodyLimit: collectBodyLimit,
        trustProxy: options.trustProxy ?? false,
        log: () => app.log,
        closing: () => closing,
      }),
    )
  }
}
