import { errorCatalogue } from '@visitor-id/core/errors'
import { z } from 'zod'

/** ISO 8601 UTC with milliseconds, as every REST timestamp is written. */
export const timestamp = z.iso.datetime()

/** Path identifiers: bounded, and otherwise left to the service (unknown ids are 404, not 400). */
export const pathId = (description: string) => z.string().min(1).max(64).describe(description)

/**
 * An organization id, wherever a request names one (path, query or body): a UUID, in any case.
 * Missing or malformed is 400 `invalid_request` naming the field, checked before the organization
 * is looked up (docs/decisions.md, "Order of checks": 400 before 404); a well-formed id of an organization
 * the key may not address is 404.
 */
export const organizationIdField = z
  .guid({ error: 'must be an organization id (UUID)' })
  .describe('Organization id (UUID)')

/** The `{organizationId}` path parameter. */
export const organizationIdParam = organizationIdField

const errorCodes = Object.keys(errorCatalogue) as [
  keyof typeof errorCatalogue,
  ...(keyof typeof errorCatalogue)[],
]

/** The one error body (docs/decisions.md, "Error body"): Fastify's shape plus a stable string code. */
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

/** Pagination (docs/decisions.md, "Pagination"): `page` from 1, `limit` 1..500 (default 25). */
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

const datePattern = /^\d{4}-\d{2}-\d{2}$/

/** A real calendar date (2026-02-31 is not) or an ISO 8601 date-time with a zone. */
export function isRangeBound(value: string): boolean {
  if (datePattern.test(value)) {
    const time = Date.parse(value)
    return !Number.isNaN(time) && new Date(time).toISOString().slice(0, 10) === value
  }
  return z.iso.datetime({ offset: true }).safeParse(value).success && !Number.isNaN(Date.parse(value))
}

/**
 * A `from` or `to` query value: ISO 8601 or YYYY-MM-DD, as an ISO 8601 UTC string. A date alone
 * means the start of that day for `from` and its end for `to` (docs/decisions.md, "Time").
 */
export function rangeBound(edge: 'from' | 'to') {
  return z
    .string()
    .max(40)
    .refine(isRangeBound, {
      message: 'must be ISO 8601 (2026-01-31T00:00:00Z) or YYYY-MM-DD',
    })
    .transform((value) => {
      if (!datePattern.test(value)) return new Date(value).toISOString()
      return edge === 'from' ? `${value}T00:00:00.000Z` : `${value}T23:59:59.999Z`
    })
    .describe(
      edge === 'from'
        ? 'Start, ISO 8601 or YYYY-MM-DD (start of that day)'
        : 'End, ISO 8601 or YYYY-MM-DD (end of that day)',
    )
}

/** `from` and `to`, both optional: the last 30 days up to now by default; `from` after `to` is 400. */
export const optionalRangeQuery = z
  .object({ from: rangeBound('from').optional(), to: rangeBound('to').optional() })
  .transform(({ from, to }) => {
    const end = to ?? new Date().toISOString()
    return { from: from ?? new Date(Date.parse(end) - 30 * 86_400_000).toISOString(), to: end }
  })
  .refine(({ from, to }) => from <= to, { message: '`from` must not be after `to`', path: ['from'] })
