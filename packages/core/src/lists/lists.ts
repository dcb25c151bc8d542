// Saved lists (docs/decisions.md, "Contacts, lists and audiences"): a filter plus a snapshot of the contacts
// it matched at its last refresh. A refresh writes the members to `list_members` under a new
// snapshot id in one INSERT ... SELECT (the engine does the work; nothing passes through this
// process), counts them in one query, then points the list at the new snapshot. The counts and the
// audience export therefore always describe the same members.
//
// Refreshes and deletes of one list take the list's lock, and read the list from the store (not
// from memory) once they hold it: a refresh that raced a delete finds the list gone and stops
// instead of bringing it back.
import { type PeriodicTask, startPeriodicTask } from '../coordination/periodic.js'
import { type Locks, LockTimeoutError } from '../coordination/ports.js'
import { AppError, appError } from '../errors.js'
import { appendEvents, eventIdOf } from '../events/events.js'
import { type Filter, filterSchema } from '../filters/filter.js'
import { randomToken } from '../ids.js'
import type { Repositories } from '../repositories.js'
import type { Store } from '../store/client.js'
import { createEntityRepository } from '../store/repository.js'
import { contactMatch } from './contact-match.js'
import { type ListRow, listsTable } from './rows.js'

/** `list_` + 24 lowercase hex: how `GET /lists/{id}` tells a list from an organization. */
export const listIdPattern = /^list_[0-9a-f]{24}$/

export type AutoUpdateStatus = 'disabled' | 'enabled' | 'syncing'

export interface ListDeps {
  store: Store
  repos: Repositories
  locks: Locks
}

/** How long a refresh may hold a list (its lease if the process dies), and how long others wait. */
const refreshLeaseMs = 10 * 60_000
const lockWaitMs = 60_000

/** An automatic refresh runs once this long after the last one. */
export const autoRefreshIntervalMs = 24 * 60 * 60_000

/** `syncing` while a refresh holds the list, else the setting. */
export function autoUpdateStatus(list: ListRow, now = Date.now()): AutoUpdateStatus {
  if (list.refreshing_until && Date.parse(list.refreshing_until) > now) return 'syncing'
  return list.auto_update ? 'enabled' : 'disabled'
}

/** The organization's lists, newest first, from memory. */
export async function organizationLists(repos: Repositories, organizationId: string): Promise<ListRow[]> {
  const rows = await repos.lists.find({ organization_id: organizationId })
  return [...rows].sort((a, b) => b.created_at.localeCompare(a.created_at) || a.id.localeCompare(b.id))
}

/** The list with this id, whatever its organization (the caller checks tenancy); from memory. */
export async function findList(repos: Repositories, listId: string): Promise<ListRow | undefined> {
  if (!listIdPattern.test(listId)) return undefined
  const [list] = await repos.lists.find({ id: listId })
  return list
}

/** The stored filter of a list. */
export function listFilter(list: ListRow): Filter {
  return filterSchema.parse(JSON.parse(list.filter))
}

async function withLock<T>(locks: Locks, name: string, work: () => Promise<T>): Promise<T> {
  let lock: Awaited<ReturnType<Locks['acquire']>>
  try {
    lock = await locks.acquire(name, refreshLeaseMs, lockWaitMs)
  } catch (error) {
    if (error instanceof LockTimeoutError) {
      throw appError('conflict', 'The list is being refreshed; try again in a minute')
    }
    throw error
  }
  try {
    return await work()
  } finally {
    await lock.release()
  }
}

export interface SaveListInput {
  name: string
  filter: Filter
  contactsFound: number
  /** Unset: a new list is `disabled`, an existing one keeps its setting. */
  autoUpdate?: boolean | undefined
}

/**
 * Creates the organization's list with this name, or updates the one that has it (filter, the
 * caller's count, the auto-update setting), then refreshes it so it answers with real figures.
 * @example await saveList(deps, org.id, { name: 'CTOs', filter, contactsFound: 120 })
 */
