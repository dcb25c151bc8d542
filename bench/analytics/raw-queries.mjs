// The baseline of the analytics benchmark: each figure the endpoints serve, computed the plain way,
// straight from raw `page_views` (no rollup), one statement each. Figures only: no page totals, no
// company names or visitor contacts (the endpoints add those with a second, small read).

const scope = `organization_id = {organizationId:UUID}
    AND timestamp >= {from:DateTime64(3, 'UTC')} AND timestamp <= {to:DateTime64(3, 'UTC')}`
/** Only the visitors the bench config matched (what ICPOnly=true keeps). */
const icpScope = ` AND visitor_id IN (SELECT visitor_id FROM icp_scores FINAL
    WHERE organization_id = {organizationId:UUID} AND config_id = {icpConfigId:String} AND matched = 1)`

/**
 * The raw queries by key. Each takes `organizationId`, `from`, `to` (ISO), `icpConfigId`, and
 * `companyId` for `companyVisitors`; `icp` adds the ICPOnly condition.
 */
export const rawQueries = {
  companies: {
    label: 'top 25 companies by visitors (sessions, page views, first/last seen)',
    sql: (where) => `SELECT company_id,
      uniqExact(visitor_id) AS visitors,
      uniqExact(session_id) AS sessions,
      countIf(type = 'pageview') AS page_views,
      min(timestamp) AS first_seen,
      max(timestamp) AS last_seen
    FROM page_views
    WHERE ${where} AND company_id != ''
    GROUP BY company_id
    ORDER BY visitors DESC, last_seen DESC
    LIMIT 25`,
  },
  visitors: {
    label: 'page of 25 visitors by last seen (page views, sessions, first/last seen)',
    sql: (where) => visitorsPage(where),
  },
  companyVisitors: {
    label: 'page of 25 visitors of one company, by last seen',
    sql: (where) => visitorsPage(`${where} AND company_id = {companyId:String}`),
  },
  totals: {
    label: 'totals (visitors, sessions, companies, page views, average session duration)',
    sql: (where) => `SELECT
      uniqExact(visitor_id) AS visitors,
      uniqExact(session_id) AS sessions,
      uniqExactIf(company_id, company_id != '') AS companies,
      countIf(type = 'pageview') AS page_views,
      (SELECT avg(toUnixTimestamp64Milli(last) - toUnixTimestamp64Milli(first)) / 1000 FROM (
        SELECT min(timestamp) AS first, max(timestamp) AS last FROM page_views WHERE ${where} GROUP BY session_id
      )) AS avg_session_seconds
    FROM page_views
    WHERE ${where}`,
  },
  dailyChart: {
    label: 'visitors per day, 30 days',
    sql: (where) => chart('toStartOfDay(timestamp)', where),
  },
  hourlyChart: {
    label: 'visitors per hour, 2 days',
    sql: (where) => chart('toStartOfHour(timestamp)', where),
  },
}

function visitorsPage(where) {
  return `SELECT visitor_id,
      countIf(type = 'pageview') AS page_views,
      uniqExact(session_id) AS sessions,
      min(timestamp) AS first_seen,
      max(timestamp) AS last_seen
    FROM page_views
    WHERE ${where}
    GROUP BY visitor_id
    ORDER BY last_seen DESC
    LIMIT 25`
}

function chart(bucket, where) {
  return `SELECT ${bucket} AS bucket, uniqExact(visitor_id) AS visitors
    FROM page_views
    WHERE ${where}
    GROUP BY bucket
    ORDER BY bucket`
}

/** The SQL of one raw query, for everyone or for the ICP audience. */
export const rawSql = (key, icp) => rawQueries[key].sql(icp ? `${scope}${icpScope}` : scope)
