// CSV downloads (DESIGN.md "CSV"): RFC 4180 text in UTF-8, a header row, formula-safe cells, and a
// stream that pulls rows only as fast as the client reads them, so memory stays flat whatever the
// row count.
import { Readable } from 'node:stream'
import { z } from 'zod'

/** What a cell may hold. Dates are written by the column as ISO 8601 strings (DESIGN.md "Time"). */
export type CsvValue = string | number | boolean | null | undefined

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

// A spreadsheet runs a cell starting with one of these as a formula (CSV injection).
const formulaStart = /^[=+\-@\t\r]/
const needsQuotes = /[",\r\n]/

/**
 * One cell, RFC 4180 quoted when needed. Only strings are guarded against formulas: a finite JS
 * number is written as is (`-5` stays a number for the spreadsheet), so a route that wants a
 * number treated as one passes it as a number. NaN and infinities have no CSV form: empty.
 * @example csvCell('=1+2') // "'=1+2"
 */
export function csvCell(value: CsvValue): string {
  if (value === null || value === undefined) return ''
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : ''
  if (typeof value === 'boolean') return value ? 'true' : 'false'
  const text = formulaStart.test(value) ? `'${value}` : value
  return needsQuotes.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

const line = (cells: readonly CsvValue[]): string => `${cells.map(csvCell).join(',')}\r\n`

async function* csvChunks<T>(
  columns: readonly CsvColumn<T>[],
  rows: AsyncIterable<T> | Iterable<T>,
  options: CsvOptions,
): AsyncGenerator<string> {
  let chunk = (options.bom ? '\uFEFF' : '') + line(columns.map((column) => column.header))
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
  // Byte mode: the buffer is bounded in bytes (16 KB), not in chunks.
  return Readable.from(csvChunks(columns, rows, options), { objectMode: false })
}