export async function saveList(
  deps: ListDeps,
  organizationId: string,
  input: SaveListInput,
): Promise<ListRow> {
  const filter = JSON.stringify(filterSchema.parse(input.filter))
  const saved = await withLock(deps.locks, `lists:${organizationId}`, async () => {
    // From the store: two processes saving one name must see each other's list.
    const stored = createEntityRepository(deps.store, listsTable)
    const [existing] = await stored.find({ organization_id: organizationId, name: input.name })
    const at = new Date().toISOString()
    return deps.repos.lists.save(
      existing
        ? {
            ...existing,
            filter,
            contacts_found: input.contactsFound,
            auto_update: input.autoUpdate ?? existing.auto_update,
            updated_at: at,
          }
        : {
            id: randomToken('list_', 12),
            organization_id: organizationId,
            name: input.name,
            filter,
            contacts_found: input.contactsFound,
            contacts_num: 0,
            matched_contacts_num: 0,
            enriched_emails: 0,
            auto_update: input.autoUpdate ?? false,
            refreshing_until: null,
            snapshot: '',
            last_synced_at: null,
            connected_integration: null,
            created_at: at,
            updated_at: at,
          },
    )
  })
  return refreshList(deps, saved)
}

/**
 * Recomputes the list's members from its stored filter: a new snapshot, its counts, `lastSyncedTime`.
 * A list deleted before or while this runs: 404 `list_not_found`, and nothing of it is kept.
 */
export async function refreshList(deps: ListDeps, list: ListRow): Promise<ListRow> {
  return withLock(deps.locks, `list:${list.id}`, async () => {
    const stored = createEntityRepository(deps.store, listsTable)
    const current = await stored.get({ organization_id: list.organization_id, id: list.id })
    if (!current) throw appError('list_not_found')
    const started = Date.now()
    const syncing = await deps.repos.lists.save({
      ...current,
      refreshing_until: new Date(started + refreshLeaseMs).toISOString(),
    })
    try {
      const snapshot = randomToken('', 8)
      const { where, params } = contactMatch(listFilter(current))
      await deps.store.command(
        `INSERT INTO list_members (list_id, snapshot, email_sha256, contact_id)
         SELECT {list:String}, {snapshot:String}, email_sha256, contact_id FROM contact_facets FINAL ${where}`,
        { ...params, list: current.id, snapshot },
      )
      const [figures] = await deps.store.query<{ members: number; matched: number; emails: number }>(
        `SELECT count() AS members, uniqExactIf(email_sha256, email_sha256 != '') AS emails,
           countIf(contact_id IN (
             SELECT contact_id FROM visitors FINAL
             WHERE organization_id = {organization:UUID} AND contact_id != ''
           )) AS matched
         FROM list_members WHERE list_id = {list:String} AND snapshot = {snapshot:String}`,
        { organization: current.organization_id, list: current.id, snapshot },
      )
      const refreshed = await deps.repos.lists.save({
        ...syncing,
        snapshot,
        contacts_num: Number(figures?.members ?? 0),
        matched_contacts_num: Number(figures?.matched ?? 0),
        enriched_emails: Number(figures?.emails ?? 0),
        refreshing_until: null,
        last_synced_at: new Date().toISOString(),
        updated_at: new Date().toISOString(),
      })
      // Flows triggered by a refresh (integrations) run from this event.
      await appendEvents(deps.store, [
        {
          event_id: eventIdOf('list.refreshed', current.organization_id, `${current.id}:${snapshot}`),
          type: 'list.refreshed',
          organization_id: current.organization_id,
          visitor_id: null,
          payload: JSON.stringify({
            event_type: 'list.refreshed',
            list_id: current.id,
            list_name: current.name,
            contacts_num: refreshed.contacts_num,
            enriched_emails: refreshed.enriched_emails,
            refreshed_at: refreshed.last_synced_at,
          }),
          created_at: new Date().toISOString(),
        },
      ])
      // Snapshots before the previous one: an export that began on the previous one reads it to its end.
      await deps.store.command(
        `DELETE FROM list_members WHERE list_id = {list:String} AND snapshot NOT IN ({snapshot:String}, {previous:String})`,
        { list: current.id, snapshot, previous: current.snapshot },
      )
      return refreshed
    } catch (error) {
      await deps.repos.lists.save({ ...syncing, refreshing_until: null }).catch(() => {})
      throw error
    }
  })
}

