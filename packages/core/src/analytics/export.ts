// The rows of a statistics download (GET /companies/download), as an async iterable read a page
// at a time, so memory stays flat however many rows the range holds: companies a page of ids at a
// time (from company_hours, ordered by company), then their figures as the list reads them;
// visitors a slice at a time (a hash of the id) from visitor_hours (or the companies'
// company_hours), one statement per slice with the details joined in.
import type { Store } from '../store/client.js'
import {
  type CompanyStatistics,
  companyFiguresOf,
  rollupScope,
  type StatisticsQuery,
  type VisitorStatistics,
  visitorCompanyFilter,
  visitorFiguresRollup,
} from './statistics.js'

const iso = (value: string) => new Date(Date.parse(value)).toISOString()

/** Every company of the statistics, by id: a page of ids, then their figures (as the list reads them). */
export async function* exportCompanyStatistics(
  store: Store,
  query: StatisticsQuery,
  pageSize = 5_000,
): AsyncGenerator<CompanyStatistics> {
  const s = rollupScope(query, ' AND company_id > {after:String}', 'company_hours')
  let after = ''
  for (;;) {
    const ids = (
      await store.query<{ company_id: string }>(
        `${s.with} SELECT DISTINCT company_id ${s.from} ORDER BY company_id LIMIT {pageSize:UInt32}`,
        { ...s.params, after, pageSize },
      )
    ).map((row) => row.company_id)
    const rows = await companyFiguresOf(store, query, ids)
    rows.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    yield* rows
    if (ids.length < pageSize) return
    after = ids.at(-1)!
  }
}

/** Every visitor of the statistics (of one company, or of companies with a domain), by id within each slice. */
export async function* exportVisitorStatistics(
  store: Store,
  query: StatisticsQuery & { companyId?: string | undefined; domain?: string | undefined },
  pageSize = 50_000,
): AsyncGenerator<VisitorStatistics> {
  const company = visitorCompanyFilter(query)
  // Pages are slices of the visitors by a hash of their id, not runs of ids: each page's pass
  // aggregates only its own visitors (a run of ids after the last one would aggregate every
  // visitor still to come, page after page). The slice count comes from an estimate of the
  // visitors; a slice holds about `pageSize` of them.
  const rollup = visitorFiguresRollup(company)
  const all = rollupScope(query, company.where, rollup)
  const [estimate] = await store.query<{ n: number }>(
    `${all.with} SELECT uniq(visitor_id) AS n ${all.from}`,
    {
      ...all.params,
      ...company.params,
    },
  )
  const slices = Math.max(1, Math.ceil(Number(estimate?.n ?? 0) / pageSize))
  // The slice's visitors wherever a visitor id is read: each slice joins its own visitors and
  // scores, not the organization's.
  const inSlice = (column: string) => `cityHash64(${column}) % {slices:UInt64} = {slice:UInt64}`
  const s = rollupScope(query, `${company.where} AND ${inSlice('visitor_id')}`, rollup)
  const active = query.configs.filter((config) => config.is_active)
  const sliceRows = (slice: number) =>
    store.query<Record<string, string | number | null>>(
      `${s.with}
        SELECT toString(f.visitor_id) AS visitor, f.sessions AS sessions, f.page_views AS page_views,
          f.first_seen AS first_seen, f.last_seen AS last_seen,
          v.email AS email, v.first_name AS first_name, v.last_name AS last_name, v.job_title AS job_title,
          v.identified_at AS identified_at,
          if(v.company_id != '', v.company_id, f.hit_company_id) AS company_id,
          c.name AS company_name, c.domain AS company_domain,
          s.icp AS icp, s.persona AS persona
        FROM (
          SELECT visitor_id,
            uniqExact(session_id) AS sessions,
            sum(page_view_count) AS page_views,
            min(first_hit_at) AS first_seen,
            max(last_hit_at) AS last_seen,
            argMaxIf(company_id, last_hit_at, company_id != '') AS hit_company_id
          ${s.from}
          GROUP BY visitor_id
        ) AS f
        LEFT JOIN (
          SELECT id, email, first_name, last_name, job_title, company_id, identified_at
          FROM visitors FINAL WHERE organization_id = {organizationId:UUID} AND ${inSlice('id')}
        ) AS v ON v.id = f.visitor_id
        LEFT JOIN (SELECT id, name, domain FROM companies FINAL) AS c
          ON c.id = if(v.company_id != '', v.company_id, f.hit_company_id)
        LEFT JOIN (
          SELECT visitor_id, max(matched) AS icp, max(persona AND config_id IN {personaConfigIds:Array(String)}) AS persona
          FROM icp_scores FINAL
          WHERE organization_id = {organizationId:UUID} AND config_id IN {icpConfigIds:Array(String)}
            AND ${inSlice('visitor_id')}
          GROUP BY visitor_id
        ) AS s ON s.visitor_id = f.visitor_id
        ORDER BY f.visitor_id`,
      { ...s.params, ...company.params, slices, slice, icpConfigIds: active.map((config) => config.id) },
    )
  // The next slice is asked for before this one is written out: the engine computes it while the
  // rows of this one become CSV (two slices in memory at most, whatever the download's size).
  let next = sliceRows(0)
  try {
    for (let slice = 0; slice < slices; slice++) {
      const rows = await next
      if (slice + 1 < slices) next = sliceRows(slice + 1)
      for (const row of rows) {
        const companyId = String(row.company_id ?? '')
        yield {
          id: String(row.visitor),
          email: String(row.email ?? ''),
          firstName: String(row.first_name ?? ''),
          lastName: String(row.last_name ?? ''),
          jobTitle: String(row.job_title ?? ''),
          company: companyId
            ? {
                id: companyId,
                name: String(row.company_name || companyId),
                domain: String(row.company_domain ?? ''),
              }
            : null,
          sessions: Number(row.sessions),
          pageViews: Number(row.page_views),
          firstSeenAt: iso(String(row.first_seen)),
          lastSeenAt: iso(String(row.last_seen)),
          identifiedAt: row.identified_at ? iso(String(row.identified_at)) : null,
          icp: Number(row.icp) === 1,
          personaMatch: Number(row.persona) === 1,
        }
      }
    }
  } finally {
    // A download the client left: the slice asked for ahead may still fail, unheard.
    next.catch(() => {})
  }
}
