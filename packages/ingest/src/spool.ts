// The local spool: an append-only JSONL file under DATA_DIR/spool holding batches that could not
// be written to ClickHouse. Each line is `{"t": dedupToken, "r": rows}`. A batch is acknowledged
// only after its line is fsync'd. Replay reads lines in order from a committed offset (kept in
// `spool.offset`); once everything is replayed the file is truncated. A line torn by a crash was
// never acknowledged, and is cut off when the spool is opened.
import { mkdirSync } from 'node:fs'
import { type FileHandle, open, readFile, rename, writeFile } from 'node:fs/promises'
import path from 'node:path'

export interface SpoolEntry<Row> {
  token: string
  rows: Row[]
  /** Offset just past this entry. */
  next: number
}

/** The spool passed its size bound: callers answer 503 until it drains. */
export class SpoolFullError extends Error {
  override name = 'SpoolFullError'
}

export interface Spool<Row> {
  /** Appends one batch and fsyncs it; throws SpoolFullError past the bound. */
  append(token: string, rows: readonly Row[]): Promise<void>
  /** The oldest batch not yet replayed, or the first one at or after `from` (an entry's `next`). */
  peek(from?: number): Promise<SpoolEntry<Row> | undefined>
  /** Marks a batch (and every one before it) replayed. */
  commit(entry: SpoolEntry<Row>): Promise<void>
  /**
   * Writes the batches not yet replayed to `dir` as a spool of their own (a backup's copy): taken
   * between two appends or commits, never half of one. Resolves to the bytes copied.
   */
  copyTo(dir: string): Promise<number>
  /** Bytes appended and not yet replayed. */
  readonly pendingBytes: number
  /** True when the next batch of a typical size would not fit. */
  readonly full: boolean
  close(): Promise<void>
}

export interface SpoolOptions {
  dir: string
  maxBytes: number
  /**
   * fsync each append (default true). Off only for a spool whose rows are already durable
   * elsewhere and which just hands them from one step to the next (it still survives a crash of
   * the process, not one of the machine).
   */
  sync?: boolean
  /** Called for a line that cannot be parsed (it is skipped). */
  onCorrupt?: (offset: number) => void
}

const readChunk = 1024 * 1024

async function readOffset(file: string): Promise<number> {
  try {
    const value = Number((await readFile(file, 'utf8')).trim())
    return Number.isSafeInteger(value) && value >= 0 ? value : 0
  } catch {
    return 0
  }
}

/** Cuts a torn last line (no newline: the crash came mid-append, before the fsync). */
async function cutTornTail(handle: FileHandle, size: number): Promise<number> {
  let end = size
  const buffer = Buffer.alloc(64 * 1024)
  while (end > 0) {
    const start = Math.max(0, end - buffer.length)
    const { bytesRead } = await handle.read(buffer, 0, end - start, start)
    const newline = buffer.subarray(0, bytesRead).lastIndexOf(10)
    if (newline >= 0) {
      const keep = start + newline + 1
      if (keep !== size) await handle.truncate(keep)
      return keep
    }
    end = start
  }
  if (size > 0) await handle.truncate(0)
  return 0
}

/** Writes the committed offset: a temporary file renamed over the old one, so a crash keeps either. */
async function writeOffset(file: string, offset: number) {
  const temporary = `${file}.tmp`
  await writeFile(temporary, String(offset))
  await rename(temporary, file)
}

/** Copies bytes [from, to) of `handle` to a new file `target`, a chunk at a time, and fsyncs it. */
async function copyRange(handle: FileHandle, from: number, to: number, target: string) {
  const out = await open(target, 'wx', 0o600)
  try {
    const buffer = Buffer.alloc(readChunk)
    for (let position = from; position < to; ) {
      const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, to - position), position)
      if (bytesRead === 0) break
      await out.write(buffer, 0, bytesRead)
      position += bytesRead
    }
    await out.datasync()
  } finally {
    await out.close()
  }
}

/**
 * Runs work one piece at a time, in call order; a piece that fails does not stop the next.
 * @example const exclusive = oneAtATime(); await exclusive(() => handle.truncate(0))
 */
