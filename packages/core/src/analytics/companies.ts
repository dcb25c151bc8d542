// The companies list: a page of the companies with visitors in a range, sorted by one figure, each
// with its profile and every figure.

import type { VisitorCompany } from '../companies/present.js'
import type { QueryParams, Store } from '../store/client.js'
import { type CompanyProfile, companyProfiles } from './company-profiles.js'
import {
  firstInRange,
  flagged,
  iso,
  liveCompanies,
  type PageRequest,
  type Rollup,
  rollupScope,
  type StatisticsQuery,
} from './scope.js'

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
  const s = rollupScope(
    query,
    ' AND company_id IN {companyIds:Array(String)}',
    'company_hours',
    pageFlags ? [] : ['icp_matched'],
  )
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
