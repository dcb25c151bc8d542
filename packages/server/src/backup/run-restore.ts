// `restore --from DIR`: fills an empty data directory (and, on a ClickHouse server, an empty
// database) from a backup; then `npm start` on it works. Runs with no server on DATA_DIR.
import { rmSync } from 'node:fs'
import path from 'node:path'
import type { Config } from '@visitor-id/core/config'
import {
  appliedMigrations,
  createStore,
  type DataDirLock,
  lockDataDir,
  readMigrations,
  restoreStore,
  type Store,
  storeDatabase,
  storeTables,
} from '@visitor-id/core/store'
import { dataDirEntries, restoreDataFiles } from './data-files.js'
import { BackupError, type BackupManifest, dataFilesDir, readManifest, storeDir } from './manifest.js'

export interface RestoreReport {
  restored: string
  backupStartedAt: string
  into: { dataDir: string; engine: 'embedded' | 'server'; database: string }
  migration: string
  tables: number
  dataFiles: string[]
}

/** Refuses a backup this build cannot take: from a newer version, or of another deployment shape. */
function checkCompatible(manifest: BackupManifest, config: Config): void {
  const known = readMigrations().at(-1)?.version ?? 0
  if (manifest.migration.version > known) {
    throw new BackupError(
      `The backup's store is at migration ${manifest.migration.name}, newer than this version knows ` +
        `(${known}): restore it with visitor-id ${manifest.app.version} or later`,
    )
  }
  const cluster = config.clickhouse.url ? config.clickhouse.cluster : undefined
  if (Boolean(manifest.engine.cluster) !== Boolean(cluster)) {
    throw new BackupError(
      manifest.engine.cluster
        ? `The backup is of the cluster ${manifest.engine.cluster}: restore it with CLICKHOUSE_CLUSTER set`
        : 'The backup is of a single node: restore it with CLICKHOUSE_CLUSTER unset',
    )
  }
  // Replicated tables name their database in their Keeper paths: a renamed copy would share them.
  if (cluster && manifest.engine.database !== config.clickhouse.database) {
    throw new BackupError(
      `The backup is of the database ${manifest.engine.database} of a cluster: restore it into a database of that name`,
    )
  }
}

function checkEmptyDataDir(dataDir: string): void {
  const entries = dataDirEntries(dataDir)
  if (entries.length > 0) {
    throw new BackupError(
      `DATA_DIR ${dataDir} is not empty (${entries.slice(0, 3).join(', ')}${entries.length > 3 ? ', ...' : ''}): ` +
        'restore fills an empty data directory; point DATA_DIR at a new one',
    )
  }
}

/** Restores the database, then the data files; checks that the store came back at its level. */
async function fill(store: Store, from: string, manifest: BackupManifest, dataDir: string) {
  const database = await storeDatabase(store)
  const existing = await storeTables(store)
  if (existing.length > 0) {
    throw new BackupError(
      `The database ${database} already has ${existing.length} tables: restore fills an empty one`,
    )
  }
  await restoreStore(store, path.join(from, storeDir), manifest.engine.database)
  const dataFiles = restoreDataFiles(path.join(from, dataFilesDir), dataDir)
  const last = [...(await appliedMigrations(store)).keys()].at(-1)
  if (last !== manifest.migration.version) {
    throw new BackupError(
      `The restored store is at migration ${last}, the manifest says ${manifest.migration.version}`,
    )
  }
  return { database, tables: (await storeTables(store)).length, dataFiles }
}

/**
 * Restores the backup in `from` (absolute) into the configured DATA_DIR and store. A failure
 * leaves an embedded data directory empty again, so the command can simply be run again.
 */
export async function runRestore(config: Config, from: string): Promise<RestoreReport> {
  const manifest = readManifest(from)
  checkCompatible(manifest, config)
  const { dataDir } = config
  checkEmptyDataDir(dataDir)
  const lock: DataDirLock | undefined = config.clickhouse.url ? undefined : lockDataDir(dataDir)
  let filled: Awaited<ReturnType<typeof fill>> | undefined
  let emptied = false
  try {
    // Checked again under the lock: something may have been written there in between.
    checkEmptyDataDir(dataDir)
    emptied = true
    const store = createStore({ ...config.clickhouse, dataDir })
    try {
      filled = await fill(store, from, manifest, dataDir)
    } finally {
      await store.close()
    }
  } finally {
    // Only what this run wrote: the directory was empty under the lock.
    if (lock && emptied && !filled) {
      for (const name of dataDirEntries(dataDir)) rmSync(path.join(dataDir, name), { recursive: true })
    }
    lock?.release()
  }
  return {
    restored: from,
    backupStartedAt: manifest.startedAt,
    into: { dataDir, engine: config.clickhouse.url ? 'server' : 'embedded', database: filled.database },
    migration: manifest.migration.name,
    tables: filled.tables,
    dataFiles: filled.dataFiles,
  }
}
