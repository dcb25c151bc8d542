import { authenticateKey, type Principal, type Repositories } from '@visitor-id/core'
import type { FastifyRequest } from 'fastify'

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal
  }
}

/** Authenticates the organization key (`X-API-Key`) or, on /partner paths, the partner key. */
export function createAuthHook(repos: Repositories) {
  return async (request: FastifyRequest) => {
    const isPartnerPath = request.url.startsWith('/api/v1/partner')
    request.principal = isPartnerPath
      ? await authenticateKey(repos, 'partner', request.headers['x-partner-api-key'])
      : await authenticateKey(repos, 'organization', request.headers['x-api-key'])
  }
}

/** The authenticated principal of a request (set by the auth hook). */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error('The auth hook did not run for this route')
  return request.principal
}
