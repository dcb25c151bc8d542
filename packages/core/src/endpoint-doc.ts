import type { z } from 'zod'
import type { ErrorCode } from './errors.js'

/**
 * An endpoint outside the route table (the tracker's, health, metrics), documented beside the
 * API. Other packages build these from their own zod schemas, so a change there shows here.
 */
export interface EndpointDoc {
  operationId: string
  method: 'GET' | 'POST'
  /** OpenAPI style, from the root: `/c/{trackingKey}`. */
  path: string
  tag: string
  summary: string
  description: string
  /** A bearer token the endpoint requires (a security scheme of that name is added). */
  bearer?: { scheme: string; description: string }
  params?: z.ZodType
  query?: z.ZodType
  /** Request headers worth documenting (zod object of lowercase names). */
  headers?: z.ZodType
  body?: { contentTypes: readonly string[]; schema: z.ZodType }
  responses: readonly {
    status: number
    description: string
    /** The body's media type (JSON when left out); several when it depends on what is asked. */
    contentType?: string | readonly string[]
    schema?: z.ZodType
    headers?: Record<string, string>
  }[]
  /** Every error code the endpoint may answer. */
  errors: readonly ErrorCode[]
  /** Headers some error statuses carry: `{ 503: { 'Retry-After': 'Seconds to wait' } }`. */
  errorHeaders?: Record<number, Record<string, string>>
  /** A request that works: the docs' curl example. */
  example: {
    params?: Record<string, string>
    query?: Record<string, string>
    headers?: Record<string, string>
    body?: unknown
  }
}
