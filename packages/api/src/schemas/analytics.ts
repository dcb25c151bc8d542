// Query parameters and response shapes of the spec's "Companies and statistics" section.
import { companySortKeys, type FilteredHitReason, isTimeZone, startOfDayIn } from '@visitor-id/core/analytics'
import { z } from 'zod'
import { isRangeBound, paginated, timestamp } from './common.js'

/** The longest range a statistics request may ask for. */
export const maxRangeDays = 366

/** `true`/`false` (or 1/0) in a query string. */
export const queryBoolean = z
  .enum(['true', 'false', '1', '0'])
  .transform((value) => value === 'true' || value === '1')

const datePattern = /^\d{4}-\d{2}-\d{2}$/

const bound = (edge: 'from' | 'to') =>
  z
    .string()
    .max(40)
    .refine(isRangeBound, { message: 'must be ISO 8601 (2026-01-31T00:00:00Z) or YYYY-MM-DD' })
    .describe(
      edge === 'from'
        ? 'Start: ISO 8601, or YYYY-MM-DD for the start of that day (in `timezone` where the route has one)'
        : 'End: ISO 8601, or YYYY-MM-DD for the end of that day (in `timezone` where the route has one)',
    )

/** A bound as an instant: ISO as given, a date at the start (`from`) or end (`to`) of that day in the zone. */
function instant(value: string, edge: 'from' | 'to', timeZone: string): number {
  if (!datePattern.test(value)) return Date.parse(value)
  return edge === 'from' ? startOfDayIn(value, timeZone) : startOfDayIn(value, timeZone, 1) - 1
}

/**
 * A statistics query: `shape` plus `from`, `to` (required, or defaulting to the last 30 days) and,
 * with `withTimeZone`, an IANA `timezone` (default UTC) for date-only bounds. Parsed, `from` and
 * `to` are ISO 8601 UTC instants and `timezone` is set; `to` before `from` and ranges over 366
 * days are 400s.
 */
export function withRange<S extends z.ZodRawShape>(
  shape: S,
  options: { required?: boolean; withTimeZone?: boolean } = {},
) {
  const timezone = z
    .string()
    .max(64)
    .refine(isTimeZone, { message: 'must be an IANA time zone such as Europe/Paris' })
    .default('UTC')
    .describe('IANA time zone of the buckets and of date-only bounds (default UTC)')
  return z
    .object({
      ...shape,
      from: options.required ? bound('from') : bound('from').optional(),
      to: options.required ? bound('to') : bound('to').optional(),
      ...(options.withTimeZone ? { timezone } : {}),
    })
    .transform((query) => {
      const raw = query as { from?: string; to?: string; timezone?: string }
      const timeZone = raw.timezone ?? 'UTC'
      const to = raw.to === undefined ? Date.now() : instant(raw.to, 'to', timeZone)
      const from = raw.from === undefined ? to - 30 * 86_400_000 : instant(raw.from, 'from', timeZone)
      const range = { from: new Date(from).toISOString(), to: new Date(to).toISOString(), timezone: timeZone }
      return { ...(query as z.output<z.ZodObject<S>>), ...range }
    })
    .refine(({ from, to }) => from <= to, { message: '`from` must not be after `to`', path: ['from'] })
    .refine(({ from, to }) => Date.parse(to) - Date.parse(from) < (maxRangeDays + 1) * 86_400_000, {
      message: `the range must be at most ${maxRangeDays} days`,
      path: ['to'],
    })
}

/** `fields=a,b`: the fields of each row to return; an unknown one is a 400 listing the valid ones. */
export function fieldsQuery(valid: readonly string[]) {
  return z
    .string()
    .max(1000)
    .transform((value) => [
      ...new Set(
        value
          .split(',')
          .map((field) => field.trim())
          .filter(Boolean),
      ),
    ])
    .refine((fields) => fields.every((field) => valid.includes(field)), {
      message: `unknown field; valid fields: ${valid.join(', ')}`,
    })
    .optional()
    .describe(`Comma-separated fields of each row to return (default all): ${valid.join(', ')}`)
}

/** Keeps the listed fields of each row (all of them without a list). */
export function project<T extends object>(
  rows: readonly T[],
  fields: readonly string[] | undefined,
): Partial<T>[] {
  if (!fields) return [...rows]
  return rows.map(
    (row) =>
      Object.fromEntries(
        fields.map((field) => [field, (row as Record<string, unknown>)[field]]),
      ) as Partial<T>,
  )
}

export const audienceQuery = {
  ICPOnly: queryBoolean
    .optional()
    .describe('Only visitors an active ICP config matched (as of the last settling pass, about a second)'),
  personaOnly: queryBoolean
    .optional()
    .describe(
      "Only visitors whose persona (an active organization-level config's contact side) matched (as of the last settling pass)",
    ),
}

