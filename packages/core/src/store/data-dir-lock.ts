import { linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'

/** Another live process owns the data directory. */
export class DataDirLockedError extends Error {
  override name = 'DataDirLockedError'
  constructor(
    readonly dataDir: string,
    readonly ownerPid: number,
  ) {
    super(
      `The data directory ${dataDir} is in use by another process (pid ${ownerPid}). ` +
        'The embedded store allows one process at a time: stop that process first, ' +
        'or point CLICKHOUSE_URL at a ClickHouse server to share the data.',
    )
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

export interface DataDirLock {
  readonly file: string
  release(): void
}

/**
 * Claims `dataDir` for this process with an exclusive `.lock` file holding our pid. A lock left by
 * a process that no longer runs (kill -9, crash) is taken over; a live owner makes this throw
 * `DataDirLockedError`.
 * @example const lock = lockDataDir('./data'); ...; lock.release()
 */
export function lockDataDir(dataDir: string): DataDirLock {
  mkdirSync(dataDir, { recursive: true })
  const file = path.join(dataDir, '.lock')
  // The pid is written to a private file first and hard-linked into place, so the lock file
  // appears atomically and always complete.
  const draft = `${file}.${process.pid}`
  writeFileSync(draft, String(process.pid), { mode: 0o600 })
  try {
    return claim(dataDir, file, draft)
  } finally {
    rmSync(draft, { force: true })
  }
}

function claim(dataDir: string, file: string, draft: string): DataDirLock {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      linkSync(draft, file)
      let released = false
      return {
        file,
        release: () => {
          if (released) return
          released = true
          if (readOwner(file) === process.pid) rmSync(file, { force: true })
        },
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      const owner = readOwner(file)
      if (owner !== undefined && owner !== process.pid && isAlive(owner)) {
        throw new DataDirLockedError(dataDir, owner)
      }
      // Stale lock of a process that is gone: remove it and try again.
      rmSync(file, { force: true })
    }
  }
  throw new Error(`Could not lock the data directory ${dataDir}`)
}

function readOwner(file: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(file, 'utf8').trim(), 10)
    return Number.isInteger(pid) && pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}
