// The rows of a statistics download (GET /companies/download), read a page at a time, so memory
// stays flat however many rows the range holds: companies a page of ids at a time (from
// company_hours, ordered by company), then their figures as the list reads them; visitors as CSV
// lines the engine writes, a slice of visitor ids at a time from visitor_hours (or the companies'
// company_hours), one statement per slice with the details joined in.
import { csvCellSql, isoCellSql } from '../csv.js'
import type { Store } from '../store/client.js'
import {
  type CompanyStatistics,
  companyFiguresOf,
  rollupScope,
  type StatisticsQuery,
  visitorCompanyFilter,
  visitorFiguresRollup,
} from './statistics.js'

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

/**
 * The columns of a visitors download, in order, as the engine writes their cells: the fields of a
 * visitors list row, its company flattened (`companyId`, `companyName`, `companyDomain`), each cell
 * as `csvCell` writes the list's value (ISO 8601 times, `true`/`false`, empty for none).
 */
const visitorCells = {
  id: 'toString(visitor_id)',
  email: csvCellSql('email'),
  firstName: csvCellSql('first_name'),
  lastName: csvCellSql('last_name'),
  jobTitle: csvCellSql('job_title'),
  companyId: csvCellSql('company_id'),
  // A company without a profile is named by its id, as in the lists.
  companyName: csvCellSql("if(company_name != '', company_name, company_id)"),
  companyDomain: csvCellSql('company_domain'),
  sessions: 'toString(sessions)',
  pageViews: 'toString(page_views)',
  firstSeenAt: isoCellSql('first_seen'),
  lastSeenAt: isoCellSql('last_seen'),
  identifiedAt: `if(isNull(identified_at), '', ${isoCellSql('assumeNotNull(identified_at)')})`,
  icp: "if(icp = 1, 'true', 'false')",
  personaMatch: "if(persona = 1, 'true', 'false')",
} as const

export type VisitorCsvField = keyof typeof visitorCells
/** The columns of a visitors download, in their default order. */
export const visitorCsvFields = Object.keys(visitorCells) as VisitorCsvField[]

/** How many visitor ids the download samples to cut its slices (16 bytes each). */
const sliceSample = 4096

/**
 * Every visitor of the statistics (of one company, or of companies with a domain) as CSV lines
 * (CRLF-ended, no header), by visitor id: the engine writes the lines, a slice of about `pageSize`
 * visitors per statement, so no row becomes a JS object (50,000 rows as JSON objects cost four
 * times the query that computed them). The text of a slice is yielded whole; the next slice is
 * computed meanwhile.
 */
export async function* exportVisitorCsv(
  store: Store,
  query: StatisticsQuery & { companyId?: string | undefined; domain?: string | undefined },
  fields: readonly VisitorCsvField[] = visitorCsvFields,
  pageSize = 50_000,
): AsyncGenerator<string> {
  const company = visitorCompanyFilter(query)
  const rollup = visitorFiguresRollup(company)
  const all = rollupScope(query, company.where, rollup)
  // Slices are runs of visitor ids, each read through the rollup's order (organization, visitor),
  // the visitors' and the scores' keys too: a slice reads its own visitors only. Their bounds are
  // cut from a sample of the range's visitor ids, sorted as the engine sorts UUIDs, so that slices
  // hold about `pageSize` visitors each; every visitor falls in exactly one slice whatever the bounds.
  const [estimate] = await store.query<{ n: number; sample: string[] }>(
    `${all.with}
    SELECT uniq(visitor_id) AS n, arraySort(groupArraySample(${sliceSample}, 1)(visitor_id)) AS sample
    ${all.from}`,
    { ...all.params, ...company.params },
  )
  const sample = estimate?.sample ?? []
  const wanted = Math.max(1, Math.ceil(Number(estimate?.n ?? 0) / pageSize))
  const bounds = [
    ...new Set(
      Array.from({ length: wanted - 1 }, (_, i) => sample[Math.floor(((i + 1) * sample.length) / wanted)]),
    ),
  ].filter((bound): bound is string => bound !== undefined)
  const slices = bounds.length + 1
  /** The slice's visitors, for a column of visitor ids: from its lower bound, before its upper one. */
  const inSlice = (column: string, slice: number) =>
    [slice > 0 ? `${column} >= {lower:UUID}` : '', slice < slices - 1 ? `${column} < {upper:UUID}` : '']
      .filter(Boolean)
      .join(' AND ') || '1'
  // The audience's parameters (rollupScope) name the active configs the scores are read for.
  const line = `concat(${fields.map((field) => visitorCells[field]).join(", ',', ")}, '\\r')`
  const sliceText = (slice: number) => {
    const s = rollupScope(query, `${company.where} AND ${inSlice('visitor_id', slice)}`, rollup)
    return store.text(
      `${s.with}
        SELECT ${line}
        FROM (
          SELECT f.visitor_id AS visitor_id, f.sessions AS sessions, f.page_views AS page_views,
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
            FROM visitors FINAL WHERE organization_id = {organizationId:UUID} AND ${inSlice('id', slice)}
          ) AS v ON v.id = f.visitor_id
          LEFT JOIN (SELECT id, name, domain FROM companies FINAL) AS c
            ON c.id = if(v.company_id != '', v.company_id, f.hit_company_id)
          LEFT JOIN (
            SELECT visitor_id, max(matched) AS icp,
              max(persona AND config_id IN {personaConfigIds:Array(String)}) AS persona
            FROM icp_scores FINAL
            WHERE organization_id = {organizationId:UUID} AND config_id IN {icpConfigIds:Array(String)}
              AND ${inSlice('visitor_id', slice)}
            GROUP BY visitor_id
          ) AS s ON s.visitor_id = f.visitor_id
        )
        ORDER BY visitor_id`,
      {
        ...s.params,
        ...company.params,
        lower: bounds[slice - 1],
        upper: bounds[slice],
      },
    )
  }
  // The next slice is asked for before this one is handed on: the engine writes it while this one
  // goes to the client (two slices in memory at most, whatever the download's size).
  let next = sliceText(0)
  try {
    for (let slice = 0; slice < slices; slice++) {
      const text = await next
      if (slice + 1 < slices) next = sliceText(slice + 1)
      if (text !== '') yield text
    }
  } finally {
    // A download the client left: the slice asked for ahead may still fail, unheard.
    next.catch(() => {})
  }
}
