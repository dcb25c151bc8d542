// Company and visitor statistics (spec "Companies and statistics"), read from hourly rollups, never
// from raw page views: `first_hours` for distinct counts (each key's active hours next to its
// previous one, migration 0020, settled by analytics/first-hours.ts), `company_hours` for the
// figures of a few companies or one company's visitors, `visitor_hours` for a page of visitors.
//
// Ranges count whole hours, the rollups' grain: `from` is taken back to the start of its hour and
// `to` to the end of its hour (`effectiveRange` says which window was counted). A visitor, a
// session or a company counts in a range when it has hits in it; page views, engaged time and
// session durations are those of the hits in the range.
import { appError } from '../errors.js'
import type { QueryParams, Store } from '../store/client.js'
import type { CompanyRow, IcpConfigRow } from '../store/entities.js'
import type { VisitorCompany } from '../visitor-tracking/visitors.js'
import { type AudienceFilter, audienceSql } from './audience.js'

const hourMs = 3_600_000

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

/** The rows of a rollup of the organization in the range, for the audience, as SQL and its parameters. */
export function rollupScope(query: StatisticsQuery, extraWhere: string, table: Rollup) {
  const [name, kind] = table.split(':')
  // first_hour_counts has no visitors: its readers choose the audience's columns (countColumns).
  const audience = audienceSql(
    query.configs,
    name === 'first_hour_counts' ? {} : query,
    name === 'first_hours',
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
const hasAudience = (query: StatisticsQuery) =>
  Boolean(query.icpOnly || query.personaOnly || query.icpSlug !== undefined)

/**
 * The columns of `first_hour_counts` that sum the request's audience: everyone's (no prefix) or the
 * ICP audience's (`icp_`). Undefined for the audiences only rows can count (personaOnly, icpSlug).
 */
function countColumns(query: StatisticsQuery): '' | 'icp_' | undefined {
  if (query.personaOnly || query.icpSlug !== undefined) return undefined
  return query.icpOnly ? 'icp_' : ''
}

/**
 * For the statements a request runs side by side: one engine thread each, so two or three of them
 * share the cores instead of each asking for all of them. Not for an audience's: probing a
 * config's set row by row is faster on all threads (bench/analytics/RESULTS.md, "Why the code is
 * as it is").
 */
const oneThreadUnlessAudience = (query: StatisticsQuery) =>
  hasAudience(query) ? '' : 'SETTINGS max_threads = 1'

/**
 * A `first_hours` row that is its key's first active hour in the range: the key counts once in the
 * range by it. Rows are summed by `sign` (a row taken back by the settling pass has a -1 twin).
 */
const firstInRange = "previous_hour < toStartOfHour({from:DateTime64(3, 'UTC')})"

/**
 * Whether `first_hours` rows are read through a flag (ICPOnly, personaOnly). A visitor that left the
 * audience leaves its rows there, each with its -1 twin, until a merge collapses them: sums of sign
 * stay right meanwhile, but a key exists only while its signs sum above 0, and its first and last
 * hits are those of its live rows. (Everyone's rows, and a config's set of visitors, keep every
 * visitor's rows together: a row taken back there is replaced by one with the same hits or more.)
 */
const flagged = (query: StatisticsQuery) => Boolean(query.icpOnly || query.personaOnly)

/** The companies of some `first_hours` rows (`from`) with a live row. */
const liveCompanies = (from: string) => `SELECT company_id ${from} GROUP BY company_id HAVING sum(sign) > 0`

const iso = (value: string | number) =>
  new Date(typeof value === 'number' ? value : Date.parse(value)).toISOString()

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

export type ChartInterval = 'hour' | 'day' | 'week'

/** The bucket a range gets: hours up to 2 days, days up to 90 days, weeks beyond. */
export function chartIntervalFor(range: TimeRange): ChartInterval {
  const days = (Date.parse(range.to) - Date.parse(range.from)) / 86_400_000
  if (days <= 2) return 'hour'
  if (days <= 90) return 'day'
  return 'week'
}

const bucketSql: Record<ChartInterval, string> = {
  hour: 'toStartOfHour(toTimeZone(hour, {timezone:String}))',
  day: 'toStartOfDay(toTimeZone(hour, {timezone:String}))',
  week: 'toDateTime(toMonday(toTimeZone(hour, {timezone:String})), {timezone:String})',
}
const stepSql: Record<ChartInterval, string> = {
  hour: 'INTERVAL 1 HOUR',
  day: 'INTERVAL 1 DAY',
  week: 'INTERVAL 1 WEEK',
}

export interface ChartPoint {
  /** Start of the bucket, ISO 8601 UTC. */
  timestamp: string
  /** Distinct visitors with hits in the bucket. */
  count: number
}

/**
 * Distinct visitors per bucket (hour, day or Monday-based week in `timezone`, an IANA name), every
 * bucket of the range present (0 when empty): filled by the engine in the time zone's calendar,
 * so days across a DST change stay days. A visitor counts in a bucket by its first active hour
 * there: the `first_hours` row whose previous active hour is before the bucket (or the range).
 */
export async function visitorsChart(
  store: Store,
  query: StatisticsQuery & { interval: ChartInterval; timezone: string },
): Promise<ChartPoint[]> {
  // Everyone and the ICP audience from the sums of first_hours rows, another audience from its rows.
  const columns = countColumns(query)
  const s = rollupScope(
    query,
    '',
    columns === undefined ? 'first_hours:visitor' : 'first_hour_counts:visitor',
  )
  const bucket = bucketSql[query.interval]
  const first = bucket.replaceAll('hour, ', "toStartOfHour({from:DateTime64(3, 'UTC')}), ")
  const last = bucket.replaceAll('hour, ', "toStartOfHour({to:DateTime64(3, 'UTC')}), ")
  const rows = await store
    .query<{ at: number; count: number }>(
      `${s.with}
    SELECT toUnixTimestamp(bucket) * 1000 AS at, count FROM (
      SELECT ${bucket} AS bucket,
        sumIf(${columns === undefined ? 'sign' : `${columns}rows`}, toUnixTimestamp(previous_hour) < greatest(toUnixTimestamp(bucket),
          toUnixTimestamp(toStartOfHour({from:DateTime64(3, 'UTC')})))) AS count
      ${s.from}
      GROUP BY bucket
      ORDER BY bucket WITH FILL FROM ${first} TO ${last} + ${stepSql[query.interval]} STEP ${stepSql[query.interval]}
    )`,
      { ...s.params, timezone: query.timezone },
    )
    .catch((error: unknown) => {
      if (/time ?zone/i.test(String((error as Error)?.message))) {
        throw appError('invalid_request', `Unknown time zone "${query.timezone}"`)
      }
      throw error
    })
  return rows.map((row) => ({ timestamp: iso(Number(row.at)), count: Number(row.count) }))
}

export const companySortKeys = [
  'visitors',
  'identifiedVisitors',
  'sessions',
  'pageViews',
  'firstSeenAt',
  'lastSeenAt',
  'engagedSeconds',
] as const
export type CompanySortKey = (typeof companySortKeys)[number]
/**
 * What a companies page is sorted by, from `first_hours` (no hash table of visitors or sessions):
 * a company's visitors are its (company, visitor) rows of their first hour in the range, its
 * sessions its (company, session) rows likewise, its sums those of its (company, visitor) rows. A
 * row taken back by the settling pass carries a later first hit and an earlier last hit than the
 * row that replaced it (a key's hour only gains hits), so min and max over every row are right.
 * A flagged audience's rows are grouped by (company, visitor) pair first, its live pairs kept
 * (`flagged`), and `combine` makes a company's figure of its pairs' ones.
 */
const companySortFigure: Record<
  CompanySortKey,
  { rows: Rollup; figure: string; combine: 'sum' | 'min' | 'max' }
> = {
  visitors: { rows: 'first_hours:company_visitor', figure: `sumIf(sign, ${firstInRange})`, combine: 'sum' },
  identifiedVisitors: {
    rows: 'first_hours:company_visitor',
    figure: `sumIf(sign, ${firstInRange} AND identified = 1)`,
    combine: 'sum',
  },
  sessions: { rows: 'first_hours:company_session', figure: `sumIf(sign, ${firstInRange})`, combine: 'sum' },
  pageViews: {
    rows: 'first_hours:company_visitor',
    figure: 'sum(sign * toInt64(page_view_count))',
    combine: 'sum',
  },
  firstSeenAt: { rows: 'first_hours:company_visitor', figure: 'min(first_hit_at)', combine: 'min' },
  lastSeenAt: { rows: 'first_hours:company_visitor', figure: 'max(last_hit_at)', combine: 'max' },
  engagedSeconds: {
    rows: 'first_hours:company_visitor',
    figure: 'sum(sign * toInt64(engaged_ms))',
    combine: 'sum',
  },
}

export interface CompanyStatistics
  extends Pick<
    VisitorCompany,
    'id' | 'name' | 'domain' | 'industry' | 'size' | 'employeeSizeRange' | 'country' | 'logoUrl'
  > {
  visitors: number
  identifiedVisitors: number
  sessions: number
  pageViews: number
  firstSeenAt: string
  lastSeenAt: string
  engagedSeconds: number
  icpMatch: boolean
}

interface CompanyFigures {
  company_id: string
  visitors: number
  identified_visitors: number
  sessions: number
  page_views: number
  first_seen: string
  last_seen: string
  engaged_ms: number
  icp_visitors: number
}

/**
 * Companies with visitors in the range, a page of them: by visitors, then last seen (or `sort`,
 * descending unless `order` is `asc`), each with its profile fields and figures. The page first,
 * computing only the figure it is sorted by over every company of the range, then every figure of
 * the page's companies alone.
 */
export async function companyStatistics(
  store: Store,
  query: StatisticsQuery & { page: PageRequest; sort?: CompanySortKey; order?: 'asc' | 'desc' },
): Promise<{ rows: CompanyStatistics[]; total: number }> {
  const direction = query.order === 'asc' ? 'ASC' : 'DESC'
  const sort = companySortFigure[query.sort ?? 'visitors']
  const s = rollupScope(query, '', sort.rows)
  // From the (company, visitor) rows, the page's identified and ICP visitors too (flagged by the
  // settling pass): no set of the organization's identified or matched visitors to read.
  const pairs = sort.rows === 'first_hours:company_visitor'
  const identifiedFigure = companySortFigure.identifiedVisitors.figure
  const icpFigure = `sumIf(sign, ${firstInRange} AND icp = 1)`
  // A flagged audience's figures by (company, visitor) pair first, of its live pairs only.
  const select = flagged(query)
    ? `SELECT company_id, ${sort.combine}(pair_value) AS sort_value, max(pair_last_seen) AS last_seen,
        count() OVER () AS total
        ${pairs ? ', sum(pair_identified) AS identified_visitors, sum(pair_icp) AS icp_visitors' : ''}
      FROM (
        SELECT company_id, ${sort.figure} AS pair_value, max(last_hit_at) AS pair_last_seen
          ${pairs ? `, ${identifiedFigure} AS pair_identified, ${icpFigure} AS pair_icp` : ''}
        ${s.from}
        GROUP BY company_id, visitor_id
        HAVING sum(sign) > 0
      )`
    : `SELECT company_id, ${sort.figure} AS sort_value, max(last_hit_at) AS last_seen, count() OVER () AS total
        ${pairs ? `, ${identifiedFigure} AS identified_visitors, ${icpFigure} AS icp_visitors` : ''}
      ${s.from}`
  const page = await store.query<{
    company_id: string
    total: number
    identified_visitors?: number
    icp_visitors?: number
  }>(
    `${s.with}
    ${select}
    GROUP BY company_id
    ORDER BY sort_value ${direction}, last_seen DESC, company_id
    LIMIT {limit:UInt32} OFFSET {offset:UInt64}`,
    { ...s.params, limit: query.page.limit, offset: (query.page.page - 1) * query.page.limit },
  )
  const total = Number(page[0]?.total ?? (await countCompanies(store, s)))
  const ids = page.map((row) => row.company_id)
  const flags = pairs
    ? new Map(
        page.map((row) => [
          row.company_id,
          { identified: Number(row.identified_visitors), icp: Number(row.icp_visitors) },
        ]),
      )
    : undefined
  const byId = new Map((await companyFiguresOf(store, query, ids, flags)).map((row) => [row.id, row]))
  return { total, rows: ids.map((id) => byId.get(id)).filter((row) => row !== undefined) }
}

/**
 * Every figure of some companies, with their profile fields: their `company_hours` rows alone (a
 * page of companies is a few thousand rows however many the range holds). Statements side by side:
 * the figures, the profiles and, unless the page gave them (`pageFlags`: from its rows' flags), the
 * identified visitors (among the identified visitors of these companies' visitors only).
 */
async function companyFiguresOf(
  store: Store,
  query: StatisticsQuery,
  ids: readonly string[],
  pageFlags?: ReadonlyMap<string, { identified: number; icp: number }>,
): Promise<CompanyStatistics[]> {
  if (ids.length === 0) return []
  const s = rollupScope(query, ' AND company_id IN {companyIds:Array(String)}', 'company_hours')
  const params = { ...s.params, companyIds: ids }
  const [figures, identified, profiles] = await Promise.all([
    store.query<CompanyFigures>(
      `${s.with}
      SELECT company_id,
        uniqExact(visitor_id) AS visitors,
        uniqExact(session_id) AS sessions,
        sum(page_view_count) AS page_views,
        min(first_hit_at) AS first_seen,
        max(last_hit_at) AS last_seen,
        sum(engaged_ms_sum) AS engaged_ms
        ${pageFlags ? '' : ', uniqExactIf(visitor_id, visitor_id IN icp_matched) AS icp_visitors'}
      ${s.from}
      GROUP BY company_id`,
      params,
    ),
    pageFlags
      ? new Map([...pageFlags].map(([id, figures]) => [id, figures.identified]))
      : identifiedVisitorsOf(store, s, params),
    companyProfiles(store, ids),
  ])
  return figures.map((row) =>
    companyStatisticsOf(
      {
        ...row,
        identified_visitors: identified.get(row.company_id) ?? 0,
        icp_visitors: pageFlags?.get(row.company_id)?.icp ?? row.icp_visitors,
      },
      profiles.get(row.company_id),
    ),
  )
}

/** The identified visitors of the companies of `s` (`company_hours`), by company. */
async function identifiedVisitorsOf(
  store: Store,
  s: ReturnType<typeof rollupScope>,
  params: QueryParams,
): Promise<Map<string, number>> {
  const rows = await store.query<{ company_id: string; identified_visitors: number }>(
    `${s.with}
      SELECT company_id, uniqExact(visitor_id) AS identified_visitors
      ${s.from} AND visitor_id IN (
        SELECT id FROM visitors FINAL
        WHERE organization_id = {organizationId:UUID} AND identified_at IS NOT NULL
          AND id IN (SELECT visitor_id ${s.from}))
      GROUP BY company_id`,
    params,
  )
  return new Map(rows.map((row) => [row.company_id, Number(row.identified_visitors)]))
}

/** A row of company figures with the company's profile, as the API shows it. */
function companyStatisticsOf(row: CompanyFigures, profile: CompanyProfile | undefined): CompanyStatistics {
  return {
    id: row.company_id,
    name: profile?.name || row.company_id,
    domain: profile?.domain ?? '',
    industry: profile?.industry ?? '',
    size: profile?.size ?? '',
    employeeSizeRange: profile?.employee_size_range ?? '',
    country: profile?.country ?? '',
    logoUrl: profile?.logo_url ?? '',
    visitors: Number(row.visitors),
    identifiedVisitors: Number(row.identified_visitors),
    sessions: Number(row.sessions),
    pageViews: Number(row.page_views),
    firstSeenAt: iso(row.first_seen),
    lastSeenAt: iso(row.last_seen),
    engagedSeconds: Math.round(Number(row.engaged_ms) / 1000),
    icpMatch: Number(row.icp_visitors) > 0,
  }
}

/** The total when the page asked for is past the end (no row carries it). */
async function countCompanies(store: Store, s: ReturnType<typeof rollupScope>): Promise<number> {
  const [row] = await store.query<{ n: number }>(
    `${s.with} SELECT count() AS n FROM (${liveCompanies(s.from)})`,
    s.params,
  )
  return Number(row?.n ?? 0)
}

/** The company fields a statistics row shows. */
type CompanyProfile = Pick<
  CompanyRow,
  'id' | 'name' | 'domain' | 'industry' | 'size' | 'employee_size_range' | 'country' | 'logo_url'
>

/** The profiles of some companies, by id. */
const companyProfiles = (store: Store, ids: readonly string[]) =>
  companiesById<CompanyProfile>(
    store,
    ids,
    'id, name, domain, industry, size, employee_size_range, country, logo_url',
  )

/**
 * The names and domains of some companies, by id: only the two columns a visitors page shows, since
 * a point read pays for every column it selects (bench/analytics/RESULTS.md, "Why the code is as
 * it is").
 */
const companyNames = (store: Store, ids: readonly string[]) =>
  companiesById<Pick<CompanyProfile, 'id' | 'name' | 'domain'>>(store, ids, 'id, name, domain')

async function companiesById<T extends { id: string }>(
  store: Store,
  ids: readonly string[],
  columns: string,
): Promise<Map<string, T>> {
  if (ids.length === 0) return new Map()
  const rows = await store.query<T>(
    `SELECT ${columns} FROM companies FINAL WHERE id IN {ids:Array(String)}`,
    {
      ids,
    },
  )
  return new Map(rows.map((row) => [row.id, row]))
}

export interface VisitorStatistics {
  id: string
  email: string
  firstName: string
  lastName: string
  jobTitle: string
  company: { id: string; name: string; domain: string } | null
  sessions: number
  pageViews: number
  firstSeenAt: string
  lastSeenAt: string
  identifiedAt: string | null
  icp: boolean
  personaMatch: boolean
}

export interface VisitorStatisticsQuery extends StatisticsQuery {
  page: PageRequest
  /** Only the hits attributed to this company. */
  companyId?: string | undefined
  /** Only the hits attributed to a company with this domain. */
  domain?: string | undefined
}

interface VisitorFigures {
  visitor: string
  sessions: number
  page_views: number
  first_seen: string
  last_seen: string
  hit_company_id: string
}

interface VisitorDetails {
  contacts: [string, string, string, string, string, string, string | null][]
  scores: [string, string, number, number][]
}

/** Where visitors' figures are read: all their hits by visitor, or some companies' by company. */
export const visitorFiguresRollup = (company: { where: string }): Rollup =>
  company.where === '' ? 'visitor_hours' : 'company_hours'

/** The hits of one company, or of the companies with a domain (imported, or named by DNS). */
export function visitorCompanyFilter(query: { companyId?: string | undefined; domain?: string | undefined }) {
  if (query.companyId !== undefined) {
    return { where: ' AND company_id = {companyId:String}', params: { companyId: query.companyId } }
  }
  if (query.domain !== undefined) {
    const domain = query.domain.trim().toLowerCase()
    return {
      where: ` AND (company_id = {dnsCompanyId:String}
        OR company_id IN (SELECT id FROM companies FINAL WHERE domain = {domain:String}))`,
      params: { domain, dnsCompanyId: `dns:${domain}` },
    }
  }
  return { where: '', params: {} }
}

/** Visitors with hits in the range (of one company, or of companies with a domain), last seen first. */
export async function visitorStatistics(
  store: Store,
  query: VisitorStatisticsQuery,
): Promise<{ rows: VisitorStatistics[]; total: number }> {
  const company = visitorCompanyFilter(query)
  // A visitor of the page is in the audience with every hit: the figures need no audience filter
  // (whose subqueries would run a second time).
  const everyone = rollupScope(
    { ...query, icpOnly: false, personaOnly: false, icpSlug: undefined },
    company.where,
    visitorFiguresRollup(company),
  )
  // The page's figures beside its contacts and ICP results, then the names of the companies they
  // name (the contacts' companies, and those of the visitors' last hits in the range).
  const figures: PageFigures = async (ids) => {
    const [rows, details] = await Promise.all([
      store.query<VisitorFigures>(
        `SELECT toString(visitor_id) AS visitor,
          uniqExact(session_id) AS sessions,
          sum(page_view_count) AS page_views,
          min(first_hit_at) AS first_seen,
          max(last_hit_at) AS last_seen,
          argMaxIf(company_id, last_hit_at, company_id != '') AS hit_company_id
        ${everyone.from} AND visitor_id IN {pageIds:Array(UUID)}
        GROUP BY visitor_id
        ORDER BY last_seen DESC, visitor_id`,
        { ...everyone.params, ...company.params, pageIds: ids },
      ),
      visitorDetails(store, query, ids),
    ])
    const named = new Set(rows.map((row) => visitorCompanyOf(row, details.contacts)).filter(Boolean))
    return [rows, details, await companyNames(store, [...named])]
  }
  const page =
    company.where === ''
      ? await visitorsPageByFirstHours(store, query, figures)
      : await visitorsPageOfCompanies(store, query, company, figures)
  return { total: page.total, rows: page.rows ? visitorRows(...page.rows) : [] }
}

type CompanyFilter = ReturnType<typeof visitorCompanyFilter>

/** The figures of a page's visitors (last seen first), their contacts and ICP results, the names of their companies. */
type PageFigures = (ids: readonly string[]) => Promise<[VisitorFigures[], PageDetails, CompanyNames]>

/** Company profiles by id, for their names and domains. */
type CompanyNames = ReadonlyMap<string, Pick<CompanyProfile, 'name' | 'domain'>>

interface VisitorsPage {
  /** The page's visitors with their figures, in order, and their details; none past the end. */
  rows: [VisitorFigures[], PageDetails, CompanyNames] | undefined
  total: number
}

/** The window a visitors page is first looked for in: the last hours of the range. */
const pageGuessHours = 6

/**
 * A page of visitors by last seen, from the visitor rows of `first_hours`, without grouping every
 * visitor of the range: the page's visitors are the last seen of the shortest window ending with
 * the range that holds enough of them (a visitor seen in it was seen after every visitor outside
 * it), so only that window's rows are grouped by visitor. The last six hours first, side by side
 * with the total (the rows of each visitor's first active hour in the range), which the page's
 * figures do not wait for. Fewer visitors there than the page needs: visitors active from hour H
 * to the end of the range number the rows there whose previous active hour is before H, so one
 * pass over the range's rows gives that number for every H (a sum of +sign at each row's hour and
 * -sign at its previous hour, over the points from H on) and the window to group.
 */
async function visitorsPageByFirstHours(
  store: Store,
  query: VisitorStatisticsQuery,
  figures: PageFigures,
): Promise<VisitorsPage> {
  const s = rollupScope(query, '', 'first_hours:visitor')
  const offset = (query.page.page - 1) * query.page.limit
  const wanted = offset + query.page.limit
  /** The page within the window from `from` to the end of the range, and how many visitors it holds. */
  const pageFrom = async (from: number) => {
    const window = rollupScope(
      { ...query, range: { from: iso(from), to: query.range.to } },
      '',
      'first_hours:visitor',
    )
    const page = await store.query<{ visitor: string; held: number }>(
      `${window.with}
      SELECT toString(visitor_id) AS visitor, count() OVER () AS held ${window.from}
      GROUP BY visitor_id
      ${flagged(query) ? 'HAVING sum(sign) > 0' : ''}
      ORDER BY max(last_hit_at) DESC, visitor_id
      LIMIT {limit:UInt32} OFFSET {offset:UInt64}`,
      { ...window.params, limit: query.page.limit, offset },
    )
    // No row: the page is past the window's visitors (their number is unknown, and too small).
    return { ids: page.map((row) => row.visitor), held: Number(page[0]?.held ?? 0) }
  }
  const figuresOf = async (ids: string[]) => (ids.length > 0 ? figures(ids) : undefined)
  const rangeFrom = Date.parse(s.range.from)
  const guessFrom = Math.max(rangeFrom, Date.parse(s.range.to) + 1 - pageGuessHours * hourMs)
  const columns = countColumns(query)
  const counted = (
    columns === undefined
      ? store.query<{ n: number }>(`${s.with} SELECT sum(sign) AS n ${s.from} AND ${firstInRange}`, s.params)
      : store.query<{ n: number }>(
          `SELECT sum(${columns}rows) AS n ${rollupScope(query, '', 'first_hour_counts:visitor').from} AND ${firstInRange}`,
          s.params,
        )
  ).then(([count]) => Number(count?.n ?? 0))
  // Awaited below; a failure meanwhile must not go unhandled.
  counted.catch(() => {})
  const guess = await pageFrom(guessFrom)
  if (guess.held >= wanted || guessFrom === rangeFrom) {
    // The page is in the window: its figures need not wait for the total.
    const [rows, total] = await Promise.all([figuresOf(guess.ids), counted])
    return { rows, total }
  }
  const total = await counted
  if (offset >= total) return { rows: undefined, total }
  const points = await store.query<{ at: number; delta: number }>(
    `${s.with}
    SELECT toUnixTimestamp(change.1) AS at, sum(change.2) AS delta
    FROM (SELECT arrayJoin([(hour, toInt64(sign)), (previous_hour, -toInt64(sign))]) AS change ${s.from})
    WHERE at >= toUnixTimestamp(toStartOfHour({from:DateTime64(3, 'UTC')}))
    GROUP BY at
    ORDER BY at DESC`,
    s.params,
  )
  let visitors = 0
  let windowFrom = rangeFrom
  for (const point of points) {
    visitors += Number(point.delta)
    if (visitors >= wanted) {
      windowFrom = Number(point.at) * 1000
      break
    }
  }
  return { rows: await figuresOf((await pageFrom(windowFrom)).ids), total }
}

/**
 * A page of the visitors of one company (or of the companies of a domain) by last seen, from those
 * companies' `company_hours` rows alone: a company's visitors are few next to the range's.
 */
async function visitorsPageOfCompanies(
  store: Store,
  query: VisitorStatisticsQuery,
  company: CompanyFilter,
  figures: PageFigures,
): Promise<VisitorsPage> {
  // A flagged audience's visitors from its (company, visitor) rows, kept apart from everyone's: a
  // company's rows in company_hours would each be probed against the audience's set.
  const live = flagged(query) ? 'HAVING sum(sign) > 0' : ''
  const s = rollupScope(query, company.where, live ? 'first_hours:company_visitor' : 'company_hours')
  const params = { ...s.params, ...company.params }
  const page = await store.query<{ visitor: string; total: number }>(
    `${s.with}
    SELECT toString(visitor_id) AS visitor, max(last_hit_at) AS last_seen, count() OVER () AS total
    ${s.from}
    GROUP BY visitor_id
    ${live}
    ORDER BY last_seen DESC, visitor_id
    LIMIT {limit:UInt32} OFFSET {offset:UInt64}`,
    { ...params, limit: query.page.limit, offset: (query.page.page - 1) * query.page.limit },
  )
  if (page.length > 0) {
    return { rows: await figures(page.map((row) => row.visitor)), total: Number(page[0]!.total) }
  }
  const [count] = await store.query<{ n: number }>(
    `${s.with} SELECT count() AS n FROM (SELECT visitor_id ${s.from} GROUP BY visitor_id ${live})`,
    params,
  )
  return { rows: undefined, total: Number(count?.n ?? 0) }
}

/** The contacts and ICP results of a page of visitors. */
interface PageDetails {
  contacts: Map<string, VisitorDetails['contacts'][number]>
  icp: Map<string, { icp: boolean; persona: boolean }>
}

/** Contacts and ICP results of a page of visitors, in one statement. */
async function visitorDetails(
  store: Store,
  query: StatisticsQuery,
  ids: readonly string[],
): Promise<PageDetails> {
  const active = query.configs.filter((config) => config.is_active)
  const [details] = await store.query<VisitorDetails>(
    `SELECT
      (SELECT groupArray((toString(id), email, first_name, last_name, job_title, company_id, identified_at))
         FROM visitors FINAL WHERE organization_id = {organizationId:UUID} AND id IN {ids:Array(UUID)}) AS contacts,
      (SELECT groupArray((toString(visitor_id), config_id, matched, persona))
         FROM icp_scores FINAL
         WHERE organization_id = {organizationId:UUID} AND visitor_id IN {ids:Array(UUID)}
           AND config_id IN {configIds:Array(String)}) AS scores`,
    { organizationId: query.organizationId, ids, configIds: active.map((config) => config.id) },
  )
  const personaConfigs = new Set(active.filter((c) => c.kind === 'organization').map((c) => c.id))
  const icp = new Map<string, { icp: boolean; persona: boolean }>()
  for (const [visitor, configId, matched, persona] of details?.scores ?? []) {
    const entry = icp.get(visitor) ?? { icp: false, persona: false }
    entry.icp ||= Number(matched) === 1
    entry.persona ||= Number(persona) === 1 && personaConfigs.has(configId)
    icp.set(visitor, entry)
  }
  return { contacts: new Map((details?.contacts ?? []).map((contact) => [contact[0], contact])), icp }
}

/** A visitor's company: its contact's, else the one of its last hit with a company. */
const visitorCompanyOf = (row: VisitorFigures, contacts: PageDetails['contacts']) =>
  contacts.get(row.visitor)?.[5] || row.hit_company_id

/**
 * A page of visitors as the API shows them: figures, contacts and ICP results, and the company (the
 * contact's, else the one of the visitor's last hit with a company) with its name and domain.
 */
function visitorRows(
  figures: readonly VisitorFigures[],
  { contacts, icp }: PageDetails,
  profiles: CompanyNames,
): VisitorStatistics[] {
  return figures.map((row) => {
    const contact = contacts.get(row.visitor)
    const companyId = visitorCompanyOf(row, contacts)
    const profile = profiles.get(companyId)
    return {
      id: row.visitor,
      email: contact?.[1] ?? '',
      firstName: contact?.[2] ?? '',
      lastName: contact?.[3] ?? '',
      jobTitle: contact?.[4] ?? '',
      company: companyId
        ? { id: companyId, name: profile?.name || companyId, domain: profile?.domain ?? '' }
        : null,
      sessions: Number(row.sessions),
      pageViews: Number(row.page_views),
      firstSeenAt: iso(row.first_seen),
      lastSeenAt: iso(row.last_seen),
      identifiedAt: contact?.[6] ? iso(contact[6]) : null,
      icp: icp.get(row.visitor)?.icp ?? false,
      personaMatch: icp.get(row.visitor)?.persona ?? false,
    }
  })
}
