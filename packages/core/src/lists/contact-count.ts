// POST /contacts/count: how many contacts of the contacts dataset a filter matches
// (contact-match.ts says what "matches" means).

import type { Filter } from '../filters/filter.js'
import type { Store } from '../store/client.js'
import { contactMatch } from './contact-match.js'

/**
 * The number of live contacts the filter matches; no filter (or empty sides) counts them all.
 * @example await countContacts(store, { company: { industries: ['SaaS'] }, contact: { seniorities: ['vp'] } })
 */
export async function countContacts(store: Store, filter: Filter): Promise<number> {
  const { where, params } = contactMatch(filter)
  const [row] = await store.query<{ n: number }>(
    `SELECT count() AS n FROM contact_facets FINAL ${where}`,
    params,
  )
  return Number(row?.n ?? 0)
}
