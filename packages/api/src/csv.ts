// CSV downloads (docs/decisions.md, "CSV"): RFC 4180 text in UTF-8, a header row, formula-safe cells (the
// rules of core's csv.ts), and a stream that pulls rows only as fast as the client reads them, so
// memory stays flat whatever the row count.
import { Readable } from 'node:stream'
import { type CsvValue, csvCell } from '@visitor-id/core/csv'
import { z } from 'zod'

export type { CsvValue }

/** One column: its header and how a row fills it. */
export interface CsvColumn<T> {
  header: string
  value(row: T): CsvValue
}

export interface CsvOptions {
  /** Start with a UTF-8 byte order mark, so Excel reads the file as UTF-8 (`?bom=1`). */
  bom?: boolean
}

/** `?bom=1`: every CSV route takes it (register-routes refuses a CSV route without it). */
export const bomParam = z
  .enum(['0', '1'])
  .optional()
  .transform((value) => value === '1')
  .describe('1: start the file with a UTF-8 byte order mark, for Excel')

// Rows are joined into chunks of about this many characters: one chunk per row would cost a stream
// round trip per row, and a chunk this small keeps what is buffered bounded.
const chunkChars = 16 * 1024

const line = (cells: readonly CsvValue[]): string => `${cells.map(csvCell).join(',')}\r\n`

async function* csvLines<T>(
  columns: readonly CsvColumn<T>[],
  rows: AsyncIterable<T> | Iterable<T>,
): AsyncGenerator<string> {
  let chunk = ''
  for await (const row of rows) {
    chunk += line(columns.map((column) => column.value(row)))
    if (chunk.length >= chunkChars) {
      yield chunk
      chunk = ''
    }
  }
  if (chunk !== '') yield chunk
}

/**
 * The CSV text of the rows: the header row, then one line per row, CRLF line ends. Rows are pulled
 * from the iterable only when the stream wants more (backpressure), so a million rows cost no more
 * memory than ten. An error of the iterable errors the stream; destroying the stream ends the
 * iterable (its `finally` blocks run).
 * @example return { filename: 'companies.csv', body: encodeCsv([{ header: 'domain', value: (c) => c.domain }], rows) }
 */
export function encodeCsv<T>(
  columns: readonly CsvColumn<T>[],
  rows: AsyncIterable<T> | Iterable<T>,
  options: CsvOptions = {},
): Readable {
  return csvText(
    columns.map((column) => column.header),
    csvLines(columns, rows),
    options,
  )
}

/**
 * A CSV download of lines already written (CRLF-ended, cells as `csvCell` writes them, e.g. by the
 * engine with core's `csvCellSql`): the header row first, then the text as the stream pulls it.
 * @example return { filename: 'visitors.csv', body: csvText(['id', 'email'], exportVisitorCsv(store, query, ['id', 'email'])) }
 */
export function csvText(
  headers: readonly string[],
  text: AsyncIterable<string>,
  options: CsvOptions = {},
): Readable {
  async function* chunks(): AsyncGenerator<string> {
    // The header goes out with the first lines: a download's first chunk is never the header alone.
    let head = (options.bom ? '\uFEFF' : '') + line(headers)
    for await (const lines of text) {
      yield head + lines
      head = ''
    }
    if (head !== '') yield head
  }
  // Byte mode: the buffer is bounded in bytes (16 KB), not in chunks.
  return Readable.from(chunks(), { objectMode: false })
}
