import { type Principal, requireScope } from '@visitor-id/core/access'
import type { RateLimiter } from '@visitor-id/core/coordination'
import { appError } from '@visitor-id/core/errors'
import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify'
import type { ApiServices, Route } from './route-definition.js'

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal
  }
}

const keyHeader = { organization: 'x-api-key', partner: 'x-partner-api-key' } as const

/**
 * Authenticates the route's kind of key: `X-API-Key` on organization routes, `X-Partner-API-Key` on
 * partner routes. Any other key, or none, is 401.
 */
export function authenticate(route: Route, services: ApiServices): onRequestAsyncHookHandler {
  return async (request) => {
    const principal = await services.keys.authenticate(route.auth, request.headers[keyHeader[route.auth]])
    request.principal = principal
    services.usage.touch(principal.keyId)
  }
}

/** Sets the X-RateLimit-* headers and answers 429 (with Retry-After) past the key's limit. */
export function rateLimit(limiter: RateLimiter, limit: number): onRequestAsyncHookHandler {
  return async (request, reply) => {
    const principal = principalOf(request)
    let result: Awaited<ReturnType<RateLimiter['hit']>>
    try {
      result = await limiter.hit(`api:${principal.keyId}`)
    } catch (error) {
      // Fail open: an unreachable Redis should not take the API down with it.
      request.log.warn({ err: error }, 'rate limiter unavailable: request let through')
      reply.header('x-ratelimit-limit', limit)
      return
    }
    reply
      .header('x-ratelimit-limit', result.limit)
      .header('x-ratelimit-remaining', result.remaining)
      .header('x-ratelimit-reset', Math.ceil(result.resetAt / 1000))
    if (!result.allowed) {
      reply.header('retry-after', Math.max(1, Math.ceil((result.resetAt - Date.now()) / 1000)))
      throw appError('rate_limited')
    }
  }
}

/** 403 unless the key holds the route's scope. */
export function requireRouteScope(route: Route): onRequestAsyncHookHandler {
  return async (request) => {
    requireScope(principalOf(request), route.scope)
  }
}

/** The authenticated principal of a request (set by the auth hook). */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error('The auth hook did not run for this route')
  return request.principal
}
