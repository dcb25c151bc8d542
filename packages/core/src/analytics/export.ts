// The statistics downloads (GET /companies/download) as CSV lines the engine writes: companies and
// visitors in slices of about 50,000 ids, one statement per slice with the details joined in, its
// answer the slice's lines as text. No row becomes a JS object (handing rows over as JSON objects
// cost several times the statement that computed them: bench/analytics/RESULTS.md, "Why the code
// is as it is"), and memory stays flat however many rows the range holds: a slice in hand and the
// next one being written.
import { csvCellSql, isoCellSql } from '../csv.js'
import type { QueryParams, Store } from '../store/client.js'
import { rollupScope, type StatisticsQuery } from './scope.js'
import { visitorCompanyFilter, visitorFiguresRollup } from './visitors.js'

/**
 * The columns of a companies download, in order, as the engine writes their cells: the fields of a
 * companies list row, each cell as `csvCell` writes the list's value.
 */
const companyCells = {
  id: csvCellSql('company_id'),
  // A company without a profile is named by its id, as in the lists.
  name: csvCellSql("if(name != '', name, company_id)"),
  domain: csvCellSql('domain'),
  industry: csvCellSql('industry'),
  size: csvCellSql('size'),
  employeeSizeRange: csvCellSql('employee_size_range'),
  country: csvCellSql('country'),
  logoUrl: csvCellSql('logo_url'),
  visitors: 'toString(visitors)',
  identifiedVisitors: 'toString(identified_visitors)',
  sessions: 'toString(sessions)',
  pageViews: 'toString(page_views)',
  firstSeenAt: isoCellSql('first_seen'),
  lastSeenAt: isoCellSql('last_seen'),
  // Math.round of the seconds, as the lists write them (never negative).
  engagedSeconds: 'toString(intDiv(engaged_ms + 500, 1000))',
  icpMatch: "if(icp_visitors > 0, 'true', 'false')",
} as const

export type CompanyCsvField = keyof typeof companyCells
/** The columns of a companies download, in their default order. */
export const companyCsvFields = Object.keys(companyCells) as CompanyCsvField[]

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

/** A CSV line of the cells of `fields`, CRLF-ended (the text format ends each row with the LF). */
const lineSql = (cells: Readonly<Record<string, string>>, fields: readonly string[]) =>
  `concat(${fields.map((field) => cells[field]).join(", ',', ")}, '\\r')`

/** How many ids a download samples to cut its slices. */
const sliceSample = 4096
/**
 * The most rollup rows a slice reads: a slice's memory is its rows' (a company's distinct visitors
 * and sessions are hashed), and a slice of 50,000 companies can hold every visitor of the range,
 * so a bound on ids alone does not bound memory (bench/analytics/RESULTS.md, "100 M page views").
 */
const sliceRows = 2_000_000

/**
 * A download's slices: runs of ids, each read through the keys that start with the organization
 * and the id (the rollups', the profiles', the scores'), so a slice reads its own rows only. The
 * bounds are cut from a sample of the range's rows' ids, sorted as the engine sorts them, so that
 * slices hold about the same rows, `pageSize` ids at most and `sliceRows` rows about; every id
 * falls in exactly one slice whatever the bounds.
 */
async function idSlices(
  store: Store,
  scope: ReturnType<typeof rollupScope>,
  params: QueryParams,
  column: 'visitor_id' | 'company_id',
  pageSize: number,
) {
  const [estimate] = await store.query<{ n: number; rows: number; sample: string[] }>(
    `${scope.with}
    SELECT uniq(${column}) AS n, count() AS rows,
      arraySort(groupArraySample(${sliceSample}, 1)(${column})) AS sample
    ${scope.from}`,
    params,
  )
  const sample = estimate?.sample ?? []
  const wanted = Math.max(
    1,
    Math.ceil(Number(estimate?.n ?? 0) / pageSize),
    Math.ceil(Number(estimate?.rows ?? 0) / sliceRows),
  )
  const bounds = [
    ...new Set(
      Array.from({ length: wanted - 1 }, (_, i) => sample[Math.floor(((i + 1) * sample.length) / wanted)]),
    ),
  ].filter((bound): bound is string => bound !== undefined)
  const count = bounds.length + 1
  const type = column === 'visitor_id' ? 'UUID' : 'String'
  return {
    count,
    /** The slice's ids in a column of ids: from its lower bound, before its upper one. */
    where: (idColumn: string, slice: number) =>
      [
        slice > 0 ? `${idColumn} >= {lower:${type}}` : '',
        slice < count - 1 ? `${idColumn} < {upper:${type}}` : '',
      ]
        .filter(Boolean)
        .join(' AND ') || '1',
    /** The bounds `where` names (a server's client would send an unset one as a value). */
    params: (slice: number) => ({
      ...(slice > 0 ? { lower: bounds[slice - 1] } : {}),
      ...(slice < count - 1 ? { upper: bounds[slice] } : {}),
    }),
  }
}

