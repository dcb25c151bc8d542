// The store's part of a backup: the engine's own BACKUP / RESTORE of the whole database (every
// table, materialized view and the migrations ledger) to a directory, `File('<dir>')`. The
// embedded engine starts with `backups.allowed_path` set (client.ts); a ClickHouse server needs it
// in its configuration, and writes and reads the directory on its own host.
import type { Store } from './client.js'

/** A finished BACKUP: the engine's id, and what it wrote. */
export interface StoreBackup {
  id: string
  database: string
  files: number
  /** Bytes written (after the engine's deduplication of identical files). */
  bytes: number
}

export class StoreBackupError extends Error {
  override name = 'StoreBackupError'
}

interface BackupRow {
  status: string
  error: string
  num_files: number
  total_size: number
}

const literal = (value: string) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`
const identifier = (name: string) => {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new StoreBackupError(`Bad database name ${name}`)
  return name
}
const onCluster = (store: Store) => (store.cluster ? ` ON CLUSTER ${literal(store.cluster)}` : '')
/** The engine's message without the stack trace it appends to a failed backup's error. */
const firstPart = (error: string) => error.split(/,? Stack trace/)[0]!.trim()
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** The database the store's queries run in: the server's `CLICKHOUSE_DATABASE`, `default` embedded. */
export async function storeDatabase(store: Store): Promise<string> {
  const [row] = await store.query<{ name: string }>('SELECT currentDatabase() AS name')
  return row!.name
}

/** The tables (views included) of the store's database: none means a restore may fill it. */
export async function storeTables(store: Store): Promise<string[]> {
  const rows = await store.query<{ name: string }>(
    'SELECT name FROM system.tables WHERE database = currentDatabase() ORDER BY name',
  )
  return rows.map((row) => row.name)
}

/** The engine's version (`26.7.2.1`), for the backup's manifest. */
export async function engineVersion(store: Store): Promise<string> {
  const [row] = await store.query<{ version: string }>('SELECT version() AS version')
  return row!.version
}

/** Starts a BACKUP or RESTORE (ASYNC); the engine's refusal (no allowed path, no such backup) as one line. */
async function start(store: Store, sql: string, what: string): Promise<string> {
  try {
    const [started] = await store.query<{ id: string }>(sql)
    return started!.id
  } catch (error) {
    throw new StoreBackupError(`The engine refused the ${what}: ${firstPart((error as Error).message)}`)
  }
}

/**
 * Waits for the BACKUP or RESTORE `id` to leave its running state. Started ASYNC and watched in
 * `system.backups`, so a long one outlasts no HTTP request timeout.
 */
async function finished(store: Store, id: string, running: string, pollMs: number): Promise<BackupRow> {
  for (;;) {
    const [row] = await store.query<BackupRow>(
      'SELECT status, error, num_files, total_size FROM system.backups WHERE id = {id:String}',
      { id },
    )
    if (!row) throw new StoreBackupError(`The engine lost track of backup ${id}`)
    if (row.status !== running) return row
    await sleep(pollMs)
  }
}

/**
 * Backs up the store's whole database to `dir` (absolute; a new directory), ON CLUSTER when the
 * store has a cluster. Tables are copied as they are when the engine collects them (a snapshot of
 * each table's parts, taken at the start); rows written later are not in it.
 * @example const backup = await backupStore(store, '/backups/2026-05-01/store')
 */
export async function backupStore(store: Store, dir: string, pollMs = 50): Promise<StoreBackup> {
  const database = await storeDatabase(store)
  const id = await start(
    store,
    `BACKUP DATABASE ${identifier(database)}${onCluster(store)} TO File(${literal(dir)}) ASYNC`,
    `BACKUP to ${dir}`,
  )
  const row = await finished(store, id, 'CREATING_BACKUP', pollMs)
  if (row.status !== 'BACKUP_CREATED') {
    throw new StoreBackupError(`The engine's BACKUP ended ${row.status}: ${firstPart(row.error)}`)
  }
  return { id, database, files: Number(row.num_files), bytes: Number(row.total_size) }
}

/**
 * Restores the database `from` of the backup in `dir` into the store's database (which must hold
 * no table), ON CLUSTER when the store has a cluster.
 * @example await restoreStore(store, '/backups/2026-05-01/store', 'default')
 */
export async function restoreStore(store: Store, dir: string, from: string, pollMs = 50): Promise<void> {
  const database = await storeDatabase(store)
  const renamed = from === database ? '' : ` AS ${identifier(database)}`
  // The database itself exists already (empty): its definition is the target's, whatever the
  // backup recorded (another name, the embedded engine's `default`).
  const id = await start(
    store,
    `RESTORE DATABASE ${identifier(from)}${renamed}${onCluster(store)} FROM File(${literal(dir)}) ` +
      'SETTINGS allow_different_database_def = 1 ASYNC',
    `RESTORE from ${dir}`,
  )
  const row = await finished(store, id, 'RESTORING', pollMs)
  if (row.status !== 'RESTORED') {
    throw new StoreBackupError(`The engine's RESTORE ended ${row.status}: ${firstPart(row.error)}`)
  }
}
