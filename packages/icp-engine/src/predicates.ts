// Compiled conditions for compileRules. All per-rule work (folding values, building sets and
// lookup maps) happens once in compileCondition. Tests are plain objects of one shape run by one
// switch rather than a closure per condition, so call sites stay monomorphic and V8 inlines them.
// Per call, nothing is allocated except, on a text-cache miss, the lowercased copy of a fact.

import { fold, isPresent, toFiniteNumber } from './facts.js'
import type { Comparator, Condition, FactKey, Facts } from './types.js'
import { factKeyOf, kindOf } from './types.js'

// Operation codes; numeric ones are all >= NumEquals.
const Op = {
  Exists: 0,
  BoolEquals: 1,
  TextEquals: 2,
  TextContains: 3,
  TextStartsWith: 4,
  TextEndsWith: 5,
  TextIn: 6,
  TextHasAll: 7,
  NumEquals: 8,
  NumGt: 9,
  NumGte: 10,
  NumLt: 11,
  NumLte: 12,
  NumBetween: 13,
  NumIn: 14,
  NumHasAll: 15,
} as const
type Op = (typeof Op)[keyof typeof Op]

/** One condition, ready to run: every field is set so all tests share one hidden class. */
export interface CompiledTest {
  readonly op: Op
  readonly read: (facts: Facts) => unknown
  /** Result is flipped: not_equals, not_contains, not_in, not_exists, exists false. */
  readonly negate: boolean
  readonly bool: boolean
  readonly text: string
  readonly min: number
  readonly max: number
  readonly textSet: ReadonlyMap<string, number>
  readonly numSet: ReadonlyMap<number, number>
  /** has_all: distinct wanted values, and per-slot stamps of the call that last saw them. */
  readonly needed: number
  readonly stamps: Float64Array
  stamp: number
  /**
   * Outcome per raw text fact. Text facts are mostly categorical (industry, country, utm_source),
   * and a hit skips lowercasing and hashing a fresh string; bounded so memory stays flat.
   */
  readonly textCache: Map<string, boolean>
  readonly textCacheLimit: number
}

/** Total text-cache entries one compiled rule set may hold, shared among its text conditions. */
export const TEXT_CACHE_BUDGET = 65_536

// A named property read per fact key: one keyed read `facts[key]` shared by every condition
// would go megamorphic, each of these stays monomorphic for a given facts shape.
const READERS: Record<FactKey, (facts: Facts) => unknown> = {
  utm_source: (f) => f.utm_source,
  utm_medium: (f) => f.utm_medium,
  utm_campaign: (f) => f.utm_campaign,
  utm_term: (f) => f.utm_term,
  utm_content: (f) => f.utm_content,
  pages: (f) => f.pages,
  page_view_count: (f) => f.page_view_count,
  session_count: (f) => f.session_count,
  last_seen_days: (f) => f.last_seen_days,
  industry: (f) => f.industry,
  domain: (f) => f.domain,
  job_title: (f) => f.job_title,
  linkedin_url: (f) => f.linkedin_url,
  country: (f) => f.country,
  region: (f) => f.region,
  city: (f) => f.city,
  employee_size_range: (f) => f.employee_size_range,
  company_city: (f) => f.company_city,
  company_region: (f) => f.company_region,
  company_postal_code: (f) => f.company_postal_code,
  company_size: (f) => f.company_size,
  icp_match: (f) => f.icp_match,
  persona_match: (f) => f.persona_match,
  icp_score: (f) => f.icp_score,
  is_hosting: (f) => f.is_hosting,
  is_anonymous: (f) => f.is_anonymous,
  company_country: (f) => f.company_country,
  revenue_range: (f) => f.revenue_range,
  seniority: (f) => f.seniority,
  department: (f) => f.department,
  contact_country: (f) => f.contact_country,
}

const TEXT_OPS: Partial<Record<Comparator, Op>> = {
  equals: Op.TextEquals,
  contains: Op.TextContains,
  starts_with: Op.TextStartsWith,
  ends_with: Op.TextEndsWith,
  in: Op.TextIn,
  has_any: Op.TextIn,
  has_all: Op.TextHasAll,
}
const NUM_OPS: Partial<Record<Comparator, Op>> = {
  equals: Op.NumEquals,
  gt: Op.NumGt,
  gte: Op.NumGte,
  lt: Op.NumLt,
  lte: Op.NumLte,
  between: Op.NumBetween,
  in: Op.NumIn,
  has_any: Op.NumIn,
  has_all: Op.NumHasAll,
}
const POSITIVE: Partial<Record<Comparator, Comparator>> = {
  not_equals: 'equals',
  not_contains: 'contains',
  not_in: 'in',
}

