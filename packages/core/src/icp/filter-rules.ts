// An organization-level filter as ICP engine rules, so one engine scores every config. The company
// side decides the config's match (`icp`), the contact side its persona match; a side without keys
// matches nobody.
import type { ConditionType } from '@visitor-id/icp-engine'
import type { Filter } from '../filters/filter.js'

interface RuleCondition {
  type: ConditionType
  comparator: 'in' | 'contains'
  value: string | string[]
}

/** Rules as parseRules takes them. */
export interface RulesInput {
  groups: { operator: 'AND' | 'OR'; conditions: RuleCondition[] }[]
}

export interface FilterRules {
  company: RulesInput | undefined
  contact: RulesInput | undefined
}

const membership = (type: ConditionType, ...lists: (string[] | undefined)[]): RuleCondition[] => {
  const value = [...new Set(lists.flatMap((list) => list ?? []))]
  return value.length > 0 ? [{ type, comparator: 'in', value }] : []
}

/**
 * `{company: {industries: ['SaaS']}, contact: {job_titles: ['cto', 'vp']}}` -> company rules
 * `industry in [SaaS]`; contact rules: one AND group per title (`job_title contains cto`, ...),
 * since groups combine with OR and the other contact keys must hold in each.
 */
export function filterToRules(filter: Filter): FilterRules {
  const company = filter.company ?? {}
  const companyConditions = [
    ...membership('industry', company.industries),
    ...membership('employee_size_range', company.company_sizes, company.employee_size_ranges),
    ...membership('domain', company.domains),
    ...membership('company_country', company.countries),
    ...membership('company_region', company.regions),
    ...membership('company_city', company.cities),
    ...membership('revenue_range', company.revenue_ranges),
  ]
  const contact = filter.contact ?? {}
  const contactConditions = [
    ...membership('seniority', contact.seniorities),
    ...membership('department', contact.departments),
    ...membership('contact_country', contact.countries),
  ]
  const titles = [...new Set(contact.job_titles ?? [])]
  const contactGroups =
    titles.length > 0
      ? titles.map((title) => ({
          operator: 'AND' as const,
          conditions: [
            { type: 'job_title' as const, comparator: 'contains' as const, value: title },
            ...contactConditions,
          ],
        }))
      : contactConditions.length > 0
        ? [{ operator: 'AND' as const, conditions: contactConditions }]
        : []
  return {
    company:
      companyConditions.length > 0
        ? { groups: [{ operator: 'AND', conditions: companyConditions }] }
        : undefined,
    contact: contactGroups.length > 0 ? { groups: contactGroups } : undefined,
  }
}
