// The visitors list: a page of the visitors with hits in a range (of one company, or of the
// companies of a domain), last seen first, and how many there are; visitor-rows.ts makes the
// page's rows as the API shows them.
import type { Store } from '../store/client.js'
import { companyNames } from './company-profiles.js'
import {
  countColumns,
  firstInRange,
  flagged,
  hourMs,
  iso,
  type PageRequest,
  type Rollup,
  rollupScope,
  type StatisticsQuery,
} from './scope.js'
import {
  type CompanyNames,
  type PageDetails,
  type VisitorFigures,
  type VisitorStatistics,
  visitorCompanyOf,
  visitorDetails,
  visitorRows,
} from './visitor-rows.js'

export interface VisitorStatisticsQuery extends StatisticsQuery {
  page: PageRequest
  /** Only the hits attributed to this company. */
  companyId?: string | undefined
  /** Only the hits attributed to a company with this domain. */
  domain?: string | undefined
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
