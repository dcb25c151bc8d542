// Erasure of a person in one organization: every row that names them, in every table of
// `personalTables`, deleted by the engine (`ALTER TABLE ... DELETE`, a mutation: the rows are gone
// from the parts, not only hidden), and the hourly counts of the statistics adjusted, so figures
// stay consistent with the page views that remain. The erasure is recorded without the key.

import { withFirstHoursLock } from '../analytics/first-hours.js'
import type { Locks } from '../coordination/ports.js'
import { newId } from '../ids.js'
import type { Repositories } from '../repositories.js'
import type { Store } from '../store/client.js'
import { storedTime } from '../store/time.js'
import { type ErasedVisitors, recordErasedVisitors } from './erased-visitors.js'
import { mutate } from './mutation.js'
import { findPerson, keyKindOf, type Person, type PersonKey } from './person.js'
import { type PersonalTable, personalTables, personParams } from './tables.js'

export interface ErasureDeps {
  store: Store
  repos: Pick<Repositories, 'lists'>
  locks: Locks
  /**
   * The process's set of erased visitor ids (ingest's): told at once, and it tells the other
   * processes. Without one (a command with the store to itself), the ids go to the store only.
   */
  erasedVisitors?: ErasedVisitors
  /**
   * How long hits acknowledged before the erasure may wait for their insert (ingest's batch
   * interval and more): the erasure waits this long after recording the visitor ids, so those
   * hits are stored first and deleted with the rest.
   */
  pendingHitsMs?: number
}

export interface ErasureResult {
  erasureId: string
  keyKind: ReturnType<typeof keyKindOf>
  /** Visitors and contacts of the dataset found for the key. */
  visitors: number
  contacts: number
  /** Rows deleted per table (tables without any left out). */
  rows: Record<string, number>
  /** Tables whose rows of the person are kept, with why. */
  kept: Record<string, { rows: number; reason: string }>
  requestedAt: string
  finishedAt: string
}

/** The organization's list ids: a list's members are the person's when their hash is. */
export async function organizationListIds(repos: Pick<Repositories, 'lists'>, organizationId: string) {
  return (await repos.lists.find({ organization_id: organizationId })).map((list) => list.id)
}

/** How many rows of each table are the person's, in one statement. */
export async function countPersonRows(
  store: Store,
  person: Person,
  listIds: readonly string[],
  tables: readonly PersonalTable[] = personalTables,
): Promise<Record<string, number>> {
  const [row] = await store.query<Record<string, string | number>>(
    `SELECT ${tables.map((t) => `(SELECT count() FROM ${t.table} WHERE ${t.where}) AS ${t.table}`).join(',\n')}`,
    personParams(person, listIds),
  )
  return Object.fromEntries(tables.map((t) => [t.table, Number(row?.[t.table] ?? 0)]))
}

/** Deletes the person's rows of one table and waits until they are gone (every replica on a cluster). */
async function deleteRows(store: Store, table: PersonalTable, params: Record<string, unknown>) {
  const name = table.sharded ? `{{local:${table.table}}}` : table.table
  await mutate(store, `ALTER TABLE ${name}{{on_cluster}} DELETE WHERE ${table.where}`, params)
}

/** The columns of `first_hours` in table order (its cancel rows copy every one but the sign). */
async function firstHoursColumns(store: Store): Promise<string[]> {
  const rows = await store.query<{ name: string }>(
    `SELECT name FROM system.columns WHERE database = currentDatabase() AND table = 'first_hours' ORDER BY position`,
  )
  return rows.map((row) => row.name)
}

/**
 * Takes the person's `first_hours` rows back: a copy of each with the opposite sign, which the
 * views on first_hours carry into `first_hour_counts` (the statistics' sums) and
 * `first_hours_by_visitor`. The rows and their copies are deleted next.
 */
async function cancelFirstHours(store: Store, params: Record<string, unknown>) {
  const columns = await firstHoursColumns(store)
  const copied = columns.map((column) => (column === 'sign' ? '-sign' : column))
  await store.command(
    `INSERT INTO first_hours (${columns.join(', ')})
     SELECT ${copied.join(', ')} FROM first_hours
     WHERE organization_id = {organizationId:UUID} AND visitor_id IN {visitorIds:Array(UUID)}`,
    params,
  )
}