/** Prepares one condition: `runTest(compileCondition(c), facts) === conditionPasses(c, facts)`. */
export function compileCondition(condition: Condition, textCacheLimit = 1024): CompiledTest {
  const positive = POSITIVE[condition.comparator]
  const comparator = positive ?? condition.comparator
  const kind = kindOf(condition.type)
  const value = condition.value
  const list = Array.isArray(value) ? (value as readonly (string | number)[]) : []
  const textSet = new Map<string, number>()
  const numSet = new Map<number, number>()
  for (const v of list) {
    if (typeof v === 'string' && !textSet.has(fold(v))) textSet.set(fold(v), textSet.size)
    if (typeof v === 'number' && !numSet.has(v)) numSet.set(v, numSet.size)
  }
  const existence = comparator === 'exists' || comparator === 'not_exists'
  const op = existence
    ? Op.Exists
    : kind === 'boolean'
      ? Op.BoolEquals
      : ((kind === 'number' ? NUM_OPS : TEXT_OPS)[comparator] as Op)
  const needed = Math.max(textSet.size, numSet.size)
  return {
    op,
    read: READERS[factKeyOf(condition.type)],
    // exists true / not_exists false test presence; the other two test absence.
    negate: existence ? (comparator === 'exists') !== value : positive !== undefined,
    bool: value === true,
    text: typeof value === 'string' ? fold(value) : '',
    min: typeof value === 'number' ? value : ((list[0] as number | undefined) ?? 0),
    max: (list[1] as number | undefined) ?? 0,
    textSet,
    numSet,
    needed,
    stamps: new Float64Array(needed),
    stamp: 0,
    textCache: new Map(),
    textCacheLimit,
  }
}

/** Runs a compiled condition against one visitor's facts. */
export function runTest(t: CompiledTest, facts: Facts): boolean {
  return t.negate !== run(t, t.read(facts))
}

function run(t: CompiledTest, raw: unknown): boolean {
  const op = t.op
  if (op === Op.Exists) return isPresent(raw)
  if (op === Op.BoolEquals) return raw === t.bool
  if (op === Op.TextHasAll || op === Op.NumHasAll) return hasAll(t, raw)
  const numeric = op >= Op.NumEquals
  if (!Array.isArray(raw)) return numeric ? numberPasses(t, toFiniteNumber(raw)) : textPasses(t, raw)
  for (let i = 0; i < raw.length; i++) {
    if (numeric ? numberPasses(t, toFiniteNumber(raw[i])) : textPasses(t, raw[i])) return true
  }
  return false
}

function textPasses(t: CompiledTest, raw: unknown): boolean {
  if (typeof raw !== 'string' || raw === '') return false
  const cached = t.textCache.get(raw)
  if (cached !== undefined) return cached
  const passed = foldedPasses(t, fold(raw))
  if (t.textCache.size < t.textCacheLimit) t.textCache.set(raw, passed)
  return passed
}

function foldedPasses(t: CompiledTest, s: string): boolean {
  switch (t.op) {
    case Op.TextEquals:
      return s === t.text
    case Op.TextContains:
      return s.includes(t.text)
    case Op.TextStartsWith:
      return s.startsWith(t.text)
    case Op.TextEndsWith:
      return s.endsWith(t.text)
    default:
      return t.textSet.has(s) // in, has_any
  }
}

function numberPasses(t: CompiledTest, n: number | undefined): boolean {
  if (n === undefined) return false
  switch (t.op) {
    case Op.NumEquals:
      return n === t.min
    case Op.NumGt:
      return n > t.min
    case Op.NumGte:
      return n >= t.min
    case Op.NumLt:
      return n < t.min
    case Op.NumLte:
      return n <= t.min
    case Op.NumBetween:
      return n >= t.min && n <= t.max
    default:
      return t.numSet.has(n) // in, has_any
  }
}

/**
 * has_all without a per-call Set: a wanted value counts as seen when its slot holds the current
 * call's stamp, so nothing needs clearing between calls. A scalar fact is a one-element array.
 */
function hasAll(t: CompiledTest, raw: unknown): boolean {
  if (!Array.isArray(raw)) return t.needed === 1 && slotOf(t, raw) !== undefined
  const stamp = ++t.stamp
  let seen = 0
  for (let i = 0; i < raw.length; i++) {
    const slot = slotOf(t, raw[i])
    if (slot !== undefined && t.stamps[slot] !== stamp) {
      t.stamps[slot] = stamp
      if (++seen === t.needed) return true
    }
  }
  return false
}

function slotOf(t: CompiledTest, x: unknown): number | undefined {
  if (t.op === Op.NumHasAll) {
    const n = toFiniteNumber(x)
    return n === undefined ? undefined : t.numSet.get(n)
  }
  return typeof x === 'string' && x !== '' ? t.textSet.get(fold(x)) : undefined
}