function oneAtATime() {
  let lock: Promise<unknown> = Promise.resolve()
  return <T>(work: () => Promise<T>): Promise<T> => {
    const run = lock.then(work)
    lock = run.catch(() => {})
    return run
  }
}

/**
 * The line starting at `position`, as the chunks read (without its newline), and the offset of
 * that newline; undefined when no newline comes before `size`.
 */
async function readLine(handle: FileHandle, position: number, size: number) {
  const parts: Buffer[] = []
  let cursor = position
  while (cursor < size) {
    const buffer = Buffer.alloc(Math.min(readChunk, size - cursor))
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, cursor)
    const chunk = buffer.subarray(0, bytesRead)
    const newline = chunk.indexOf(10)
    if (newline >= 0) {
      parts.push(chunk.subarray(0, newline))
      return { parts, end: cursor + newline }
    }
    parts.push(chunk)
    cursor += bytesRead
    if (bytesRead === 0) break
  }
  return undefined
}

/** The entry a spool line holds (ending just before `next`), or undefined for a corrupt line. */
function parseEntry<Row>(parts: Buffer[], next: number): SpoolEntry<Row> | undefined {
  try {
    const parsed = JSON.parse(Buffer.concat(parts).toString('utf8')) as { t: string; r: Row[] }
    return { token: parsed.t, rows: parsed.r, next }
  } catch {
    return undefined
  }
}

/**
 * Opens (or creates) the spool in `dir`.
 * @example const spool = await openSpool({ dir: 'data/spool', maxBytes: 512 * 1024 * 1024 })
 */
export async function openSpool<Row>(options: SpoolOptions): Promise<Spool<Row>> {
  mkdirSync(options.dir, { recursive: true })
  const dataFile = path.join(options.dir, 'spool.jsonl')
  const offsetFile = path.join(options.dir, 'spool.offset')
  const handle = await open(dataFile, 'a+')
  let size = await cutTornTail(handle, (await handle.stat()).size)
  let offset = Math.min(await readOffset(offsetFile), size)
  let largestEntry = 0
  // Appends, commits and truncation take turns; reads of [offset, size) need no lock.
  const exclusive = oneAtATime()
  const saveOffset = () => writeOffset(offsetFile, offset)
  const truncateIfDone = async () => {
    if (offset < size || size === 0) return
    await handle.truncate(0)
    size = 0
    offset = 0
    await saveOffset()
  }
  await truncateIfDone()

  return {
    get pendingBytes() {
      return size - offset
    },
    get full() {
      return size + Math.max(largestEntry, 1024) > options.maxBytes
    },
    append: (token, rows) =>
      exclusive(async () => {
        const line = Buffer.from(`${JSON.stringify({ t: token, r: rows })}\n`)
        largestEntry = Math.max(largestEntry, line.length)
        if (size + line.length > options.maxBytes) {
          throw new SpoolFullError(`The spool is full (${size} of ${options.maxBytes} bytes)`)
        }
        await handle.write(line, 0, line.length, null)
        if (options.sync !== false) await handle.datasync()
        size += line.length
      }),
    async peek(from) {
      let position = Math.max(offset, from ?? 0)
      while (position < size) {
        const found = await readLine(handle, position, size)
        if (!found) return undefined
        const entry = parseEntry<Row>(found.parts, found.end + 1)
        if (entry) return entry
        options.onCorrupt?.(position)
        const corruptAt = position
        position = found.end + 1
        // Skipped for good only when nothing before it is still waiting for a commit.
        await exclusive(async () => {
          if (offset !== corruptAt) return
          offset = position
          await saveOffset()
        })
      }
      return undefined
    },
    commit: (entry) =>
      exclusive(async () => {
        offset = Math.max(offset, entry.next)
        await saveOffset()
        await truncateIfDone()
      }),
    copyTo: (dir) =>
      exclusive(async () => {
        mkdirSync(dir, { recursive: true })
        // No offset file: the copy starts at its first batch.
        await copyRange(handle, offset, size, path.join(dir, 'spool.jsonl'))
        return size - offset
      }),
    close: () => exclusive(() => handle.close()),
  }
}