/**
 * Erases the person named by `key` in the organization; `requestedBy` says who asked (a user or
 * key id, or `cli`). The visitor ids are recorded as erased before anything is deleted, so hits
 * that arrive meanwhile start a new visitor. Holds the statistics' settling lock throughout: a
 * pass must not settle the person's hours while they are taken back.
 */
export async function erasePerson(
  deps: ErasureDeps,
  organizationId: string,
  key: PersonKey,
  requestedBy: string,
): Promise<ErasureResult> {
  const requestedAt = new Date().toISOString()
  const { store } = deps
  const person = await findPerson(store, organizationId, key)
  const listIds = await organizationListIds(deps.repos, organizationId)
  const params = personParams(person, listIds)
  if (deps.erasedVisitors) await deps.erasedVisitors.record(organizationId, person.visitorIds)
  else await recordErasedVisitors(store, organizationId, person.visitorIds)
  if (person.visitorIds.length > 0 && deps.pendingHitsMs) {
    await new Promise((resolve) => setTimeout(resolve, deps.pendingHitsMs))
  }
  const counts = await countPersonRows(store, person, listIds)
  const cancelled = (counts.first_hours ?? 0) > 0
  const cancelTables = new Set(['first_hours', 'first_hours_by_visitor'])
  await withFirstHoursLock(deps.locks, async () => {
    if (cancelled) await cancelFirstHours(store, params)
    for (const table of personalTables) {
      if (typeof table.erasure === 'object') continue
      if (counts[table.table] === 0 && !(cancelled && cancelTables.has(table.table))) continue
      await deleteRows(store, table, params)
    }
  })
  const rows: Record<string, number> = {}
  const kept: ErasureResult['kept'] = {}
  for (const table of personalTables) {
    const n = counts[table.table] ?? 0
    if (n === 0) continue
    if (typeof table.erasure === 'object') kept[table.table] = { rows: n, reason: table.erasure.keep }
    else rows[table.table] = n
  }
  const result: ErasureResult = {
    erasureId: newId(),
    keyKind: keyKindOf(key),
    visitors: person.visitorIds.length,
    contacts: person.contactIds.length,
    rows,
    kept,
    requestedAt,
    finishedAt: new Date().toISOString(),
  }
  await store.insert('erasures', [
    {
      id: result.erasureId,
      organization_id: organizationId,
      key_kind: result.keyKind,
      requested_by: requestedBy,
      requested_at: requestedAt,
      finished_at: result.finishedAt,
      visitors: result.visitors,
      contacts: result.contacts,
      rows,
    },
  ])
  return result
}

/** An erasure as recorded. */
export interface ErasureRecord {
  id: string
  keyKind: ErasureResult['keyKind']
  requestedBy: string
  visitors: number
  contacts: number
  rows: Record<string, number>
  requestedAt: string
  finishedAt: string
}

/** The organization's erasures, latest first (at most `limit`). */
export async function listErasures(
  store: Store,
  organizationId: string,
  limit = 1000,
): Promise<ErasureRecord[]> {
  const rows = await store.query<{
    id: string
    key_kind: ErasureResult['keyKind']
    requested_by: string
    visitors: number
    contacts: number
    rows: Record<string, string | number>
    requested_at: string
    finished_at: string
  }>(
    `SELECT id, key_kind, requested_by, visitors, contacts, rows, requested_at, finished_at FROM erasures
     WHERE organization_id = {organizationId:UUID} ORDER BY requested_at DESC, id LIMIT {limit:UInt32}`,
    { organizationId, limit },
  )
  return rows.map((row) => ({
    id: row.id,
    keyKind: row.key_kind,
    requestedBy: row.requested_by,
    visitors: Number(row.visitors),
    contacts: Number(row.contacts),
    rows: Object.fromEntries(Object.entries(row.rows).map(([table, n]) => [table, Number(n)])),
    requestedAt: storedTime(row.requested_at),
    finishedAt: storedTime(row.finished_at),
  }))
}
