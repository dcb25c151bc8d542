import { z } from 'zod'
import { defineRoute, type Route } from '../route-definition.js'

/** The authenticated no-op (key check; the benchmark's baseline). */
export const pingRoutes: Route[] = [
  defineRoute({
    operationId: 'ping',
    method: 'GET',
    path: '/ping',
    auth: 'organization',
    scope: 'read',
    tenancy: 'none',
    tag: 'Service',
    summary: 'Check an API key',
    description: 'Authenticated no-op: 200 when the key is valid, with the rate-limit headers.',
    response: { status: 200, description: 'The key works', schema: z.object({ ok: z.literal(true) }) },
    errors: [],
    example: () => ({}),
    async handler() {
      return { ok: true as const }
    },
  }),
]
