// A backup directory's layout and its manifest (`manifest.json`), written last: a directory
// without one is an unfinished backup, and restore refuses it.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { z } from 'zod'

/** A backup or restore that cannot go on, for a reason a person can fix; printed as one line. */
export class BackupError extends Error {
  override name = 'BackupError'
}

export const manifestFile = 'manifest.json'
/** The engine's BACKUP of the database (ClickHouse's own format). */
export const storeDir = 'store'
/** The data directory's own files: bootstrap keys, email secret, spool, identification queue, mail. */
export const dataFilesDir = 'data'

const manifestSchema = z.object({
  format: z.literal(1),
  app: z.object({ name: z.literal('visitor-id'), version: z.string() }),
  /** When the backup began: every hit acknowledged before it is in the backup. */
  startedAt: z.string(),
  finishedAt: z.string(),
  engine: z.object({
    kind: z.enum(['embedded', 'server']),
    version: z.string(),
    database: z.string(),
    cluster: z.string().nullable(),
  }),
  /** The last migration applied to the store that was backed up. */
  migration: z.object({ version: z.number().int(), name: z.string() }),
  store: z.object({ id: z.string(), files: z.number(), bytes: z.number() }),
  /** Files under `data/`, relative to it. */
  dataFiles: z.array(z.string()),
})

export type BackupManifest = z.infer<typeof manifestSchema>

/** This build's version (packages/server/package.json), recorded in every manifest. */
export function appVersion(): string {
  const file = new URL('../../package.json', import.meta.url)
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version
}

/** Writes the manifest into `dir` whole (a temporary file renamed into place). */
export function writeManifest(dir: string, manifest: BackupManifest): void {
  const file = path.join(dir, manifestFile)
  writeFileSync(`${file}.tmp`, `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 })
  renameSync(`${file}.tmp`, file)
}

/** Reads and checks the manifest of the backup in `dir`. */
export function readManifest(dir: string): BackupManifest {
  const file = path.join(dir, manifestFile)
  if (!existsSync(file)) {
    throw new BackupError(
      `${dir} holds no ${manifestFile}: not a backup made by \`backup --to\`, or one that did not finish`,
    )
  }
  let raw: unknown
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'))
  } catch {
    throw new BackupError(`${file} is not JSON`)
  }
  const parsed = manifestSchema.safeParse(raw)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!
    throw new BackupError(`${file} is not a backup manifest (${issue.path.join('.')}: ${issue.message})`)
  }
  return parsed.data
}
