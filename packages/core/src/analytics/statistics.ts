// Company and visitor statistics (spec "Companies and statistics"), read from the hourly rollup
// `traffic_hours` (migration 0010), never from raw page views. Each function is one statement
// for the figures, plus one for the details of the rows of a page (names, contacts, ICP).
//
// Ranges count whole hours, the rollup's grain: `from` is taken back to the start of its hour and
// `to` to the end of its hour (`effectiveRange` says which window was counted). A visitor, a
// session or a company counts in a range when it has hits in it; page views, engaged time and
// session durations are those of the hits in the range.
import { appError } from '../errors.js'
import type { VisitorCompany } from '../services/visitors.js'
import type { Store } from '../store/client.js'
import type { CompanyRow, IcpConfigRow } from '../store/entities.js'
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

/** The rollup rows of the organization in the range, for the audience, as SQL and its parameters. */
export function rollupScope(query: StatisticsQuery, extraWhere = '') {
  const audience = audienceSql(query.configs, query)
  const range = effectiveRange(query.range)
  return {
    with: audience.with,
    from: `FROM traffic_hours
      WHERE organization_id = {organizationId:UUID}
        AND hour >= toStartOfHour({from:DateTime64(3, 'UTC')}) AND hour <= toStartOfHour({to:DateTime64(3, 'UTC')})${audience.where}${extraWhere}`,
    params: { ...audience.params, organizationId: query.organizationId, from: range.from, to: range.to },
    range,
  }
}

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
 * Totals over the range. Three statements run side by side, each one pass over the range's rollup
 * rows: the visitors (all, identified, ICP), the companies and sums, the sessions (their count and
 * durations, which need the rows grouped by session). In one statement the engine made these
 * passes one after the other (86 ms at 10 M page views); side by side, on separate sessions of the
 * embedded engine or separate requests to a server, they take 54 ms. The figures stay exact.
 */