/**
 * The text of each slice, in order. The next slice is asked for before this one is handed on: the
 * engine writes it while this one goes to the client (two slices in memory at most).
 */
async function* slicesText(count: number, sliceText: (slice: number) => Promise<string>) {
  let next = sliceText(0)
  try {
    for (let slice = 0; slice < count; slice++) {
      const text = await next
      if (slice + 1 < count) next = sliceText(slice + 1)
      if (text !== '') yield text
    }
  } finally {
    // A download the client left: the slice asked for ahead may still fail, unheard.
    next.catch(() => {})
  }
}

/**
 * Every company of the statistics as CSV lines (CRLF-ended, no header), by company id: the figures
 * of the list (`companyFiguresOf`: its `company_hours` rows, identified visitors among the
 * organization's identified ones) with the profile fields.
 */
export async function* exportCompanyCsv(
  store: Store,
  query: StatisticsQuery,
  fields: readonly CompanyCsvField[] = companyCsvFields,
  pageSize = 50_000,
): AsyncGenerator<string> {
  const all = rollupScope(query, '', 'company_hours')
  const slices = await idSlices(store, all, all.params, 'company_id', pageSize)
  yield* slicesText(slices.count, (slice) => {
    const s = rollupScope(query, ` AND ${slices.where('company_id', slice)}`, 'company_hours', [
      'identified',
      'icp_matched',
    ])
    return store.text(
      `${s.with}
      SELECT ${lineSql(companyCells, fields)}
      FROM (
        SELECT f.company_id AS company_id, f.visitors AS visitors, f.identified_visitors AS identified_visitors,
          f.sessions AS sessions, f.page_views AS page_views, f.first_seen AS first_seen,
          f.last_seen AS last_seen, f.engaged_ms AS engaged_ms, f.icp_visitors AS icp_visitors,
          p.name AS name, p.domain AS domain, p.industry AS industry, p.size AS size,
          p.employee_size_range AS employee_size_range, p.country AS country, p.logo_url AS logo_url
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
          FROM companies FINAL WHERE ${slices.where('id', slice)}
        ) AS p ON p.id = f.company_id
      )
      ORDER BY company_id`,
      { ...s.params, ...slices.params(slice) },
    )
  })
}

/**
 * Every visitor of the statistics (of one company, or of companies with a domain) as CSV lines
 * (CRLF-ended, no header), by visitor id: the figures of the list with the contact, the company
 * (the contact's, else the one of the last hit with a company) and the ICP results.
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
  const slices = await idSlices(store, all, { ...all.params, ...company.params }, 'visitor_id', pageSize)
  yield* slicesText(slices.count, (slice) => {
    const s = rollupScope(query, `${company.where} AND ${slices.where('visitor_id', slice)}`, rollup)
    // The audience's parameters (rollupScope) name the active configs the scores are read for.
    return store.text(
      `${s.with}
      SELECT ${lineSql(visitorCells, fields)}
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
          FROM visitors FINAL WHERE organization_id = {organizationId:UUID} AND ${slices.where('id', slice)}
        ) AS v ON v.id = f.visitor_id
        LEFT JOIN (SELECT id, name, domain FROM companies FINAL) AS c
          ON c.id = if(v.company_id != '', v.company_id, f.hit_company_id)
        LEFT JOIN (
          SELECT visitor_id, max(matched) AS icp,
            max(persona AND config_id IN {personaConfigIds:Array(String)}) AS persona
          FROM icp_scores FINAL
          WHERE organization_id = {organizationId:UUID} AND config_id IN {icpConfigIds:Array(String)}
            AND ${slices.where('visitor_id', slice)}
          GROUP BY visitor_id
        ) AS s ON s.visitor_id = f.visitor_id
      )
      ORDER BY visitor_id`,
      { ...s.params, ...company.params, ...slices.params(slice) },
    )
  })
}
