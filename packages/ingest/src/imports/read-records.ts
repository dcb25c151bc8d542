// Streams records from a CSV (RFC 4180: header row, quoted fields may hold commas, quotes and
// newlines) or JSONL file, with the line number each record starts on, so a rejected row can be
// reported where the user will find it.
import { createReadStream, statSync } from 'node:fs'

export type RawRecord = Record<string, string>

export type RecordResult = { line: number; record: RawRecord } | { line: number; error: string }

export interface ReadOptions {
  /** Called as bytes are read: (bytesRead, totalBytes). */
  onBytes?: (read: number, total: number) => void
}

/** `jsonl` for .jsonl / .ndjson / a file starting with `{`, else `csv`. */
export function detectFormat(file: string, firstChunk: string): 'csv' | 'jsonl' {
  if (/\.(jsonl|ndjson)$/i.test(file)) return 'jsonl'
  if (/\.csv$/i.test(file)) return 'csv'
  return firstChunk.trimStart().startsWith('{') ? 'jsonl' : 'csv'
}

const stringify = (value: unknown) =>
  value === null || value === undefined
    ? ''
    : typeof value === 'object'
      ? JSON.stringify(value)
      : String(value)

/**
 * Parses CSV text incrementally; `push` returns complete rows with their starting line. Runs of
 * plain characters are sliced, not copied one by one: a million-row file parses in seconds.
 */
export function createCsvParser() {
  let field = ''
  let row: string[] = []
  let quoted = false
  let afterQuote = false
  let line = 1
  let rowLine = 1
  const rows: { line: number; cells: string[] }[] = []
  const endRow = () => {
    row.push(field)
    field = ''
    if (row.length > 1 || row[0] !== '') rows.push({ line: rowLine, cells: row })
    row = []
  }
  return {
    push(text: string, final: boolean) {
      const length = text.length
      let i = 0
      while (i < length) {
        if (quoted) {
          // Up to the next quote; newlines inside the field still count as lines.
          const quote = text.indexOf('"', i)
          const end = quote === -1 ? length : quote
          for (let nl = text.indexOf('\n', i); nl !== -1 && nl < end; nl = text.indexOf('\n', nl + 1))
            line += 1
          if (end > i) field += text.slice(i, end)
          if (quote === -1) break
          quoted = false
          afterQuote = true
          i = quote + 1
          continue
        }
        // Up to the next comma, newline, quote or carriage return.
        let end = i
        for (; end < length; end += 1) {
          const code = text.charCodeAt(end)
          if (code === 44 || code === 10 || code === 34 || code === 13) break
        }
        if (end > i) {
          field += text.slice(i, end)
          afterQuote = false
        }
        if (end === length) break
        const code = text.charCodeAt(end)
        i = end + 1
        if (code === 34) {
          // A doubled quote inside a quoted field is a literal quote.
          if (afterQuote) field += '"'
          quoted = true
          afterQuote = false
          continue
        }
        afterQuote = false
        if (code === 44) {
          row.push(field)
          field = ''
        } else if (code === 10) {
          endRow()
          line += 1
          rowLine = line
        } // a carriage return outside quotes is dropped
      }
      // An unclosed quote swallowed the rest of the file: that row is not a record.
      if (final && !quoted && (field !== '' || row.length > 0)) endRow()
      return rows.splice(0)
    },
    /** The line where an unclosed quoted field's row starts, if the file ended inside it. */
    get unclosedAt() {
      return quoted ? rowLine : undefined
    },
  }
}

/** A row as read: CSV cells (untrimmed, in header order), a JSONL record, or why it is not one. */
export type RowResult = { line: number; cells: string[] } | RecordResult

/** The rows of one chunk of the file, and the CSV header (lowercased names) once it is known. */
export interface RowBatch {
  header: readonly string[] | undefined
  rows: RowResult[]
}

