import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Locks } from '../coordination/ports.js'
import { sha256Hex } from '../ids.js'
import type { Store } from './client.js'
import { renderMigration } from './render-ddl.js'

/** The SQL files shipped with core, `NNNN_name.sql`, applied in number order. */
export const defaultMigrationsDir = fileURLToPath(new URL('../../migrations/', import.meta.url))

export interface Migration {
  version: number
  name: string
  sql: string
  checksum: string
}

export class MigrationError extends Error {
  override name = 'MigrationError'
}

/** Reads `NNNN_name.sql` files from a folder, sorted by number; rejects gaps in naming and duplicates. */
export function readMigrations(dir: string = defaultMigrationsDir): Migration[] {
  const migrations = readdirSync(dir)
    .filter((file) => file.endsWith('.sql'))
    .map((file) => {
      const match = /^(\d{4})_([a-z0-9_]+)\.sql$/.exec(file)
      if (!match) throw new MigrationError(`Migration file name "${file}" is not NNNN_name.sql`)
      const sql = readFileSync(path.join(dir, file), 'utf8')
      return { version: Number(match[1]), name: file, sql, checksum: sha256Hex(sql) }
    })
    .sort((a, b) => a.version - b.version)
  migrations.forEach((migration, index) => {
    if (index > 0 && migrations[index - 1]!.version === migration.version) {
      throw new MigrationError(`Two migrations share number ${migration.version}`)
    }
  })
  return migrations
}

export interface MigrateOptions {
  dir?: string
  /** Serialises runs across processes when the coordination layer is shared (Redis). */
  locks?: Locks
  log?: (message: string) => void
  /** The table recording applied migrations (another name keeps a separate history, as tests do). */
  ledger?: string
  /**
   * Applies the migrations numbered up to this one only: the schema an earlier release left, which
   * the upgrade test builds its store at. Absent: every migration.
   */
  upTo?: number
}

const ledgerDdl = (table: string) => `CREATE TABLE IF NOT EXISTS ${table} {{on_cluster}} (
  version UInt32,
  name String,
  checksum String,
  applied_at DateTime64(3, 'UTC') DEFAULT now64(3)
) ENGINE = {{global:ReplacingMergeTree(applied_at)}}
ORDER BY version`

/**
 * Applies every migration not yet recorded, in order.
 *
 * Safe to run from several processes at once: every statement is idempotent (`IF NOT EXISTS`),
 * and a migration is recorded only after all of its statements succeeded, so a crash part-way
 * leaves it unrecorded and the next run completes it. An applied file that was edited since is an
 * error: migrations are never edited once released. So is a store that records a migration this
 * code does not have (a later release upgraded it): downgrades are not supported.
 * @example await migrate(store)
 */
export async function migrate(store: Store, options: MigrateOptions = {}): Promise<{ applied: string[] }> {
  const target = { database: store.database, cluster: store.cluster }
  const ledger = options.ledger ?? 'schema_migrations'
  // Long enough for a migration that rebuilds a table from page_views (0004) on a large install.
  const lock = await options.locks?.acquire(`migrations:${ledger}`, 600_000, 600_000)
  try {
    for (const statement of renderMigration(ledgerDdl(ledger), target)) await store.command(statement)
    const recorded = await appliedMigrations(store, ledger)
    const migrations = readMigrations(options.dir)
    refuseNewerSchema(recorded, migrations)
    const applied: string[] = []
    for (const migration of migrations) {
      if (options.upTo !== undefined && migration.version > options.upTo) break
      const previous = recorded.get(migration.version)
      if (previous) {
        if (previous.checksum !== migration.checksum) {
          throw new MigrationError(
            `Migration ${migration.name} was edited after it was applied; add a new migration instead`,
          )
        }
        continue
      }
      for (const statement of renderMigration(migration.sql, target)) await store.command(statement)
      await store.insert(ledger, [
        { version: migration.version, name: migration.name, checksum: migration.checksum },
      ])
      applied.push(migration.name)
      options.log?.(`applied migration ${migration.name}`)
    }
    return { applied }
  } finally {
    await lock?.release()
  }
}

/**
 * A store some migration of which this code does not have was upgraded by a later release. Its
 * schema may hold what this code cannot read or would write wrongly, and migrations only go forward
 * (there is no down migration), so the start is refused, before anything is read or written.
 */
function refuseNewerSchema(recorded: Map<number, { name: string }>, migrations: Migration[]): void {
  const known = new Set(migrations.map((migration) => migration.version))
  const unknown = [...recorded].filter(([version]) => !known.has(version))
  if (unknown.length === 0) return
  const [, newest] = unknown.at(-1)!
  const latest = migrations.at(-1)?.name ?? 'none'
  throw new MigrationError(
    `The store was upgraded by a later release: it has migration ${newest.name}, which this release does not know ` +
      `(its latest is ${latest}). Downgrades are not supported: run the release that upgraded the store, ` +
      'or restore the backup taken before the upgrade',
  )
}

/** The recorded migrations, by number. */
export async function appliedMigrations(
  store: Store,
  ledger = 'schema_migrations',
): Promise<Map<number, { name: string; checksum: string }>> {
  if (!/^\w+$/.test(ledger)) throw new MigrationError(`Bad ledger table name ${ledger}`)
  const rows = await store.query<{ version: number; name: string; checksum: string }>(
    `SELECT version, name, checksum FROM ${ledger} FINAL ORDER BY version`,
  )
  return new Map(rows.map((row) => [row.version, { name: row.name, checksum: row.checksum }]))
}

/** True when every shipped migration is recorded (what /readyz checks). */
export async function isMigrated(store: Store, migrations: Migration[] = readMigrations()): Promise<boolean> {
  try {
    const recorded = await appliedMigrations(store)
    return migrations.every((migration) => recorded.has(migration.version))
  } catch {
    return false
  }
}