export async function statisticsTotals(store: Store, query: StatisticsQuery): Promise<Totals> {
  const s = rollupScope(query)
  const [[visitors], [companies], [sessions]] = await Promise.all([
    store.query<Record<string, number>>(
      `${s.with}
      SELECT
        uniqExact(visitor_id) AS visitors,
        uniqExactIf(visitor_id, visitor_id IN identified) AS identified_visitors,
        uniqExactIf(visitor_id, visitor_id IN icp_matched) AS icp_visitors
      ${s.from}`,
      s.params,
    ),
    store.query<Record<string, number>>(
      `${s.with}
      SELECT uniqExactIf(company_id, company_id != '') AS companies,
        sum(page_view_count) AS page_views, sum(engaged_ms_sum) AS engaged_ms
      ${s.from}`,
      s.params,
    ),
    store.query<Record<string, number>>(
      `${s.with}
      SELECT count() AS sessions, avg(last - first) AS avg_session_ms FROM (
        SELECT toUnixTimestamp64Milli(min(first_hit_at)) AS first, toUnixTimestamp64Milli(max(last_hit_at)) AS last
        ${s.from} GROUP BY session_id)`,
      s.params,
    ),
  ])
  const row = { ...visitors, ...companies, ...sessions }
  const number = (value: unknown) => (Number.isFinite(Number(value)) ? Number(value) : 0)
  return {
    visitors: number(row?.visitors),
    identifiedVisitors: number(row?.identified_visitors),
    companies: number(row?.companies),
    sessions: number(row?.sessions),
    pageViews: number(row?.page_views),
    avgSessionDurationSeconds: Math.round(number(row?.avg_session_ms) / 100) / 10,
    icpVisitors: number(row?.icp_visitors),
    engagedSeconds: Math.round(number(row?.engaged_ms) / 1000),
    from: s.range.from,
    to: s.range.to,
  }
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
 * so days across a DST change stay days.
 */
export async function visitorsChart(
  store: Store,
  query: StatisticsQuery & { interval: ChartInterval; timezone: string },
): Promise<ChartPoint[]> {
  const s = rollupScope(query)
  const bucket = bucketSql[query.interval]
  const first = bucket.replaceAll('hour, ', "toStartOfHour({from:DateTime64(3, 'UTC')}), ")
  const last = bucket.replaceAll('hour, ', "toStartOfHour({to:DateTime64(3, 'UTC')}), ")
  const rows = await store
    .query<{ at: number; count: number }>(
      `${s.with}
    SELECT toUnixTimestamp(bucket) * 1000 AS at, count FROM (
      SELECT ${bucket} AS bucket, uniqExact(visitor_id) AS count
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
const companySortFigure: Record<CompanySortKey, string> = {
  visitors: 'uniqExact(visitor_id)',
  identifiedVisitors: 'uniqExactIf(visitor_id, visitor_id IN identified)',
  sessions: 'uniqExact(session_id)',
  pageViews: 'sum(page_view_count)',
  firstSeenAt: 'min(first_hit_at)',
  lastSeenAt: 'max(last_hit_at)',
  engagedSeconds: 'sum(engaged_ms_sum)',
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
 * descending unless `order` is `asc`), each with its profile fields and figures.
 */
export async function companyStatistics(
  store: Store,
  query: StatisticsQuery & { page: PageRequest; sort?: CompanySortKey; order?: 'asc' | 'desc' },
): Promise<{ rows: CompanyStatistics[]; total: number }> {
  const s = rollupScope(query, " AND company_id != ''")
  const direction = query.order === 'asc' ? 'ASC' : 'DESC'
  const sort = query.sort ?? 'visitors'
  // The page first, computing only the figure it is sorted by (every company of the range is
  // aggregated here), then every figure for the companies of the page alone.
  const page = await store.query<{ company_id: string; total: number }>(
    `${s.with}
    SELECT company_id, ${companySortFigure[sort]} AS sort_value, max(last_hit_at) AS last_seen,
      count() OVER () AS total
    ${s.from}
    GROUP BY company_id
    ORDER BY sort_value ${direction}, last_seen DESC, company_id
    LIMIT {limit:UInt32} OFFSET {offset:UInt64}`,
    { ...s.params, limit: query.page.limit, offset: (query.page.page - 1) * query.page.limit },
  )
  const total = Number(page[0]?.total ?? (await countCompanies(store, s)))
  const ids = page.map((row) => row.company_id)
  const rows = await companyFiguresOf(store, query, ids)
  const byId = new Map(rows.map((row) => [row.id, row]))
  return { total, rows: ids.map((id) => byId.get(id)).filter((row) => row !== undefined) }
}

/** Every figure of some companies, with their profile fields, in one statement. */
export async function companyFiguresOf(
  store: Store,
  query: StatisticsQuery,
  ids: readonly string[],
): Promise<CompanyStatistics[]> {
  if (ids.length === 0) return []
  const s = rollupScope(query, ' AND company_id IN {companyIds:Array(String)}')
  const rows = await store.query<CompanyFigures & Omit<CompanyProfile, 'id'>>(
    `${s.with}
    SELECT f.*, c.name AS name, c.domain AS domain, c.industry AS industry, c.size AS size,
      c.employee_size_range AS employee_size_range, c.country AS country, c.logo_url AS logo_url
    FROM (
      SELECT company_id,
        uniqExact(visitor_id) AS visitors,
        uniqExactIf(visitor_id, visitor_id IN identified) AS identified_visitors,
        uniqExact(session_id) AS sessions,
        sum(page_view_count) AS page_views,
        min(first_hit_at) AS first_seen,
        max(last_hit_at) AS last_seen,
        sum(engaged_ms_sum) AS engaged_ms,
        uniqExactIf(visitor_id, visitor_id IN icp_matched) AS icp_visitors
      ${s.from}
      GROUP BY company_id
    ) AS f
    LEFT JOIN (
      SELECT id, name, domain, industry, size, employee_size_range, country, logo_url
      FROM companies FINAL WHERE id IN {companyIds:Array(String)}
    ) AS c ON c.id = f.company_id`,
    { ...s.params, companyIds: ids },
  )
  return rows.map(companyStatisticsOf)
}

/** A row of company figures joined to the company's profile, as the API shows it. */
function companyStatisticsOf(row: CompanyFigures & Partial<Omit<CompanyProfile, 'id'>>): CompanyStatistics {
  return {
    id: row.company_id,
    name: row.name || row.company_id,
    domain: row.domain ?? '',
    industry: row.industry ?? '',
    size: row.size ?? '',
    employeeSizeRange: row.employee_size_range ?? '',
    country: row.country ?? '',
    logoUrl: row.logo_url ?? '',
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
    `${s.with} SELECT uniqExact(company_id) AS n ${s.from}`,
    s.params,
  )
  return Number(row?.n ?? 0)
}

/** The company fields a statistics row shows. */
type CompanyProfile = Pick<
  CompanyRow,
  'id' | 'name' | 'domain' | 'industry' | 'size' | 'employee_size_range' | 'country' | 'logo_url'
>

async function companyProfiles(store: Store, ids: readonly string[]): Promise<Map<string, CompanyProfile>> {
  if (ids.length === 0) return new Map()
  const rows = await store.query<CompanyProfile>(
    `SELECT id, name, domain, industry, size, employee_size_range, country, logo_url
     FROM companies FINAL WHERE id IN {ids:Array(String)}`,
    { ids },
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
  const s = rollupScope(query, company.where)
  const params = { ...s.params, ...company.params }
  // The page first (every visitor of the range is aggregated, by last seen alone), then every
  // figure for the visitors of the page.
  const page = await store.query<{ visitor: string; total: number }>(
    `${s.with}
    SELECT toString(visitor_id) AS visitor, max(last_hit_at) AS last_seen, count() OVER () AS total
    ${s.from}
    GROUP BY visitor_id
    ORDER BY last_seen DESC, visitor_id
    LIMIT {limit:UInt32} OFFSET {offset:UInt64}`,
    { ...params, limit: query.page.limit, offset: (query.page.page - 1) * query.page.limit },
  )
  const total =
    page.length > 0
      ? Number(page[0]!.total)
      : Number(
          (
            await store.query<{ n: number }>(`${s.with} SELECT uniqExact(visitor_id) AS n ${s.from}`, params)
          )[0]?.n ?? 0,
        )
  if (page.length === 0) return { total, rows: [] }
  const ids = page.map((row) => row.visitor)
  // A visitor of the page is in the audience with every hit: the figures need no audience filter
  // (whose subqueries would run a second time).
  const everyone = rollupScope(
    { ...query, icpOnly: false, personaOnly: false, icpSlug: undefined },
    company.where,
  )
  const figures = await store.query<VisitorFigures>(
    `${everyone.with}
    SELECT toString(visitor_id) AS visitor,
      uniqExact(session_id) AS sessions,
      sum(page_view_count) AS page_views,
      min(first_hit_at) AS first_seen,
      max(last_hit_at) AS last_seen,
      argMaxIf(company_id, last_hit_at, company_id != '') AS hit_company_id
    ${everyone.from} AND visitor_id IN {pageIds:Array(UUID)}
    GROUP BY visitor_id`,
    { ...everyone.params, ...company.params, pageIds: ids },
  )
  const byId = new Map(figures.map((row) => [row.visitor, row]))
  const ordered = ids.map((id) => byId.get(id)).filter((row) => row !== undefined)
  return { total, rows: await withVisitorDetails(store, query, ordered) }
}

/** Contacts, companies and ICP results of a page of visitors, in one statement. */
async function withVisitorDetails(
  store: Store,
  query: StatisticsQuery,
  figures: readonly VisitorFigures[],
): Promise<VisitorStatistics[]> {
  if (figures.length === 0) return []
  const active = query.configs.filter((config) => config.is_active)
  const [details] = await store.query<VisitorDetails>(
    `SELECT
      (SELECT groupArray((toString(id), email, first_name, last_name, job_title, company_id, identified_at))
         FROM visitors FINAL WHERE organization_id = {organizationId:UUID} AND id IN {ids:Array(UUID)}) AS contacts,
      (SELECT groupArray((toString(visitor_id), config_id, matched, persona))
         FROM icp_scores FINAL
         WHERE organization_id = {organizationId:UUID} AND visitor_id IN {ids:Array(UUID)}
           AND config_id IN {configIds:Array(String)}) AS scores`,
    {
      organizationId: query.organizationId,
      ids: figures.map((row) => row.visitor),
      configIds: active.map((config) => config.id),
    },
  )
  const contacts = new Map((details?.contacts ?? []).map((contact) => [contact[0], contact]))
  const personaConfigs = new Set(active.filter((c) => c.kind === 'organization').map((c) => c.id))
  const icp = new Map<string, { icp: boolean; persona: boolean }>()
  for (const [visitor, configId, matched, persona] of details?.scores ?? []) {
    const entry = icp.get(visitor) ?? { icp: false, persona: false }
    entry.icp ||= Number(matched) === 1
    entry.persona ||= Number(persona) === 1 && personaConfigs.has(configId)
    icp.set(visitor, entry)
  }
  const companyOf = (row: VisitorFigures) => contacts.get(row.visitor)?.[5] || row.hit_company_id
  const profiles = await companyProfiles(store, [...new Set(figures.map(companyOf).filter(Boolean))])
  return figures.map((row) => {
    const contact = contacts.get(row.visitor)
    const companyId = companyOf(row)
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
