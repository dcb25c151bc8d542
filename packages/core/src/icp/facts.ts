// Visitor facts: what the rules can ask about a visitor, one row per visitor, read in ClickHouse.
// Sources (README.md has the table): page views -> UTMs, pages, counts, last seen, geo, IP company
// (visitor_facts, by materialized view); the visitor row -> contact fields and its company
// (visitor_facts, by materialized view); companies -> company fields (joined when read, so a
// re-import counts at the next scoring); icp_scores -> icp_match, persona_match, icp_score (the
// organization-level configs' results, for partner rules that build on them; a visitor no active
// organization-level config matched has icp_match false and icp_score 0).
import type { SqlColumns } from '@visitor-id/icp-engine'
import { sliceCondition } from '../store/slices.js'

/** The facts of one organization's visitors (those `visitorFilter` keeps), merged from their partial rows. */
const mergedFacts = (visitorFilter: string) => `
SELECT visitor_id,
  groupUniqArrayArray(utm_source) AS utm_source,
  groupUniqArrayArray(utm_medium) AS utm_medium,
  groupUniqArrayArray(utm_campaign) AS utm_campaign,
  groupUniqArrayArray(utm_term) AS utm_term,
  groupUniqArrayArray(utm_content) AS utm_content,
  groupUniqArrayArray(1000)(pages) AS pages,
  sum(page_view_count) AS page_view_count,
  uniqExactMerge(sessions) AS session_count,
  max(last_seen_at) AS last_seen_at,
  argMaxMerge(geo) AS geo,
  argMaxMerge(ip_company_id) AS ip_company_id,
  argMaxMerge(contact) AS contact
FROM visitor_facts
WHERE organization_id = {organizationId:UUID} ${visitorFilter}
GROUP BY visitor_id`

/**
 * The visitors that changed in a window (incremental re-scoring), of the slice when sliced: the set
 * a statement builds of them shrinks with its slice.
 */
const changedVisitors = (slice: string) => `AND visitor_id IN (
  SELECT visitor_id FROM visitor_changes
  WHERE organization_id = {organizationId:UUID}
    AND changed_at > {changedAfter:DateTime64(3, 'UTC')} AND changed_at <= {changedUntil:DateTime64(3, 'UTC')}${slice})`

/** The best organization-level result per visitor, for icp_match, persona_match and icp_score. */
const organizationResults = (slice: string) => `
LEFT ANY JOIN (
  SELECT visitor_id, max(matched) AS icp_match, max(persona) AS persona_match, max(score) AS icp_score
  FROM icp_scores FINAL
  WHERE organization_id = {organizationId:UUID} AND config_id IN {organizationConfigIds:Array(String)}${slice}
  GROUP BY visitor_id
) AS o ON o.visitor_id = f.visitor_id`

export interface FactsQueryOptions {
  /** Only visitors with a change in (changedAfter, changedUntil] (params `changedAfter`, `changedUntil`). */
  changedOnly?: boolean
  /** Join the organization-level results (param `organizationConfigIds`). */
  withOrganizationResults?: boolean
  /** One slice of the visitors (params `sliceCount`, `sliceIndex`; store/slices.ts). */
  sliced?: boolean
}

/**
 * One row per visitor of `{organizationId:UUID}`, one column per fact key (see `factColumns`).
 * Run with `join_use_nulls = 1`, so a visitor without a company has missing company facts.
 */
export function factsQuery(options: FactsQueryOptions = {}): string {
  const contact = (field: string) => `if(f.contact.is_deleted = 1, '', f.contact.${field})`
  const active = 'f.session_count > 0'
  // Every set and join of the statement restricted to the slice, not only its result.
  const slice = options.sliced ? ` AND ${sliceCondition('visitor_id')}` : ''
  return `
SELECT f.visitor_id AS visitor_id,
  f.utm_source AS utm_source, f.utm_medium AS utm_medium, f.utm_campaign AS utm_campaign,
  f.utm_term AS utm_term, f.utm_content AS utm_content, f.pages AS pages,
  f.page_view_count AS page_view_count, f.session_count AS session_count,
  intDiv(toUnixTimestamp(now()) - toUnixTimestamp(f.last_seen_at), 86400) AS last_seen_days,
  if(${active}, f.geo.country, NULL) AS country,
  if(${active}, f.geo.region, NULL) AS region,
  if(${active}, f.geo.city, NULL) AS city,
  if(${active}, f.geo.is_hosting, NULL) AS is_hosting,
  if(${active}, f.geo.is_anonymous, NULL) AS is_anonymous,
  ${contact('job_title')} AS job_title,
  ${contact('linkedin_url')} AS linkedin_url,
  ${contact('seniority')} AS seniority,
  ${contact('department')} AS department,
  ${contact('country')} AS contact_country,
  c.industry AS industry, c.domain AS domain, c.employee_size_range AS employee_size_range,
  c.size AS company_size, c.city AS company_city, c.region AS company_region,
  c.postal_code AS company_postal_code, c.country AS company_country, c.revenue_range AS revenue_range,
  ${options.withOrganizationResults ? 'toBool(ifNull(o.icp_match, 0))' : 'NULL'} AS icp_match,
  ${options.withOrganizationResults ? 'toBool(ifNull(o.persona_match, 0))' : 'NULL'} AS persona_match,
  ${options.withOrganizationResults ? 'ifNull(o.icp_score, 0)' : 'NULL'} AS icp_score
FROM (${mergedFacts(`${options.changedOnly ? changedVisitors(slice) : ''}${slice}`)}) AS f
LEFT ANY JOIN (
  SELECT id, industry, domain, employee_size_range, size, city, region, postal_code, country, revenue_range
  FROM companies FINAL
) AS c ON c.id = if(${contact('company_id')} != '', ${contact('company_id')}, f.ip_company_id)
${options.withOrganizationResults ? organizationResults(slice) : ''}`
}

/** How toClickHouseSql reads each fact from a row of `factsQuery`. */
export const factColumns: SqlColumns = {
  utm_source: { sql: 'utm_source', array: true },
  utm_medium: { sql: 'utm_medium', array: true },
  utm_campaign: { sql: 'utm_campaign', array: true },
  utm_term: { sql: 'utm_term', array: true },
  utm_content: { sql: 'utm_content', array: true },
  pages: { sql: 'pages', array: true },
  page_view_count: { sql: 'page_view_count' },
  session_count: { sql: 'session_count' },
  last_seen_days: { sql: 'last_seen_days' },
  country: { sql: 'country' },
  region: { sql: 'region' },
  city: { sql: 'city' },
  is_hosting: { sql: 'is_hosting' },
  is_anonymous: { sql: 'is_anonymous' },
  job_title: { sql: 'job_title' },
  linkedin_url: { sql: 'linkedin_url' },
  seniority: { sql: 'seniority' },
  department: { sql: 'department' },
  contact_country: { sql: 'contact_country' },
  industry: { sql: 'industry' },
  domain: { sql: 'domain' },
  employee_size_range: { sql: 'employee_size_range' },
  // Companies hold their size as text ('120'); non-numeric text ('51-200') counts as missing.
  company_size: { sql: 'company_size', storage: 'string' },
  company_city: { sql: 'company_city' },
  company_region: { sql: 'company_region' },
  company_postal_code: { sql: 'company_postal_code' },
  company_country: { sql: 'company_country' },
  revenue_range: { sql: 'revenue_range' },
  icp_match: { sql: 'icp_match' },
  persona_match: { sql: 'persona_match' },
  icp_score: { sql: 'icp_score' },
}
