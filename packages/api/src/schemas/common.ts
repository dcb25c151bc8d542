import { errorCatalogue } from '@visitor-id/core'
import { z } from 'zod'

/** ISO 8601 UTC with milliseconds, as every REST timestamp is written. */
export const timestamp = z.iso.datetime()

/** Path identifiers: bounded, and otherwise left to the service (unknown ids are 404, not 400). */
export const pathId = (description: string) => z.string().min(1).max(64).describe(description)

/** The `{organizationId}` path parameter. */
export const organizationIdParam = pathId('Organization id (UUID)')

const errorCodes = Object.keys(errorCatalogue) as [
  keyof typeof errorCatalogue,
  ...(keyof typeof errorCatalogue)[],
]

/** The one error body (DESIGN.md): Fastify's shape plus a stable string code. */
export const errorBodySchema = z
  .object({
    statusCode: z.number().int(),
    error: z.string().describe('HTTP reason phrase'),
    code: z.enum(errorCodes).describe('Stable error code (see the error catalogue)'),
    message: z.string(),
    details: z
      .object({
        issues: z.array(z.object({ path: z.string(), message: z.string() })),
      })
      .optional()
      .describe('For invalid_request: the failing fields'),
  })
  .describe('Error')

// RFC 1123 labels, a letter-led top-level label, 253 characters at most.
const hostnamePattern =
  /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?$/

/** A hostname such as `example.com` (no scheme, port or path), lowercased. */
export const hostname = z
  .string()
  .trim()
  .toLowerCase()
  .max(253)
  .regex(hostnamePattern, 'must be a hostname such as example.com (no scheme, port or path)')

/** An absolute http(s) URL of at most 2 KB. */
export const httpUrl = z
  .url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL' })
  .max(2048, 'must be at most 2048 characters')

/** DESIGN.md pagination: `page` from 1, `limit` 1..500 (default 25). */
export const paginationQuery = z.object({
  page: z.coerce.number().int().min(1).max(1_000_000).default(1).describe('Page number, from 1'),
  limit: z.coerce.number().int().min(1).max(500).default(25).describe('Items per page (at most 500)'),
})

/** The paginated envelope of a list of `item`. */
export function paginated<T extends z.ZodType>(item: T) {
  return z.object({
    data: z.array(item),
    page: z.number().int(),
    limit: z.number().int(),
    total: z.number().int(),
    totalPages: z.number().int(),
  })
}

/** `{ data, page, limit, total, totalPages }` for one page of `total` items. */
export function pageOf<T>(data: T[], page: { page: number; limit: number }, total: number) {
  return { data, page: page.page, limit: page.limit, total, totalPages: Math.ceil(total / page.limit) }
}
