// Access to what is held about a person (a subject access request): the same search as an
// erasure, every table of `personalTables`, as one JSON document. Records are listed with every
// column; rollups derived from the page views (aggregate states, no record of their own) are
// counted. Nothing is changed.
import type { Repositories } from '../repositories.js'
import type { Store } from '../store/client.js'
import { countPersonRows, organizationListIds } from './erasure.js'
import { findPerson, keyKindOf, type PersonKey } from './person.js'
import { personalTables, personParams } from './tables.js'

export interface PersonExport {
  organizationId: string
  keyKind: ReturnType<typeof keyKindOf>
  generatedAt: string
  /** What the key led to. */
  found: { visitorIds: string[]; emails: string[]; contactIds: string[] }
  /** Per table: its rows, or for a rollup how many rows it holds of the person. */
  tables: Record<string, { rows: Record<string, unknown>[] } | { count: number }>
}

/** Everything the store holds about the person named by `key` in the organization. */
export async function exportPerson(
  deps: { store: Store; repos: Pick<Repositories, 'lists'> },
  organizationId: string,
  key: PersonKey,
): Promise<PersonExport> {
  const { store } = deps
  const person = await findPerson(store, organizationId, key)
  const listIds = await organizationListIds(deps.repos, organizationId)
  const params = personParams(person, listIds)
  const counted = personalTables.filter((t) => t.exported === 'count')
  const counts = await countPersonRows(store, person, listIds, counted)
  const tables: PersonExport['tables'] = {}
  for (const table of personalTables) {
    if (table.exported === 'count') {
      tables[table.table] = { count: counts[table.table] ?? 0 }
      continue
    }
    const rows = await store.query<Record<string, unknown>>(
      `SELECT * FROM ${table.table}${table.final ? ' FINAL' : ''} WHERE ${table.where}`,
      params,
    )
    tables[table.table] = { rows }
  }
  return {
    organizationId,
    keyKind: keyKindOf(key),
    generatedAt: new Date().toISOString(),
    found: { visitorIds: person.visitorIds, emails: person.emails, contactIds: person.contactIds },
    tables,
  }
}
