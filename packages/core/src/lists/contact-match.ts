// Which contacts a filter of the list vocabulary matches, as a condition on the rows of
// `contact_facets FINAL` (migration 0011): the contact count, list refreshes and anything else
// that selects contacts share it, so "matches" means the same everywhere. The filter becomes ICP
// engine rules (icp/filter-rules.ts) and those become ClickHouse through the engine, as in ICP
// scoring. Contact keys hold for the contact. Company keys hold for the contact's company, found
// as identification finds it: the imported company with the contact's `company_id` when it names
// one, else the imported company with its `company_domain`. The company conditions run once over
// `companies` (small), and a contact is kept when its `company_key` (migration 0011: the hash of
// its company id, else of its company domain) is one of the matching companies' keys: an integer
// set lookup per contact instead of a join of every contact with its company.
import { parseRules, toClickHouseSql } from '@visitor-id/icp-engine'
import type { Filter } from '../filters/filter.js'
import { factColumns } from '../icp/facts.js'
import { filterToRules } from '../icp/filter-rules.js'
import type { QueryParams } from '../store/client.js'

/** A `WHERE` clause ('' for every contact) and its parameters. */
export interface ContactMatch {
  where: string
  params: QueryParams
}

// The facets table names the contact's country `country`; the engine calls it `contact_country`.
const facetColumns = { ...factColumns, contact_country: { sql: 'country' } }

// The companies with the fact names of the ICP engine.
const companyFacts = `SELECT id, domain, industry, employee_size_range, country AS company_country,
  region AS company_region, city AS company_city, revenue_range FROM companies FINAL`

/**
 * The condition a `contact_facets FINAL` row must meet for the filter to hold for its contact.
 * `domains` also holds for a contact whose own `company_domain` is listed, so a contact whose
 * company was never imported can still be selected by domain.
 * @example const { where, params } = contactMatch({ contact: { seniorities: ['vp'] } })
 */
export function contactMatch(filter: Filter): ContactMatch {
  const sides = filterToRules(filter)
  const company =
    sides.company && toClickHouseSql(parseRules(sides.company), factColumns, { paramPrefix: 'co_' })
  const contact =
    sides.contact && toClickHouseSql(parseRules(sides.contact), facetColumns, { paramPrefix: 'ct_' })
  const conditions: string[] = []
  const params: QueryParams = { ...company?.params, ...contact?.params }
  if (contact) conditions.push(contact.matched)
  if (company) {
    const matching = `(SELECT id, domain FROM (${companyFacts}) WHERE ${company.matched})`
    let companyCondition = `company_key IN (
      SELECT cityHash64('id', id) FROM ${matching}
      UNION ALL SELECT cityHash64('domain', domain) FROM ${matching} WHERE domain != '')`
    // A company known only by the contact's domain has no other fact, so it can meet a filter of
    // `domains` alone and nothing else.
    const keys = Object.entries(filter.company ?? {}).filter(([, values]) => values && values.length > 0)
    if (keys.length === 1 && keys[0]![0] === 'domains') {
      params.co_own_domains = filter.company!.domains!.map((domain) => domain.toLowerCase())
      companyCondition = `(${companyCondition} OR lowerUTF8(company_domain) IN {co_own_domains:Array(String)})`
    }
    conditions.push(companyCondition)
  }
  return { where: conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '', params }
}
