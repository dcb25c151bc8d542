// The differential test table: one column per fact, with deliberately varied ClickHouse types
// (Nullable, LowCardinality, non-null, arrays, numbers held as text) so every SQL code path runs.
// `toColumnValue` says how a JS fact is stored there, or that it cannot be stored faithfully.

import type { SqlColumns } from '../index.js'
import { type FactKey, type FactValue, isPresent, toFiniteNumber } from '../index.js'

export interface TestColumn {
  key: FactKey
  chType: string
  array: boolean
  storage: 'string' | 'number' | 'boolean'
  kind: 'string' | 'number' | 'boolean'
}

const col = (
  key: FactKey,
  chType: string,
  kind: TestColumn['kind'],
  storage: TestColumn['storage'] = kind,
): TestColumn => ({ key, chType, array: chType.startsWith('Array('), storage, kind })

export const TEST_COLUMNS: TestColumn[] = [
  col('utm_source', 'Array(String)', 'string'),
  col('utm_medium', 'Nullable(String)', 'string'),
  col('utm_campaign', 'LowCardinality(Nullable(String))', 'string'),
  col('utm_term', 'Array(Nullable(String))', 'string'),
  col('utm_content', 'String', 'string'),
  col('pages', 'Array(String)', 'string'),
  col('page_view_count', 'Nullable(String)', 'number', 'string'),
  col('session_count', 'Array(String)', 'number', 'string'),
  col('last_seen_days', 'Nullable(Int32)', 'number'),
  col('industry', 'Nullable(String)', 'string'),
  col('domain', 'String', 'string'),
  col('job_title', 'Array(String)', 'string'),
  col('linkedin_url', 'Nullable(String)', 'string'),
  col('country', 'LowCardinality(String)', 'string'),
  col('region', 'Nullable(String)', 'string'),
  col('city', 'Nullable(String)', 'string'),
  col('employee_size_range', 'Nullable(String)', 'string'),
  col('company_city', 'Nullable(String)', 'string'),
  col('company_region', 'Nullable(String)', 'string'),
  col('company_postal_code', 'Nullable(String)', 'string'),
  col('company_size', 'Nullable(Float64)', 'number'),
  col('icp_score', 'Array(Nullable(Float64))', 'number'),
  col('icp_match', 'Nullable(Bool)', 'boolean'),
  col('persona_match', 'Nullable(UInt8)', 'boolean'),
  col('is_hosting', 'Bool', 'boolean'),
  col('is_anonymous', 'Nullable(Bool)', 'boolean'),
  col('company_country', 'String', 'string'),
  col('revenue_range', 'Nullable(String)', 'string'),
  col('seniority', 'LowCardinality(String)', 'string'),
  col('department', 'Array(String)', 'string'),
  col('contact_country', 'Nullable(String)', 'string'),
]

export const SQL_COLUMNS: SqlColumns = Object.fromEntries(
  TEST_COLUMNS.map((c) => [c.key, { sql: c.key, array: c.array, storage: c.storage }]),
)

export const CREATE_TABLE = (table: string) =>
  `CREATE TABLE ${table} (id UInt32, ${TEST_COLUMNS.map((c) => `${c.key} ${c.chType}`).join(', ')}) ENGINE = MergeTree ORDER BY id`

const NOPE = Symbol('not representable')
type Stored = unknown | typeof NOPE

/** The value to insert for `fact`, or NOPE when the column cannot hold something equivalent. */
export function toColumnValue(c: TestColumn, fact: FactValue): Stored {
  const nullable = c.chType.includes('Nullable(') && !c.array
  if (fact === undefined || fact === null) {
    if (c.array) return []
    if (nullable) return null
    return c.storage === 'string' ? '' : NOPE
  }
  if (c.array) {
    const elements = Array.isArray(fact) ? fact : [fact] // a scalar fact is a one-element array
    const out: unknown[] = []
    for (const e of elements) {
      const v = scalar(c, e)
      if (v === NOPE) {
        // Elements the JS side ignores may be dropped, unless dropping changes presence.
        if (c.storage === 'number' && isPresent(e) && typeof e !== 'boolean') return NOPE
        continue
      }
      out.push(v)
    }
    return isPresent(fact) === out.some((v) => isPresent(v)) ? out : NOPE
  }
  if (Array.isArray(fact)) return NOPE
  return scalar(c, fact)
}

function scalar(c: TestColumn, fact: unknown): Stored {
  if (c.kind === 'boolean') {
    if (typeof fact !== 'boolean') return NOPE
    return c.chType.includes('UInt8') ? Number(fact) : fact
  }
  if (c.storage === 'string') {
    if (typeof fact === 'string') return fact
    // Numeric types treat a number and its decimal text alike (NaN/Infinity text is non-numeric, as the number is).
    if (c.kind === 'number' && typeof fact === 'number') return String(fact)
    return NOPE
  }
  const n = typeof fact === 'number' || typeof fact === 'string' ? toFiniteNumber(fact) : undefined
  if (n === undefined) return NOPE
  if (c.chType.includes('Int32') && !(Number.isInteger(n) && Math.abs(n) < 2 ** 31)) return NOPE
  return n
}

export function isStorable(v: Stored): boolean {
  return v !== NOPE
}
