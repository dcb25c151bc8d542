// `backup --to DIR`: a consistent copy of the store (the engine's BACKUP) and of the data
// directory's own files, with a manifest written last.
import { chmodSync, mkdirSync, readdirSync } from 'node:fs'
import path from 'node:path'
import { appliedMigrations, backupStore, engineVersion, type Store, StoreError } from '@visitor-id/core/store'
import type { IngestBackupHold, IngestService } from '@visitor-id/ingest'
import { copyDataFiles } from './data-files.js'
import {
  appVersion,
  BackupError,
  type BackupManifest,
  dataFilesDir,
  storeDir,
  writeManifest,
} from './manifest.js'

export interface BackupOptions {
  store: Store
  dataDir: string
  /** The backup directory: absolute, new or empty. */
  dir: string
  /** The running ingest of this process, whose buffered hits and queues the backup takes. */
  ingest?: Pick<IngestService, 'holdForBackup'> | undefined
}

export interface BackupReport {
  backup: string
  startedAt: string
  durationMs: number
  engine: string
  database: string
  migration: string
  store: { files: number; bytes: number }
  dataFiles: string[]
}

const ingestQueues: ReadonlySet<string> = new Set(['spool', 'identify-queue'])

const isInside = (child: string, parent: string) => {
  const relative = path.relative(parent, child)
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative))
}

/**
 * Creates the backup directory; refuses one in use. Mode 0700 (it holds keys and secrets), or
 * 0770 on a ClickHouse server, whose own user writes `store/` into it (a group both users share);
 * the secrets go to `data/`, 0700 either way.
 */
function prepareDir(dir: string, dataDir: string, kind: Store['kind']): void {
  if (isInside(dir, dataDir)) {
    throw new BackupError(`${dir} is inside DATA_DIR (${dataDir}): back up to a directory outside it`)
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  if (readdirSync(dir).length > 0) throw new BackupError(`${dir} is not empty: back up to a new directory`)
  chmodSync(dir, kind === 'server' ? 0o770 : 0o700)
}

async function lastMigration(store: Store): Promise<{ version: number; name: string }> {
  const none = () => new BackupError('The store has no migration applied: there is nothing to back up')
  // No ledger at all: a store that was never started (an empty or mistyped DATA_DIR).
  const applied = await appliedMigrations(store).catch((error: unknown) => {
    throw error instanceof StoreError && error.clickhouseCode === 'UNKNOWN_TABLE' ? none() : error
  })
  const last = [...applied.entries()].at(-1)
  if (!last) throw none()
  return { version: last[0], name: last[1].name }
}

/**
 * Backs up. Hits acknowledged before it began are in the store or in the ingest spool: the
 * writer's buffer is written first, the spool's replay is held while its waiting batches are copied
 * and the engine backs up the database, so each such hit is in exactly one of them.
 */
export async function runBackup(options: BackupOptions): Promise<BackupReport> {
  const { store, dataDir, dir } = options
  const migration = await lastMigration(store)
  prepareDir(dir, dataDir, store.kind)
  const started = new Date()
  const hold: IngestBackupHold | undefined = await options.ingest?.holdForBackup()
  let dataFiles: string[]
  let backup: Awaited<ReturnType<typeof backupStore>>
  try {
    const dataCopy = path.join(dir, dataFilesDir)
    // The ingest queues: copied by the running ingest (held), or as files when no process owns
    // them (an embedded store backed up offline). On a ClickHouse server each ingest process
    // replays its own spool into the live store: they are no part of the store's backup.
    const queues = hold || store.kind === 'server' ? ingestQueues : new Set<string>()
    dataFiles = copyDataFiles(dataDir, dataCopy, queues)
    if (hold) dataFiles.push(...(await hold.copyQueues(dataCopy)))
    backup = await backupStore(store, path.join(dir, storeDir))
  } finally {
    hold?.release()
  }
  const version = await engineVersion(store)
  const manifest: BackupManifest = {
    format: 1,
    app: { name: 'visitor-id', version: appVersion() },
    startedAt: started.toISOString(),
    finishedAt: new Date().toISOString(),
    engine: { kind: store.kind, version, database: backup.database, cluster: store.cluster ?? null },
    migration,
    store: { id: backup.id, files: backup.files, bytes: backup.bytes },
    dataFiles: dataFiles.sort(),
  }
  writeManifest(dir, manifest)
  return {
    backup: dir,
    startedAt: manifest.startedAt,
    durationMs: Date.parse(manifest.finishedAt) - started.getTime(),
    engine: `${store.kind} ${version}`,
    database: backup.database,
    migration: migration.name,
    store: { files: backup.files, bytes: backup.bytes },
    dataFiles: manifest.dataFiles,
  }
}