export const companyStatisticsSchema = z
  .object({
    id: z.string().describe('Company id'),
    name: z.string(),
    domain: z.string(),
    industry: z.string(),
    size: z.string(),
    employeeSizeRange: z.string(),
    country: z.string(),
    logoUrl: z.string(),
    visitors: z.number().int().describe('Distinct visitors with hits in the range'),
    identifiedVisitors: z.number().int().describe('Of those, visitors identified at least once'),
    sessions: z.number().int(),
    pageViews: z.number().int(),
    firstSeenAt: timestamp.describe('First hit in the range'),
    lastSeenAt: timestamp.describe('Last hit in the range'),
    engagedSeconds: z.number().int().describe('Engaged time of its visitors in the range'),
    icpMatch: z.boolean().describe('An active ICP config matched one of its visitors'),
  })
  .partial()
  .describe('Company statistics (the fields `fields` asks for; all by default)')

export const companyStatisticsFields = Object.keys(companyStatisticsSchema.shape)

export const visitorStatisticsSchema = z
  .object({
    id: z.string().describe('Visitor id'),
    email: z.string().describe("The contact's email ('' when not identified)"),
    firstName: z.string(),
    lastName: z.string(),
    jobTitle: z.string(),
    company: z
      .object({ id: z.string(), name: z.string(), domain: z.string() })
      .nullable()
      .describe("The contact's company, else the company of the visitor's last hit"),
    sessions: z.number().int(),
    pageViews: z.number().int(),
    firstSeenAt: timestamp,
    lastSeenAt: timestamp,
    identifiedAt: timestamp.nullable(),
    icp: z.boolean(),
    personaMatch: z.boolean(),
  })
  .partial()
  .describe('Visitor statistics (the fields `fields` asks for; all by default)')

export const visitorStatisticsFields = Object.keys(visitorStatisticsSchema.shape)

export const companyStatisticsPage = paginated(companyStatisticsSchema)
export const visitorStatisticsPage = paginated(visitorStatisticsSchema)

const filteredCount = (what: string) => z.number().int().describe(what)

/** The `filtered` figures of the totals: what ingest dropped, by reason (core's filteredHitReasons). */
const filteredSchema = z
  .object({
    total: filteredCount('Every hit dropped on the days of the range'),
    byReason: z
      .object({
        bot: filteredCount('A known crawler or tool by its user agent'),
        automation: filteredCount(
          'A browser under automation: `navigator.webdriver`, a headless browser, an empty or very short user agent',
        ),
        origin: filteredCount('A page or Origin outside the verified domains and allowed referrers'),
        privacy: filteredCount('A privacy signal (Sec-GPC, DNT) on a site that honours them'),
        invalid: filteredCount('An identify hit without an email'),
        consent: filteredCount(
          'An identify hit from a visitor who did not grant identification (pixel consent)',
        ),
        company_only: filteredCount(
          'An identify hit from a country where the organization identifies companies only (privacy settings)',
        ),
      } satisfies Record<FilteredHitReason, z.ZodNumber>)
      .describe('The same hits by reason; every reason is present (0 when none)'),
  })
  .describe(
    'Hits the ingest filtered out (bots, automation, foreign origins, privacy signals): never stored, ' +
      'never visitors. Counted per UTC day: every day the window touches counts whole. ' +
      'Independent of the audience filters.',
  )

export const totalsSchema = z.object({
  visitors: z.number().int(),
  identifiedVisitors: z.number().int(),
  companies: z.number().int(),
  sessions: z.number().int(),
  pageViews: z.number().int(),
  avgSessionDurationSeconds: z.number().describe('First to last hit of each session in the range, averaged'),
  icpVisitors: z.number().int(),
  engagedSeconds: z.number().int(),
  from: timestamp.describe('Start of the window counted (the start of the hour of `from`)'),
  to: timestamp.describe('End of the window counted (the end of the hour of `to`)'),
  filtered: filteredSchema,
  rawDataFrom: timestamp
    .nullable()
    .describe(
      "From when raw data exists under the organization's retention (see the privacy settings): a range " +
        'before it keeps its visitors, sessions and page views (hourly counts), not its companies; null: kept forever',
    ),
})

export const chartSchema = z.array(
  z.object({
    timestamp: timestamp.describe('Start of the bucket'),
    count: z.number().int().describe('Distinct visitors with hits in the bucket'),
  }),
)

export const companySort = {
  sort: z
    .enum(companySortKeys)
    .optional()
    .describe('Order by this figure (default visitors, then last seen)'),
  order: z.enum(['asc', 'desc']).default('desc').describe('Direction of `sort` (default desc)'),
}
