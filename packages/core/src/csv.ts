// CSV cells (docs/decisions.md, "CSV"): RFC 4180 quoting and the formula guard, in two forms that write the
// same text: `csvCell` for a value in JavaScript, `csvCellSql` for a String expression the engine
// writes itself (a large download formatted by the engine never becomes JS objects; csv.test.ts
// checks the two agree on any string).

/** What a cell may hold. Dates are written by the column as ISO 8601 strings (docs/decisions.md, "Time"). */
export type CsvValue = string | number | boolean | null | undefined

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

/**
 * The engine's form of `csvCell` for a String expression (a column name or any SQL of type String):
 * the same guard and quoting. The characters tested are ASCII, so testing bytes of UTF-8 text is
 * testing its characters.
 * @example `SELECT concat(${csvCellSql('name')}, ',', ${csvCellSql('domain')}) FROM companies`
 */
export function csvCellSql(expression: string): string {
  const guarded = String.raw`substring(${expression}, 1, 1) IN ('=', '+', '-', '@', '\t', '\r')`
  return String.raw`multiIf(
    multiSearchAny(${expression}, ['"', ',', '\r', '\n']),
      concat('"', if(${guarded}, '''', ''), replaceAll(${expression}, '"', '""'), '"'),
    ${guarded}, concat('''', ${expression}),
    ${expression})`
}

/** The engine's form of an ISO 8601 UTC cell (as `Date#toISOString` writes it) for a DateTime64(3, 'UTC'). */
export const isoCellSql = (expression: string) => `concat(replaceOne(toString(${expression}), ' ', 'T'), 'Z')`
