// Which comparator fits which condition type, and how a raw `value` is checked and normalized.
// Kept apart from the zod schema so the rules of the language read as one table.

import { isWellFormed, toFiniteNumber } from './facts.js'
import {
  type Comparator,
  type ConditionType,
  type ConditionValue,
  kindOf,
  LIMITS,
  type ValueKind,
} from './types.js'

type Family = 'existence' | 'equality' | 'text' | 'order' | 'list' | 'range'

const FAMILY: Record<Comparator, Family> = {
  exists: 'existence',
  not_exists: 'existence',
  equals: 'equality',
  not_equals: 'equality',
  contains: 'text',
  not_contains: 'text',
  starts_with: 'text',
  ends_with: 'text',
  gt: 'order',
  gte: 'order',
  lt: 'order',
  lte: 'order',
  in: 'list',
  not_in: 'list',
  has_any: 'list',
  has_all: 'list',
  between: 'range',
}

const ALLOWED: Record<ValueKind, readonly Family[]> = {
  string: ['existence', 'equality', 'text', 'list'],
  number: ['existence', 'equality', 'order', 'list', 'range'],
  boolean: ['existence', 'equality'],
}

/** Comparators legal for a condition type, e.g. `comparatorsFor('is_hosting')` is equals, not_equals, exists, not_exists. */
export function comparatorsFor(type: ConditionType): Comparator[] {
  const families = ALLOWED[kindOf(type)]
  return (Object.keys(FAMILY) as Comparator[]).filter((c) => families.includes(FAMILY[c]))
}

export interface ValueIssue {
  segments: (string | number)[]
  message: string
}

export type ValueCheck = { ok: true; value: ConditionValue } | { ok: false; issues: ValueIssue[] }

/** Checks a condition's comparator and value together: `checkCondition('company_size', 'gt', '500')` gives `{ ok: true, value: 500 }`. */
export function checkCondition(type: ConditionType, comparator: Comparator, raw: unknown): ValueCheck {
  const kind = kindOf(type)
  const family = FAMILY[comparator]
  if (!ALLOWED[kind].includes(family)) {
    const message = `comparator "${comparator}" does not apply to ${type} (a ${kind} condition type); use one of: ${comparatorsFor(type).join(', ')}`
    return { ok: false, issues: [{ segments: ['comparator'], message }] }
  }
  const issues: ValueIssue[] = []
  const value = checkValue(type, kind, family, raw, issues)
  return issues.length > 0 || value === undefined ? { ok: false, issues } : { ok: true, value }
}

function checkValue(
  type: ConditionType,
  kind: ValueKind,
  family: Family,
  raw: unknown,
  issues: ValueIssue[],
): ConditionValue | undefined {
  switch (family) {
    case 'existence':
      // `exists` without a value reads naturally as "exists: true".
      if (raw === undefined) return true
      if (typeof raw === 'boolean') return raw
      issues.push({ segments: ['value'], message: 'must be true or false' })
      return undefined
    case 'equality':
      return checkScalar(type, kind, raw, ['value'], issues)
    case 'text':
      return checkString(raw, ['value'], issues, 'must be a non-empty string')
    case 'order':
      return checkNumber(type, raw, ['value'], issues)
    case 'list':
      return checkList(type, kind, raw, issues)
    case 'range':
      return checkRange(type, raw, issues)
  }
}

function checkScalar(
  type: ConditionType,
  kind: ValueKind,
  raw: unknown,
  segments: (string | number)[],
  issues: ValueIssue[],
): string | number | boolean | undefined {
  if (kind === 'boolean') {
    if (typeof raw === 'boolean') return raw
    issues.push({ segments, message: 'must be true or false' })
    return undefined
  }
  if (kind === 'number') return checkNumber(type, raw, segments, issues)
  // A number on a string type is compared as its decimal text (equals 75001 on company_postal_code).
  if (typeof raw === 'number' && Number.isFinite(raw)) return String(raw)
  return checkString(raw, segments, issues, 'must be a non-empty string or a finite number')
}

function checkString(
  raw: unknown,
  segments: (string | number)[],
  issues: ValueIssue[],
  expected: string,
): string | undefined {
  if (typeof raw !== 'string') {
    issues.push({ segments, message: `${expected}, got ${describe(raw)}` })
  } else if (raw === '') {
    // Facts equal to "" are missing, so an empty value could never match (or, for contains, would
    // mean "exists"): reject it rather than let it silently do something surprising.
    issues.push({ segments, message: `${expected}; "" is not allowed (use exists / not_exists)` })
  } else if (raw.length > LIMITS.stringLength) {
    issues.push({ segments, message: `must be at most ${LIMITS.stringLength} characters, got ${raw.length}` })
  } else if (!isWellFormed(raw)) {
    issues.push({ segments, message: 'must be well-formed Unicode (lone surrogate found)' })
  } else {
    return raw
  }
  return undefined
}

function checkNumber(
  type: ConditionType,
  raw: unknown,
  segments: (string | number)[],
  issues: ValueIssue[],
): number | undefined {
  const n = typeof raw === 'number' || typeof raw === 'string' ? toFiniteNumber(raw) : undefined
  if (n === undefined) {
    issues.push({ segments, message: `must be a finite number (or a numeric string), got ${describe(raw)}` })
    return undefined
  }
  if (type === 'icp_score' && (n < 0 || n > 100)) {
    issues.push({ segments, message: `icp_score values must be between 0 and 100, got ${n}` })
    return undefined
  }
  return n + 0 // -0 becomes 0, so sets and SQL arrays never see a negative zero
}

function checkList(
  type: ConditionType,
  kind: ValueKind,
  raw: unknown,
  issues: ValueIssue[],
): string[] | number[] | undefined {
  if (!Array.isArray(raw)) {
    issues.push({ segments: ['value'], message: `must be an array, got ${describe(raw)}` })
    return undefined
  }
  if (raw.length === 0 || raw.length > LIMITS.valuesPerList) {
    const message = `must hold 1 to ${LIMITS.valuesPerList} values, got ${raw.length}`
    issues.push({ segments: ['value'], message })
    return undefined
  }
  const before = issues.length
  const out = raw.map((element, i) => checkScalar(type, kind, element, ['value', i], issues))
  return issues.length === before ? (out as string[] | number[]) : undefined
}

function checkRange(type: ConditionType, raw: unknown, issues: ValueIssue[]): number[] | undefined {
  if (!Array.isArray(raw) || raw.length !== 2) {
    const message = `must be a two-element array [min, max], got ${describe(raw)}`
    issues.push({ segments: ['value'], message })
    return undefined
  }
  const before = issues.length
  const min = checkNumber(type, raw[0], ['value', 0], issues)
  const max = checkNumber(type, raw[1], ['value', 1], issues)
  if (issues.length > before || min === undefined || max === undefined) return undefined
  if (min > max) {
    issues.push({ segments: ['value'], message: `min must be <= max, got [${min}, ${max}]` })
    return undefined
  }
  return [min, max]
}

function describe(raw: unknown): string {
  if (Array.isArray(raw)) return `an array of ${raw.length}`
  if (raw === null) return 'null'
  if (typeof raw === 'string') return raw.length > 40 ? 'a long string' : JSON.stringify(raw)
  if (typeof raw === 'number') return String(raw)
  return typeof raw
}