/**
 * Yields the rows of a CSV or JSONL file a chunk at a time: CSV rows as their cells (with the
 * right number of fields; the header is not a row), JSONL lines as records. For a hot loop: no
 * object per CSV row, no promise per row. `readRecords` is the simple form.
 * @example for await (const { header, rows } of readRowBatches('contacts.csv')) for (const row of rows) use(header, row)
 */
export async function* readRowBatches(file: string, options: ReadOptions = {}): AsyncGenerator<RowBatch> {
  const total = statSync(file).size
  let read = 0
  let format: 'csv' | 'jsonl' | undefined
  let header: string[] | undefined
  const csv = createCsvParser()
  let pending = ''
  let jsonLine = 0

  const fromCsv = (rows: { line: number; cells: string[] }[]): RowResult[] => {
    const out: RowResult[] = []
    for (const row of rows) {
      if (!header) {
        header = row.cells.map((cell) =>
          cell
            .replace(/^\uFEFF/, '')
            .trim()
            .toLowerCase(),
        )
        continue
      }
      out.push(
        row.cells.length === header.length
          ? row
          : { line: row.line, error: `expected ${header.length} fields, found ${row.cells.length}` },
      )
    }
    return out
  }

  const fromJsonLines = (lines: string[]): RowResult[] => {
    const out: RowResult[] = []
    for (const text of lines) {
      jsonLine += 1
      if (!text.trim()) continue
      try {
        const value: unknown = JSON.parse(text)
        if (!value || typeof value !== 'object' || Array.isArray(value)) throw new Error('not an object')
        out.push({
          line: jsonLine,
          record: Object.fromEntries(
            Object.entries(value).map(([key, item]) => [key.trim().toLowerCase(), stringify(item).trim()]),
          ),
        })
      } catch {
        out.push({ line: jsonLine, error: 'not a JSON object' })
      }
    }
    return out
  }

  for await (const chunk of createReadStream(file, { encoding: 'utf8', highWaterMark: 256 * 1024 })) {
    const text = chunk as string
    read += Buffer.byteLength(text)
    format ??= detectFormat(file, text)
    if (format === 'csv') {
      const rows = fromCsv(csv.push(text, false))
      if (rows.length > 0) yield { header, rows }
    } else {
      const lines = (pending + text).split('\n')
      pending = lines.pop() ?? ''
      yield { header: undefined, rows: fromJsonLines(lines) }
    }
    options.onBytes?.(read, total)
  }
  if (format === 'csv') {
    const rows = fromCsv(csv.push('', true))
    const unclosed = csv.unclosedAt
    if (unclosed !== undefined) rows.push({ line: unclosed, error: 'a quoted field is never closed' })
    if (rows.length > 0) yield { header, rows }
  } else if (pending) yield { header: undefined, rows: fromJsonLines([pending]) }
}

/**
 * Yields every record of a CSV or JSONL file, or an error for a line that cannot be read.
 * @example for await (const item of readRecords('companies.csv')) if ('record' in item) use(item.record)
 */
export async function* readRecords(file: string, options: ReadOptions = {}): AsyncGenerator<RecordResult> {
  let names: readonly string[] = []
  let hasProto = false
  for await (const { header, rows } of readRowBatches(file, options)) {
    if (header && header !== names) {
      names = header
      hasProto = names.includes('__proto__')
    }
    for (const row of rows) {
      if (!('cells' in row)) {
        yield row
        continue
      }
      const { line, cells } = row
      // A plain object filled in header order (one shape for every row); Object.fromEntries only
      // for a `__proto__` column, which an assignment would not store.
      if (hasProto) {
        yield { line, record: Object.fromEntries(names.map((name, i) => [name, cells[i]!.trim()])) }
        continue
      }
      const record: RawRecord = {}
      for (let i = 0; i < names.length; i += 1) record[names[i]!] = cells[i]!.trim()
      yield { line, record }
    }
  }
}
