// The organization-level filter (company and contact criteria), as one text field per criterion:
// comma-separated values. ICP configs and lists share it.
import { useState } from 'preact/hooks'
import { companyFilterKeys, contactFilterKeys, type Filter } from '../types.js'

const labels: Record<string, string> = {
  industries: 'Industries',
  company_sizes: 'Company sizes',
  employee_size_ranges: 'Employee size ranges',
  domains: 'Domains',
  countries: 'Countries',
  regions: 'Regions',
  cities: 'Cities',
  revenue_ranges: 'Revenue ranges',
  job_titles: 'Job titles',
  seniorities: 'Seniorities',
  departments: 'Departments',
}

const examples: Record<string, string> = {
  industries: 'SaaS, Fintech',
  employee_size_ranges: '51-200, 201-500',
  countries: 'US, GB',
  job_titles: 'CTO, VP Engineering',
  seniorities: 'c-level, vp',
  departments: 'engineering',
}

/** Splits a field's text into its values. */
export const splitValues = (text: string) =>
  text
    .split(',')
    .map((value) => value.trim())
    .filter(Boolean)

/** The filter without its empty criteria and sides. */
export function cleanFilter(filter: Filter): Filter {
  const result: Filter = {}
  for (const side of ['company', 'contact'] as const) {
    const entries = Object.entries(filter[side] ?? {}).filter(([, values]) => values && values.length > 0)
    if (entries.length) (result as Record<string, unknown>)[side] = Object.fromEntries(entries)
  }
  return result
}

export function FilterForm(props: { idPrefix: string; filter: Filter; onChange: (filter: Filter) => void }) {
  const { filter } = props
  // The text as typed (a trailing comma stays while typing); the filter gets the parsed values.
  const [texts, setTexts] = useState<Record<string, string>>({})
  const field = (side: 'company' | 'contact', key: string) => {
    const id = `${props.idPrefix}-${side}-${key}`
    const values = (filter[side] as Record<string, string[]> | undefined)?.[key] ?? []
    const text = texts[id] ?? values.join(', ')
    return (
      <div class="field" key={id}>
        <label for={id}>{labels[key]}</label>
        <input
          id={id}
          value={text}
          placeholder={examples[key] ? `e.g. ${examples[key]}` : undefined}
          onInput={(event) => {
            const value = (event.target as HTMLInputElement).value
            setTexts({ ...texts, [id]: value })
            props.onChange({ ...filter, [side]: { ...filter[side], [key]: splitValues(value) } })
          }}
        />
      </div>
    )
  }
  return (
    <div class="filter-form">
      <fieldset>
        <legend>Company</legend>
        {companyFilterKeys.map((key) => field('company', key))}
      </fieldset>
      <fieldset>
        <legend>Contact (persona)</legend>
        {contactFilterKeys.map((key) => field('contact', key))}
      </fieldset>
      <p class="hint">Separate values with commas. A visitor matches when every filled criterion matches.</p>
    </div>
  )
}
