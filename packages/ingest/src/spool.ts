// The local spool: an append-only JSONL file under DATA_DIR/spool holding batches that could not
// be written to ClickHouse. Each line is `{"t": dedupToken, "r": rows}`. A batch is acknowledged
// only after its line is fsync'd. Replay reads lines in order from a committed offset (kept in
// `spool.offset`); once everything is replayed the file is truncated, and while it never empties
// (the spool as the normal write path under steady load) the lines still waiting are copied to a
// new file once the replayed part passes `compactBytes`. A line torn by a crash was never
// acknowledged, and is cut off when the spool is opened.
import { mkdirSync } from 'node:fs'
import { type FileHandle, open, readFile, rename, rm } from 'node:fs/promises'
import path from 'node:path'

export interface SpoolEntry<Row> {
  token: string
  rows: Row[]
  /** Offset just past this entry. */
  next: number
  /** Each row as the spool holds it (`encodeRow`), when this process appended the entry. */
  encoded?: string[]
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
   * Records that the entries from the oldest one up to `last` are being written as one batch
   * (under one dedup token), so that after a crash they are replayed as that same batch.
   */
  begin(last: SpoolEntry<Row>): Promise<void>
  /** Where the batch begun and not committed by the previous process ends (an entry's `next`). */
  readonly begunEnd: number | undefined
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

export interface SpoolOptions<Row = unknown> {
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
  /** Replayed bytes past which the waiting lines are moved to a new file (default 16 MB). */
  compactBytes?: number
  /** Rows of appended entries kept in memory, so replaying them reads no file (default 50,000). */
  memoryRows?: number
  /** A row's JSON as the spool holds it (default: JSON.stringify); kept with the entry in memory. */
  encodeRow?: (row: Row) => string
  /** A row back from what `encodeRow` wrote (default: the parsed JSON). */
  decodeRow?: (value: unknown) => Row
}

/** What `spool.offset` holds: the committed offset, the data file it belongs to, a begun batch. */
interface SpoolState {
  offset: number
  /** The data file's inode: another inode means the file was compacted after this was written. */
  ino?: number
  /** The end of a batch begun and not yet committed. */
  end?: number
}

const readChunk = 1024 * 1024

async function readState(file: string): Promise<SpoolState> {
  try {
    const text = (await readFile(file, 'utf8')).trim()
    // A bare number: the offset alone, as written before the state had more in it.
    const parsed = (text.startsWith('{') ? JSON.parse(text) : { offset: Number(text) }) as SpoolState
    return Number.isSafeInteger(parsed.offset) && parsed.offset >= 0 ? parsed : { offset: 0 }
  } catch {
    return { offset: 0 }
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

/** Writes the state: a temporary file renamed over the old one, so a crash keeps either. */
async function writeState(file: string, state: SpoolState, sync: boolean) {
  const temporary = `${file}.tmp`
  const handle = await open(temporary, 'w')
  try {
    await handle.writeFile(JSON.stringify(state))
    if (sync) await handle.datasync()
  } finally {
    await handle.close()
  }
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
function parseEntry<Row>(
  parts: Buffer[],
  next: number,
  decodeRow: ((value: unknown) => Row) | undefined,
): SpoolEntry<Row> | undefined {
  try {
    const parsed = JSON.parse(Buffer.concat(parts).toString('utf8')) as { t: string; r: Row[] }
    return { token: parsed.t, rows: decodeRow ? parsed.r.map(decodeRow) : parsed.r, next }
  } catch {
    return undefined
  }
}

/** The data file and what is known of it, shared by the spool's operations. */
interface SpoolFile<Row> {
  handle: FileHandle
  size: number
  offset: number
  begunEnd: number | undefined
  largestEntry: number
  /** Entries appended by this process and not yet committed, by position (a bounded number of rows). */
  memory: Map<number, SpoolEntry<Row>>
  memoryRows: number
}

/** Opens the data file: its torn tail cut, the committed offset and begun batch read back. */
async function openFile<Row>(dataFile: string, stateFile: string): Promise<SpoolFile<Row>> {
  const handle = await open(dataFile, 'a+')
  const stat = await handle.stat()
  const size = await cutTornTail(handle, stat.size)
  const state = await readState(stateFile)
  // Another file than the state names: it was compacted (its first line is the oldest waiting).
  const moved = state.ino !== undefined && state.ino !== stat.ino
  const offset = moved ? 0 : Math.min(state.offset, size)
  const begunEnd = !moved && state.end !== undefined && state.end <= size ? state.end : undefined
  return { handle, size, offset, begunEnd, largestEntry: 0, memory: new Map(), memoryRows: 0 }
}

/** Forgets the in-memory entries before the committed offset. */
function forgetCommitted<Row>(file: SpoolFile<Row>) {
  for (const [position, entry] of file.memory) {
    if (entry.next > file.offset) break
    file.memory.delete(position)
    file.memoryRows -= entry.rows.length
  }
}

/**
 * Moves the waiting lines to a new file renamed over the old one; the state written next names the
 * new file's inode, so a crash in between is recognised at the next open (offset 0 of the new file).
 */
async function compact<Row>(file: SpoolFile<Row>, dataFile: string) {
  const temporary = `${dataFile}.tmp`
  await rm(temporary, { force: true })
  await copyRange(file.handle, file.offset, file.size, temporary)
  await file.handle.close()
  await rename(temporary, dataFile)
  file.handle = await open(dataFile, 'a+')
  const shift = file.offset
  file.size -= shift
  file.offset = 0
  file.memory = new Map(
    [...file.memory].map(([position, entry]) => [position - shift, { ...entry, next: entry.next - shift }]),
  )
}

/**
 * Opens (or creates) the spool in `dir`.
 * @example const spool = await openSpool({ dir: 'data/spool', maxBytes: 512 * 1024 * 1024 })
 */
export async function openSpool<Row>(options: SpoolOptions<Row>): Promise<Spool<Row>> {
  mkdirSync(options.dir, { recursive: true })
  const dataFile = path.join(options.dir, 'spool.jsonl')
  const stateFile = path.join(options.dir, 'spool.offset')
  const sync = options.sync !== false
  const compactBytes = options.compactBytes ?? 16 * 1024 * 1024
  const memoryRows = options.memoryRows ?? 50_000
  const file = await openFile<Row>(dataFile, stateFile)
  // Appends, commits, truncation and compaction take turns; reads of [offset, size) need no lock.
  const exclusive = oneAtATime()
  const saveState = async () => {
    const { ino } = await file.handle.stat()
    const end = file.begunEnd
    await writeState(stateFile, { offset: file.offset, ino, ...(end === undefined ? {} : { end }) }, sync)
  }
  const truncateIfDone = async () => {
    if (file.offset < file.size || file.size === 0) return
    await file.handle.truncate(0)
    file.size = 0
    file.offset = 0
    file.memory.clear()
    file.memoryRows = 0
    await saveState()
  }
  await truncateIfDone()

  return {
    get pendingBytes() {
      return file.size - file.offset
    },
    get full() {
      return file.size + Math.max(file.largestEntry, 1024) > options.maxBytes
    },
    get begunEnd() {
      return file.begunEnd
    },
    append: (token, rows) =>
      exclusive(async () => {
        const encoded = options.encodeRow ? rows.map(options.encodeRow) : undefined
        const line = Buffer.from(
          encoded
            ? `{"t":${JSON.stringify(token)},"r":[${encoded.join(',')}]}\n`
            : `${JSON.stringify({ t: token, r: rows })}\n`,
        )
        file.largestEntry = Math.max(file.largestEntry, line.length)
        if (file.size + line.length > options.maxBytes) {
          throw new SpoolFullError(`The spool is full (${file.size} of ${options.maxBytes} bytes)`)
        }
        await file.handle.write(line, 0, line.length, null)
        if (sync) await file.handle.datasync()
        const position = file.size
        file.size += line.length
        if (file.memoryRows + rows.length <= memoryRows) {
          const entry = { token, rows: rows as Row[], next: file.size }
          file.memory.set(position, encoded ? { ...entry, encoded } : entry)
          file.memoryRows += rows.length
        }
      }),
    peek: (from) => peekEntry(file, from, options.onCorrupt, options.decodeRow, exclusive, saveState),
    begin: (last) =>
      exclusive(async () => {
        file.begunEnd = last.next
        await saveState()
      }),
    commit: (entry) =>
      exclusive(async () => {
        file.offset = Math.max(file.offset, entry.next)
        if (file.begunEnd !== undefined && file.offset >= file.begunEnd) file.begunEnd = undefined
        forgetCommitted(file)
        await saveState()
        await truncateIfDone()
        if (file.offset >= compactBytes && file.offset < file.size) {
          await compact(file, dataFile)
          await saveState()
        }
      }),
    copyTo: (dir) =>
      exclusive(async () => {
        mkdirSync(dir, { recursive: true })
        // No offset file: the copy starts at its first batch.
        await copyRange(file.handle, file.offset, file.size, path.join(dir, 'spool.jsonl'))
        return file.size - file.offset
      }),
    close: () => exclusive(() => file.handle.close()),
  }
}

/** The oldest entry at or after `from` (from memory when this process appended it); corrupt lines skipped. */
async function peekEntry<Row>(
  file: SpoolFile<Row>,
  from: number | undefined,
  onCorrupt: ((offset: number) => void) | undefined,
  decodeRow: ((value: unknown) => Row) | undefined,
  exclusive: <T>(work: () => Promise<T>) => Promise<T>,
  saveState: () => Promise<void>,
): Promise<SpoolEntry<Row> | undefined> {
  let position = Math.max(file.offset, from ?? 0)
  while (position < file.size) {
    const kept = file.memory.get(position)
    if (kept) return kept
    const found = await readLine(file.handle, position, file.size)
    if (!found) return undefined
    const entry = parseEntry<Row>(found.parts, found.end + 1, decodeRow)
    if (entry) return entry
    onCorrupt?.(position)
    const corruptAt = position
    position = found.end + 1
    // Skipped for good only when nothing before it is still waiting for a commit.
    await exclusive(async () => {
      if (file.offset !== corruptAt) return
      file.offset = position
      await saveState()
    })
  }
  return undefined
}