/**
 * Records the integration type the list syncs to (`connectedIntegration`), under the list's lock so
 * a refresh under way does not write its older copy over it. A deleted list stays deleted.
 */
export async function setListIntegration(
  deps: ListDeps,
  list: ListRow,
  integration: string | null,
): Promise<void> {
  await withLock(deps.locks, `list:${list.id}`, async () => {
    const stored = createEntityRepository(deps.store, listsTable)
    const current = await stored.get({ organization_id: list.organization_id, id: list.id })
    if (!current || current.connected_integration === integration) return
    await deps.repos.lists.save({
      ...current,
      connected_integration: integration,
      updated_at: new Date().toISOString(),
    })
  })
}

/** Deletes the list and its members; waits for a refresh of it under way. */
export async function deleteList(deps: ListDeps, list: ListRow): Promise<void> {
  await withLock(deps.locks, `list:${list.id}`, async () => {
    await deps.repos.lists.remove({ organization_id: list.organization_id, id: list.id })
    await deps.store.command('DELETE FROM list_members WHERE list_id = {list:String}', { list: list.id })
  })
}

/**
 * The list's distinct enriched-email hashes (lowercase hex SHA-256), in hash order, a page at a
 * time straight off the members' primary key, so memory stays flat whatever the list's size.
 */
export async function* listEmailHashes(
  store: Store,
  list: ListRow,
  pageSize = 25_000,
): AsyncGenerator<string> {
  let after = ''
  for (;;) {
    const rows = await store.query<{ hash: string }>(
      `SELECT DISTINCT email_sha256 AS hash FROM list_members
       WHERE list_id = {list:String} AND snapshot = {snapshot:String} AND email_sha256 > {after:String}
       ORDER BY hash LIMIT {pageSize:UInt32}`,
      { list: list.id, snapshot: list.snapshot, after, pageSize },
    )
    for (const row of rows) yield row.hash
    if (rows.length < pageSize) return
    after = rows.at(-1)!.hash
  }
}

/**
 * One pass of the worker: refreshes every list with auto-update on whose last refresh is older than
 * `intervalMs`, oldest first; a list deleted meanwhile is skipped. Returns how many were refreshed.
 */
export async function refreshDueLists(
  deps: ListDeps,
  options: { intervalMs?: number; now?: number; onError?: (error: unknown, list: ListRow) => void } = {},
): Promise<number> {
  const now = options.now ?? Date.now()
  const interval = options.intervalMs ?? autoRefreshIntervalMs
  const due = (await createEntityRepository(deps.store, listsTable).find({ auto_update: true }))
    .filter((list) => !list.last_synced_at || Date.parse(list.last_synced_at) + interval <= now)
    .filter((list) => autoUpdateStatus(list, now) !== 'syncing')
    .sort((a, b) => (a.last_synced_at ?? '').localeCompare(b.last_synced_at ?? ''))
  let refreshed = 0
  for (const list of due) {
    try {
      await refreshList(deps, list)
      refreshed++
    } catch (error) {
      if (!(error instanceof AppError && error.code === 'list_not_found')) {
        options.onError?.(error, list)
      }
    }
  }
  return refreshed
}

/**
 * The worker's automatic refreshes: every minute (or every `refreshAfterMs`, if shorter) one process
 * at a time refreshes the lists that are due (`refreshDueLists`).
 * @example const task = startListAutoRefresh(deps, { refreshAfterMs: config.listAutoRefreshMs, log })
 */
export function startListAutoRefresh(
  deps: ListDeps,
  options: {
    refreshAfterMs: number
    log: { warn(details: object, message: string): void }
  },
): PeriodicTask {
  return startPeriodicTask({
    locks: deps.locks,
    lockName: 'lists:auto-refresh',
    lockTtlMs: refreshLeaseMs,
    intervalMs: Math.min(60_000, options.refreshAfterMs),
    pass: async () => {
      await refreshDueLists(deps, {
        intervalMs: options.refreshAfterMs,
        onError: (error, list) => options.log.warn({ err: error, listId: list.id }, 'list refresh failed'),
      })
    },
    onError: (error) => options.log.warn({ err: error }, 'list auto-refresh pass failed'),
  })
}
