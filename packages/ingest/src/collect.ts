// What POST /collect and GET /i.gif do with hits once their HTTP request is read, shared by the
// Fastify routes (plugin.ts) and the lean path of POST /collect (collect-fast-path.ts), so both
// answer alike.
import { appError } from '@visitor-id/core/errors'
import type { z } from 'zod'
import type { BatchWriter } from './batch-writer.js'
import { type Hit, parseCollectBody } from './collect-schema.js'
import type { DroppedHits } from './dropped-hits.js'
import type { LogLike } from './durable-sink.js'
import type { IngestMetrics } from './metrics.js'
import type { PageViewRow } from './page-view-row.js'
import type { HitPipeline, HitRequest, PipelineResult } from './pipeline/index.js'

export interface IngestDeps {
  pipeline: HitPipeline
  writer: BatchWriter<PageViewRow>
  metrics: IngestMetrics
  droppedHits?: DroppedHits | undefined
  /** True while the spool is full: hits are refused with 503 and Retry-After. */
  isOverloaded?: (() => boolean) | undefined
}

/** The Retry-After of a 503 that asks the client to send its hits again later. */
export const retryAfterSeconds = '30'

/** The 503s that carry Retry-After (the client is to send the hits again later). */
const retryErrors = new WeakSet<object>()

function retryLater(message?: string) {
  const error = appError('service_unavailable', message)
  retryErrors.add(error)
  return error
}

/** True for an error whose answer carries Retry-After. */
export const asksRetry = (error: unknown) =>
  typeof error === 'object' && error !== null && retryErrors.has(error)

/** The 400 for a body that holds no valid hit, with its first issues. */
function invalidHit(error: z.ZodError) {
  return appError('invalid_request', 'The hit is invalid', {
    issues: error.issues
      .slice(0, 10)
      .map((issue) => ({ path: issue.path.join('.'), message: issue.message })),
  })
}

/** Runs hits through the pipeline; resolves once the stored ones are durable. */
export type Ingest = (hits: Hit[], request: HitRequest) => Promise<void>

/** Runs hits through the pipeline and answers once the stored ones are durable. */
export function createIngest(deps: IngestDeps, log: () => LogLike): Ingest {
  const { metrics, writer, pipeline, droppedHits } = deps
  const dropped = (result: Exclude<PipelineResult, { row: PageViewRow }>, request: HitRequest) => {
    metrics.dropped(result.drop)
    if ('organizationId' in result) droppedHits?.add(result.organizationId, result.drop, request.receivedAt)
  }
  return async (hits, request) => {
    if (deps.isOverloaded?.()) {
      metrics.overloaded()
      throw retryLater('Ingest is overloaded; retry later')
    }
    const rows: PageViewRow[] = []
    for (const hit of hits) {
      let result: PipelineResult
      try {
        result = await pipeline.process(hit, request)
      } catch (error) {
        // The pixel config could not be read (store down, nothing cached): ask to retry.
        log().warn({ err: error }, 'ingest: pipeline failed')
        throw retryLater()
      }
      if ('row' in result) rows.push(result.row)
      else dropped(result, request)
    }
    try {
      // Dropped hits wait like stored ones, so the answer never tells whether a key exists.
      await (rows.length > 0 ? writer.add(rows) : writer.barrier())
    } catch {
      metrics.overloaded()
      throw retryLater('The hit could not be stored; retry later')
    }
    metrics.accepted(rows.length)
  }
}

/**
 * POST /collect once its body is parsed: validates it (one hit or a batch) and ingests it.
 * Resolves once durable (then 202); throws the AppError to answer otherwise.
 */
export function createCollect(ingest: Ingest, metrics: IngestMetrics) {
  return (body: unknown, request: HitRequest): Promise<void> => {
    const parsed = parseCollectBody(body)
    if (!parsed.success) {
      metrics.dropped('invalid')
      return Promise.reject(invalidHit(parsed.error))
    }
    return ingest(Array.isArray(parsed.data) ? parsed.data : [parsed.data], request)
  }
}

export type Collect = ReturnType<typeof createCollect>
