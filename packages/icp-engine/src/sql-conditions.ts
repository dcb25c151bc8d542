// One condition as a ClickHouse expression that is never NULL and equals conditionPasses().
// Missing facts are mapped to '' (text) or nan (numbers) first: no rule value is '' and every
// comparison with nan is false, so each positive comparator fails on a missing fact by itself and
// each negative comparator can simply be NOT of the positive one, exactly as in evaluate.ts.

import { SqlCompileError } from './errors.js'
import { fold, NUMERIC_PATTERN } from './facts.js'
import type { Comparator, Condition, ValueKind } from './types.js'
import { kindOf } from './types.js'

/** A fact column as `toClickHouseSql` needs it. */
export interface SqlColumn {
  /** SQL expression reading the fact, trusted developer input: `industry`, `props['industry']`. */
  readonly sql: string
  /** True for an `Array(...)` column holding a multi-valued fact. */
  readonly array?: boolean
  /**
   * How the column stores values; defaults to the condition type's kind. Use `'string'` for a
   * numeric condition type held as text: values are parsed with the same numeric-string rule as JS.
   */
  readonly storage?: ValueKind
}

/** Registers a query parameter and returns its `{name:Type}` placeholder. */
export type AddParam = (type: string, value: unknown) => string

// Lambda variable with a prefix unlikely to clash with a column referenced inside the lambda body.
const X = '_icp_x'

/** SQL expression of one condition, 0 or 1: `conditionSql(cond, { sql: 'industry' }, addParam)`. */
export function conditionSql(condition: Condition, column: SqlColumn, addParam: AddParam): string {
  const kind = kindOf(condition.type)
  const storage = column.storage ?? kind
  const array = column.array === true
  checkStorage(condition, kind, storage, array)
  const col = `(${column.sql})`
  switch (condition.comparator) {
    case 'exists':
    case 'not_exists': {
      const present = presence(col, storage, array)
      const wantPresent = (condition.comparator === 'exists') === condition.value
      return wantPresent ? present : `(NOT ${present})`
    }
    case 'not_equals':
      return `(NOT ${positive(condition, 'equals', col, storage, array, addParam)})`
    case 'not_contains':
      return `(NOT ${positive(condition, 'contains', col, storage, array, addParam)})`
    case 'not_in':
      return `(NOT ${positive(condition, 'in', col, storage, array, addParam)})`
    default:
      return positive(condition, condition.comparator, col, storage, array, addParam)
  }
}

function checkStorage(condition: Condition, kind: ValueKind, storage: ValueKind, array: boolean): void {
  const ok =
    (kind === 'string' && storage === 'string') ||
    (kind === 'number' && (storage === 'number' || storage === 'string')) ||
    (kind === 'boolean' && storage === 'boolean' && !array)
  if (!ok) {
    const what = `${array ? 'an array ' : 'a '}${storage} column`
    throw new SqlCompileError(`condition type ${condition.type} (${kind}) cannot read ${what}`)
  }
}

function presence(col: string, storage: ValueKind, array: boolean): string {
  if (storage === 'string') {
    return array ? `arrayExists(${X} -> ifNull(${X}, '') != '', ${col})` : `(ifNull(${col}, '') != '')`
  }
  return array ? `arrayExists(${X} -> isNotNull(${X}), ${col})` : `isNotNull(${col})`
}

/** Lowercased text of an element, '' when missing. */
function text(e: string): string {
  return `lowerUTF8(ifNull(${e}, ''))`
}

/** Float64 of an element, nan when missing or not a numeric string (infinities are filtered by callers). */
function number(e: string, storage: ValueKind): string {
  if (storage === 'number') return `ifNull(toFloat64(${e}), nan)`
  const s = `ifNull(${e}, '')`
  // match() first, so strings toFloat64OrNull would accept but JS would not ('inf', ' 1') stay missing.
  return `ifNull(toFloat64OrNull(if(match(${s}, '${NUMERIC_PATTERN}'), ${s}, '')), nan)`
}

function positive(
  condition: Condition,
  comparator: Comparator,
  col: string,
  storage: ValueKind,
  array: boolean,
  addParam: AddParam,
): string {
  const kind = kindOf(condition.type)
  if (kind === 'boolean') {
    return `(ifNull(toUInt8(${col}), 2) = ${addParam('UInt8', condition.value ? 1 : 0)})`
  }
  const element = (e: string) => (kind === 'number' ? number(e, storage) : text(e))
  if (comparator === 'has_all') {
    const type = kind === 'number' ? 'Array(Float64)' : 'Array(String)'
    const wanted = addParam(type, kind === 'number' ? numberListParam(condition) : textListParam(condition))
    const values = array ? `arrayMap(${X} -> ${element(X)}, ${col})` : `[${element(col)}]`
    return `hasAll(${values}, ${wanted})`
  }
  const test =
    kind === 'number'
      ? numberTest(comparator, condition, addParam)
      : textTest(comparator, condition, addParam)
  return array ? `arrayExists(${X} -> ${test(element(X))}, ${col})` : test(element(col))
}

function textListParam(condition: Condition): string[] {
  // Pre-fold text values so the engine folds only the column side.
  return (condition.value as readonly string[]).map(fold)
}

/**
 * Numbers travel as their JS decimal text (shortest round-trip form, which ClickHouse parses back
 * to the same double): some clients refuse to serialize numbers beyond 2^53, and text is exact.
 */
function numberParam(n: number): string {
  return String(n)
}

function numberListParam(condition: Condition): string {
  return `[${(condition.value as readonly number[]).map(numberParam).join(',')}]`
}

function numberTest(comparator: Comparator, condition: Condition, addParam: AddParam): (v: string) => string {
  const value = condition.value
  if (comparator === 'in' || comparator === 'has_any') {
    const p = addParam('Array(Float64)', numberListParam(condition))
    return (v) => `has(${p}, ${v})` // has() treats -0 and 0 as equal, IN does not
  }
  if (comparator === 'between') {
    const [min, max] = value as readonly number[]
    const a = addParam('Float64', numberParam(min as number))
    const b = addParam('Float64', numberParam(max as number))
    return (v) => `(isFinite(${v}) AND ${v} >= ${a} AND ${v} <= ${b})`
  }
  const op = { equals: '=', gt: '>', gte: '>=', lt: '<', lte: '<=' }[comparator as 'equals']
  if (op === undefined) throw new SqlCompileError(`comparator ${comparator} is not numeric`)
  const p = addParam('Float64', numberParam(value as number))
  return (v) => `(isFinite(${v}) AND ${v} ${op} ${p})`
}

function textTest(comparator: Comparator, condition: Condition, addParam: AddParam): (v: string) => string {
  if (comparator === 'in' || comparator === 'has_any') {
    const p = addParam('Array(String)', textListParam(condition))
    // IN, not has(): the engine tests IN on a dictionary column's distinct values once, where has()
    // runs per row (bench/lists/RESULTS.md, "Why the code is as it is").
    return (v) => `(${v} IN ${p})`
  }
  const p = addParam('String', fold(condition.value as string))
  switch (comparator) {
    case 'equals':
      return (v) => `(${v} = ${p})`
    case 'contains':
      return (v) => `(position(${v}, ${p}) > 0)`
    case 'starts_with':
      return (v) => `startsWith(${v}, ${p})`
    case 'ends_with':
      return (v) => `endsWith(${v}, ${p})`
    default:
      throw new SqlCompileError(`comparator ${comparator} is not a text comparator`)
  }
}
