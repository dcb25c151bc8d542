// What every statistic shares (spec "Companies and statistics"): the range, the request, and the
// rows of a rollup they are read from. The statistics are read from hourly rollups, never from raw
// page views: `first_hours` for distinct counts (each key's active hours next to its previous one,
// migration 0020, settled by analytics/first-hours.ts), `company_hours` for the figures of a few
// companies or one company's visitors, `visitor_hours` for a page of visitors. Each answer has a
// module: totals.ts, chart.ts, companies.ts, visitors.ts (downloads: export.ts).
//
// Ranges count whole hours, the rollups' grain: `from` is taken back to the start of its hour and
// `to` to the end of its hour (`effectiveRange` says which window was counted). A visitor, a
// session or a company counts in a range when it has hits in it; page views, engaged time and
// session durations are those of the hits in the range.
import type { IcpConfigRow } from '../icp/rows.js'
import { type AudienceClause, type AudienceFilter, audienceSql } from './audience.js'

export const hourMs = 3_600_000

export interface TimeRange {
  /** ISO 8601. */
  from: string
  to: string
}

/** The window a range counts: from the start of `from`'s hour to the end of `to`'s hour. */
export function effectiveRange(range: TimeRange): TimeRange {
  const from = Math.floor(Date.parse(range.from) / hourMs) * hourMs
  const to = Math.floor(Date.parse(range.to) / hourMs) * hourMs + hourMs - 1
  return { from: new Date(from).toISOString(), to: new Date(to).toISOString() }
}

export interface StatisticsQuery extends AudienceFilter {
  organizationId: string
  range: TimeRange
  /** The organization's ICP configs (from memory). */
  configs: readonly IcpConfigRow[]
}

export interface PageRequest {
  page: number
  limit: number
}

/**
 * The rows of a rollup of the organization in the range, for the audience, as SQL and its
 * parameters; `needs`: the audience's `WITH` clauses the statement names itself.
 */
export function rollupScope(
  query: StatisticsQuery,
  extraWhere: string,
  table: Rollup,
  needs: readonly AudienceClause[] = [],
) {
  const [name, kind] = table.split(':')
  // first_hour_counts has no visitors: its readers choose the audience's columns (countColumns).
  const audience = audienceSql(
    query.configs,
    name === 'first_hour_counts' ? {} : query,
    name === 'first_hours',
    needs,
  )
  const range = effectiveRange(query.range)
  return {
    with: audience.with,
    from: `FROM ${name}
      WHERE organization_id = {organizationId:UUID}${kind ? ` AND kind = '${kind}'` : ''}
        AND hour >= toStartOfHour({from:DateTime64(3, 'UTC')}) AND hour <= toStartOfHour({to:DateTime64(3, 'UTC')})${audience.where}${extraWhere}`,
    params: { ...audience.params, organizationId: query.organizationId, from: range.from, to: range.to },
    range,
  }
}

/**
 * A rollup of migrations 0020 and 0021: `first_hours`' rows of one kind (with the audience flags),
 * `first_hour_counts` (everyone's sums and the ICP audience's, `countColumns`), `company_hours`,
 * `visitor_hours`.
 */
export type Rollup =
  | 'company_hours'
  | 'visitor_hours'
  | 'first_hour_counts'
  | `first_hours:${'visitor' | 'session' | 'company_visitor' | 'company_session'}`
  | 'first_hour_counts:visitor'

/** Whether only some visitors count (ICPOnly, personaOnly, icpSlug). */
export const hasAudience = (query: StatisticsQuery) =>
  Boolean(query.icpOnly || query.personaOnly || query.icpSlug !== undefined)

/**
 * The columns of `first_hour_counts` that sum the request's audience: everyone's (no prefix) or the
 * ICP audience's (`icp_`). Undefined for the audiences only rows can count (personaOnly, icpSlug).
 */
export function countColumns(query: StatisticsQuery): '' | 'icp_' | undefined {
  if (query.personaOnly || query.icpSlug !== undefined) return undefined
  return query.icpOnly ? 'icp_' : ''
}

/**
 * For the statements a request runs side by side: one engine thread each, so two or three of them
 * share the cores instead of each asking for all of them. Not for an audience's: probing a
 * config's set row by row is faster on all threads (bench/analytics/RESULTS.md, "Why the code is
 * as it is").
 */
export const oneThreadUnlessAudience = (query: StatisticsQuery) =>
  hasAudience(query) ? '' : 'SETTINGS max_threads = 1'

/**
 * A `first_hours` row that is its key's first active hour in the range: the key counts once in the
 * range by it. Rows are summed by `sign` (a row taken back by the settling pass has a -1 twin).
 */
export const firstInRange = "previous_hour < toStartOfHour({from:DateTime64(3, 'UTC')})"

/**
 * Whether `first_hours` rows are read through a flag (ICPOnly, personaOnly). A visitor that left the
 * audience leaves its rows there, each with its -1 twin, until a merge collapses them: sums of sign
 * stay right meanwhile, but a key exists only while its signs sum above 0, and its first and last
 * hits are those of its live rows. (Everyone's rows, and a config's set of visitors, keep every
 * visitor's rows together: a row taken back there is replaced by one with the same hits or more.)
 */
export const flagged = (query: StatisticsQuery) => Boolean(query.icpOnly || query.personaOnly)

/** The companies of some `first_hours` rows (`from`) with a live row. */
export const liveCompanies = (from: string) =>
  `SELECT company_id ${from} GROUP BY company_id HAVING sum(sign) > 0`

export const iso = (value: string | number) =>
  new Date(typeof value === 'number' ? value : Date.parse(value)).toISOString()
