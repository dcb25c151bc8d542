// The data directory's own files in a backup: everything in DATA_DIR but the engine's directory
// (backed up by the engine itself) and what belongs to the running process (its lock, its socket).
import { copyFileSync, existsSync, lstatSync, mkdirSync, readdirSync } from 'node:fs'
import path from 'node:path'
import { adminSocketName } from '../admin-socket.js'

/** Top-level entries of DATA_DIR that are never copied. */
const ownedByProcess = (name: string) =>
  name === 'clickhouse' || name === adminSocketName || name === '.lock' || name.startsWith('.lock.')

/** The entries of DATA_DIR that make it non-empty for a restore (its lock file does not count). */
export function dataDirEntries(dataDir: string): string[] {
  if (!existsSync(dataDir)) return []
  return readdirSync(dataDir).filter((name) => name !== '.lock' && !name.startsWith('.lock.'))
}

/** Copies the regular files and directories under `from` whose top-level names `keep` keeps. */
function copyTree(
  from: string,
  to: string,
  relative: string,
  copied: string[],
  keep: (name: string) => boolean = () => true,
): void {
  for (const name of readdirSync(from).sort()) {
    if (!keep(name)) continue
    const source = path.join(from, name)
    const stat = lstatSync(source)
    const entry = relative ? `${relative}/${name}` : name
    if (stat.isDirectory()) {
      mkdirSync(path.join(to, name), { recursive: true, mode: 0o700 })
      copyTree(source, path.join(to, name), entry, copied)
    } else if (stat.isFile()) {
      // copyFile keeps the file's mode: bootstrap.json and email-secret stay 0600.
      copyFileSync(source, path.join(to, name))
      copied.push(entry)
    }
  }
}

/**
 * Copies DATA_DIR's own files into `to` (regular files and directories; no sockets, no links),
 * leaving out the top-level names in `skip` (the ingest queues, when the running ingest copies
 * them itself). Returns the files copied, relative to `to`.
 */
export function copyDataFiles(dataDir: string, to: string, skip: ReadonlySet<string>): string[] {
  mkdirSync(to, { recursive: true, mode: 0o700 })
  const copied: string[] = []
  if (existsSync(dataDir)) {
    copyTree(dataDir, to, '', copied, (name) => !ownedByProcess(name) && !skip.has(name))
  }
  return copied
}

/** Copies a backup's data files back into DATA_DIR (which restore has checked is empty). */
export function restoreDataFiles(from: string, dataDir: string): string[] {
  mkdirSync(dataDir, { recursive: true })
  const copied: string[] = []
  if (existsSync(from)) copyTree(from, dataDir, '', copied)
  return copied
}
