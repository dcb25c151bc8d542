// POST /contacts/count: how many contacts of the contacts dataset a filter matches. The filter is
// the list vocabulary (filter.ts) compiled to ICP engine rules (icp/filter-rules.ts) and then to
// ClickHouse by the engine, as ICP scoring does, so "matches" means the same thing everywhere:
// company keys hold for the contact's company (its imported company by id, else by the contact's
// company domain; `domains` also matches the domain the contact row names), contact keys for the
// contact itself, and the two sides combine with AND. The joined row names its columns as the ICP
// visitor facts do, so the engine reads them through the same column map (`factColumns`).
import { parseRules, toClickHouseSql } from '@visitor-id/icp-engine'
import { factColumns } from '../icp/facts.js'
import { filterToRules } from '../icp/filter-rules.js'
import type { Store } from '../store/client.js'
import type { Filter } from './filter.js'

const companyFields = [
  'industry',
  'domain',
  'employee_size_range',
  'country',
  'region',
  'city',
  'revenue_range',
]

/**
 * The number of live contacts the filter matches; no filter (or empty sides) counts them all.
 * @example await countContacts(store, { company: { industries: ['SaaS'] }, contact: { seniorities: ['vp'] } })
 */
export async function countContacts(store: Store, filter: Filter): Promise<number> {
  const sides = filterToRules(filter)
  const company =
    sides.company && toClickHouseSql(parseRules(sides.company), factColumns, { paramPrefix: 'co_' })
  const contact =
    sides.contact && toClickHouseSql(parseRules(sides.contact), factColumns, { paramPrefix: 'ct_' })
  const conditions = [company?.matched, contact?.matched].filter((condition) => condition !== undefined)
  // The company of a contact: its imported company by id, else the imported company with its
  // domain; read only when a company key is asked.
  const companyOf = (field: string) => `if(by_id.id != '', by_id.${field}, by_domain.${field})`
  const companyJoin = company
    ? `LEFT ANY JOIN (SELECT id, ${companyFields.join(', ')} FROM companies FINAL) AS by_id ON by_id.id = c.company_id
       LEFT ANY JOIN (
         SELECT domain, any(id) AS id, ${companyFields
           .filter((f) => f !== 'domain')
           .map((f) => `any(${f}) AS ${f}`)
           .join(', ')}
         FROM companies FINAL WHERE domain != '' GROUP BY domain
       ) AS by_domain ON by_domain.domain = c.company_domain`
    : ''
  const companyColumns = company
    ? `${companyOf('industry')} AS industry,
       if(${companyOf('domain')} != '', ${companyOf('domain')}, c.company_domain) AS domain,
       ${companyOf('employee_size_range')} AS employee_size_range, ${companyOf('country')} AS company_country,
       ${companyOf('region')} AS company_region, ${companyOf('city')} AS company_city,
       ${companyOf('revenue_range')} AS revenue_range`
    : "'' AS industry"
  const [row] = await store.query<{ n: number }>(
    `SELECT count() AS n FROM (
       SELECT c.job_title AS job_title, c.seniority AS seniority, c.department AS department,
         c.country AS contact_country, ${companyColumns}
       FROM (SELECT job_title, seniority, department, country, company_id, company_domain
             FROM contacts FINAL) AS c
       ${companyJoin}
     )
     ${conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : ''}`,
    { ...company?.params, ...contact?.params },
  )
  return Number(row?.n ?? 0)
}
