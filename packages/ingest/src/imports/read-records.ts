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

/** Parses CSV text incrementally; `push` returns complete rows with their starting line. */
function createCsvParser() {
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
      for (let i = 0; i < text.length; i += 1) {
        const char = text[i]!
        if (quoted) {
          if (char === '"') {
            quoted = false
            afterQuote = true
          } else {
            if (char === '\n') line += 1
            field += char
          }
          continue
        }
        if (char === '"') {
          // A doubled quote inside a quoted field is a literal quote.
          if (afterQuote) field += '"'
          quoted = true
          afterQuote = false
          continue
        }
        afterQuote = false
        if (char === ',') {
          row.push(field)
          field = ''
        } else if (char === '\n') {
          endRow()
          line += 1
          rowLine = line
        } else if (char !== '\r') field += char
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

/**
 * Yields every record of a CSV or JSONL file, or an error for a line that cannot be read.
 * @example for await (const item of readRecords('companies.csv')) if ('record' in item) use(item.record)
 */
export async function* readRecords(file: string, options: ReadOptions = {}): AsyncGenerator<RecordResult> {
  const total = statSync(file).size
  let read = 0
  let format: 'csv' | 'jsonl' | undefined
  let header: string[] | undefined
  const csv = createCsvParser()
  let pending = ''
  let jsonLine = 0

  function* fromCsv(rows: { line: number; cells: string[] }[]): Generator<RecordResult> {
    for (const { line, cells } of rows) {
      if (!header) {
        header = cells.map((cell) =>
          cell
            .replace(/^\uFEFF/, '')
            .trim()
            .toLowerCase(),
        )
        continue
      }
      if (cells.length !== header.length) {
        yield { line, error: `expected ${header.length} fields, found ${cells.length}` }
        continue
      }
      yield { line, record: Object.fromEntries(header.map((name, i) => [name, cells[i]!.trim()])) }
    }
  }

  function* fromJsonLines(lines: string[]): Generator<RecordResult> {
    for (const text of lines) {
      jsonLine += 1
      if (!text.trim()) continue
      try {
        const value: unknown = JSON.parse(text)
        if (!value || typeof value !== 'object' || Array.isArray(value)) throw new Error('not an object')
        yield {
          line: jsonLine,
          record: Object.fromEntries(
            Object.entries(value).map(([key, item]) => [key.trim().toLowerCase(), stringify(item).trim()]),
          ),
        }
      } catch {
        yield { line: jsonLine, error: 'not a JSON object' }
      }
    }
  }

  for await (const chunk of createReadStream(file, { encoding: 'utf8', highWaterMark: 256 * 1024 })) {
    const text = chunk as string
    read += Buffer.byteLength(text)
    format ??= detectFormat(file, text)
    if (format === 'csv') yield* fromCsv(csv.push(text, false))
    else {
      const lines = (pending + text).split('\n')
      pending = lines.pop() ?? ''
      yield* fromJsonLines(lines)
    }
    options.onBytes?.(read, total)
  }
  if (format === 'csv') {
    const last = csv.push('', true)
    yield* fromCsv(last)
    const unclosed = csv.unclosedAt
    if (unclosed !== undefined) yield { line: unclosed, error: 'a quoted field is never closed' }
  } else if (pending) yield* fromJsonLines([pending])
}
