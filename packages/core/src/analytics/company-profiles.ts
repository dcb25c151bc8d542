// The profile fields of the companies a statistics page names, read by id.

import type { CompanyRow } from '../companies/rows.js'
import type { Store } from '../store/client.js'

/** The company fields a statistics row shows. */
export type CompanyProfile = Pick<
  CompanyRow,
  'id' | 'name' | 'domain' | 'industry' | 'size' | 'employee_size_range' | 'country' | 'logo_url'
>

/** The profiles of some companies, by id. */
export const companyProfiles = (store: Store, ids: readonly string[]) =>
  companiesById<CompanyProfile>(
    store,
    ids,
    'id, name, domain, industry, size, employee_size_range, country, logo_url',
  )

/**
 * The names and domains of some companies, by id: only the two columns a visitors page shows, since
 * a point read pays for every column it selects (bench/analytics/RESULTS.md, "Why the code is as
 * it is").
 */
export const companyNames = (store: Store, ids: readonly string[]) =>
  companiesById<Pick<CompanyProfile, 'id' | 'name' | 'domain'>>(store, ids, 'id, name, domain')

async function companiesById<T extends { id: string }>(
  store: Store,
  ids: readonly string[],
  columns: string,
): Promise<Map<string, T>> {
  if (ids.length === 0) return new Map()
  const rows = await store.query<T>(
    `SELECT ${columns} FROM companies FINAL WHERE id IN {ids:Array(String)}`,
    {
      ids,
    },
  )
  return new Map(rows.map((row) => [row.id, row]))
}
