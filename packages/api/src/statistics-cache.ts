// The statistics routes' answers through the exact answer cache (core analytics/answer-cache.ts),
// and the `x-statistics-cache` header that says how each was served (hit, shared, miss, off).
import { type AnswerCache, answerKey, type StatisticsQuery } from '@visitor-id/core/analytics'
import type { FastifyInstance, FastifyRequest } from 'fastify'

const outcomes = new WeakMap<FastifyRequest, string>()

/** The answer of a statistics request, from the cache when the data is unchanged since. */
export async function cachedAnswer<T>(
  cache: AnswerCache,
  request: FastifyRequest,
  endpoint: string,
  query: StatisticsQuery,
  compute: () => Promise<T>,
): Promise<T> {
  const { value, outcome } = await cache.get(answerKey(endpoint, query), compute)
  outcomes.set(request, outcome)
  return value
}

/** Sends `x-statistics-cache` on the answers that went through the cache. */
export function addStatisticsCacheHeader(app: FastifyInstance) {
  app.addHook('onSend', async (request, reply, payload) => {
    const outcome = outcomes.get(request)
    if (outcome) reply.header('x-statistics-cache', outcome)
    return payload
  })
}
