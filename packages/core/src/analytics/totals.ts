// The totals of a range (visitors, identified visitors, companies, sessions, page views, session
// duration, ICP visitors, engaged time): the companies list's summary.
import type { Store } from '../store/client.js'
import {
  countColumns,
  effectiveRange,
  firstInRange,
  hasAudience,
  liveCompanies,
  oneThreadUnlessAudience,
  rollupScope,
  type StatisticsQuery,
} from './scope.js'

export interface Totals {
  visitors: number
  identifiedVisitors: number
  companies: number
  sessions: number
  pageViews: number
  avgSessionDurationSeconds: number
  icpVisitors: number
  engagedSeconds: number
  from: string
  to: string
}

/**
 * Totals over the range from its `first_hours` rows: each visitor and session counts by its first
 * active hour in the range, so no figure needs a hash table of the range's visitors or sessions,
 * whose cost grows with the range. Everyone's and the ICP audience's figures are sums of
 * `first_hour_counts`; another audience's, of its rows. The companies are the distinct ones of
 * `company_hours` (read in its order), or of the audience's (company, visitor) rows. A session's
 * duration within the range is the span of its first row plus, for each later row, its last hit
 * minus the last hit of the row before. The statements run side by side (on separate sessions of
 * the embedded engine, or separate requests to a server). The figures include the page views
 * settled by the last pass (analytics/first-hours.ts).
 */
export async function statisticsTotals(store: Store, query: StatisticsQuery): Promise<Totals> {
  const columns = countColumns(query)
  // Everyone's companies from company_hours, ordered by company: read in order, no hash table. An
  // audience's from its (company, visitor) rows of the range: its visitors' rows are few, and
  // company_hours would be read over every hour to find them.
  const companyRows = hasAudience(query)
    ? rollupScope(query, ` AND ${firstInRange}`, 'first_hours:company_visitor')
    : rollupScope(query, '', 'company_hours')
  const [figures, [companies]] = await Promise.all([
    columns === undefined ? audienceRowTotals(store, query) : countTotals(store, query, columns),
    store.query<Record<string, number>>(
      `${companyRows.with}
      SELECT count() AS companies
      FROM (${hasAudience(query) ? liveCompanies(companyRows.from) : `SELECT DISTINCT company_id ${companyRows.from}`})
      ${oneThreadUnlessAudience(query)}`,
      companyRows.params,
    ),
  ])
  const row = { ...figures, ...companies }
  const number = (value: unknown) => (Number.isFinite(Number(value)) ? Number(value) : 0)
  const range = effectiveRange(query.range)
  return {
    visitors: number(row?.visitors),
    identifiedVisitors: number(row?.identified_visitors),
    companies: number(row?.companies),
    sessions: number(row?.sessions),
    pageViews: number(row?.page_views),
    avgSessionDurationSeconds:
      number(row?.sessions) > 0 ? Math.round(number(row?.session_ms) / number(row?.sessions) / 100) / 10 : 0,
    icpVisitors: number(row?.icp_visitors),
    engagedSeconds: Math.round(number(row?.engaged_ms) / 1000),
    from: range.from,
    to: range.to,
  }
}

const ms = (column: string) => `toInt64(toUnixTimestamp64Milli(${column}))`
/** A session row's share of its session's duration in the range (the sum telescopes). */
const sessionMs = `(${ms('last_hit_at')} - if(${firstInRange}, ${ms('first_hit_at')}, ${ms('previous_last_hit_at')}))`

/**
 * The visitor and session figures of an audience that only rows can count (personaOnly, icpSlug),
 * from its visitor and session rows, side by side.
 */
async function audienceRowTotals(store: Store, query: StatisticsQuery) {
  const v = rollupScope(query, ` AND ${firstInRange}`, 'first_hours:visitor')
  const s = rollupScope(query, '', 'first_hours:session')
  const [[visitors], [sessions]] = await Promise.all([
    store.query<Record<string, number>>(
      `${v.with}
      SELECT sum(sign) AS visitors, sumIf(sign, identified = 1) AS identified_visitors,
        sumIf(sign, icp = 1) AS icp_visitors
      ${v.from}`,
      v.params,
    ),
    store.query<Record<string, number>>(
      `${s.with}
      SELECT sumIf(sign, ${firstInRange}) AS sessions,
        sum(sign * ${sessionMs}) AS session_ms,
        sum(sign * toInt64(page_view_count)) AS page_views,
        sum(sign * toInt64(engaged_ms)) AS engaged_ms
      ${s.from}`,
      s.params,
    ),
  ])
  return { ...visitors, ...sessions }
}

/**
 * The visitors, identified visitors, ICP visitors and session figures of everyone or of the ICP
 * audience, from `first_hour_counts`: the rows of `first_hours` summed by kind, hour and previous
 * hour (a few rows an hour).
 */
async function countTotals(store: Store, query: StatisticsQuery, columns: '' | 'icp_') {
  const s = rollupScope(query, " AND kind IN ('visitor', 'session')", 'first_hour_counts')
  const [row] = await store.query<Record<string, number>>(
    `SELECT
      sumIf(${columns}rows, kind = 'visitor' AND ${firstInRange}) AS visitors,
      sumIf(${columns}identified, kind = 'visitor' AND ${firstInRange}) AS identified_visitors,
      sumIf(icp_rows, kind = 'visitor' AND ${firstInRange}) AS icp_visitors,
      sumIf(${columns}rows, kind = 'session' AND ${firstInRange}) AS sessions,
      sumIf(if(${firstInRange}, ${columns}first_span_ms, ${columns}later_span_ms), kind = 'session') AS session_ms,
      sumIf(${columns}page_view_count, kind = 'session') AS page_views,
      sumIf(${columns}engaged_ms, kind = 'session') AS engaged_ms
    ${s.from}
    ${oneThreadUnlessAudience(query)}`,
    s.params,
  )
  return row
}
