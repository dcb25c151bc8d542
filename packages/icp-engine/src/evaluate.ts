// The reference evaluator: a direct, unoptimized reading of the semantics in the README.
// compile.ts must agree with it on every input, and the property tests check that it does.

import { fold, isPresent, toFiniteNumber } from './facts.js'
import { parseRules } from './parse.js'
import { groupScore, weightUnits } from './score.js'
import {
  type Comparator,
  type Condition,
  type Evaluation,
  type Facts,
  factKeyOf,
  type GroupResult,
  kindOf,
  type Rules,
} from './types.js'

/** Evaluates rules against one visitor's facts: `evaluate(rules, { industry: 'SaaS' }).matched`. */
export function evaluate(rules: Rules, facts: Facts): Evaluation {
  const valid = parseRules(rules) // free for parsed rules; validates hand-built ones
  const groups: GroupResult[] = valid.groups.map((group) => {
    const conditions = group.conditions.map((c) => ({
      type: c.type,
      comparator: c.comparator,
      optional: c.optional,
      passed: conditionPasses(c, facts),
    }))
    const required = conditions.filter((c) => !c.optional)
    const matched =
      required.length === 0 ||
      (group.operator === 'AND' ? required.every((c) => c.passed) : required.some((c) => c.passed))
    let passedUnits = 0
    let totalUnits = 0
    group.conditions.forEach((c, i) => {
      totalUnits += weightUnits(c.weight)
      if (conditions[i]?.passed) passedUnits += weightUnits(c.weight)
    })
    return { matched, score: groupScore(passedUnits, totalUnits), conditions }
  })
  const matchedScores = groups.filter((g) => g.matched).map((g) => g.score)
  return {
    matched: matchedScores.length > 0,
    score: matchedScores.length > 0 ? Math.max(...matchedScores) : 0,
    groups,
  }
}

/** Whether one condition passes for the given facts: `conditionPasses(cond, facts)`. */
export function conditionPasses(condition: Condition, facts: Facts): boolean {
  const fact: unknown = facts[factKeyOf(condition.type)]
  switch (condition.comparator) {
    case 'exists':
      return isPresent(fact) === condition.value
    case 'not_exists':
      return isPresent(fact) !== condition.value
    // Negative forms are exact negations, so a missing fact passes them and an array passes only
    // when no element satisfies the positive form.
    case 'not_equals':
      return !positive(condition, 'equals', fact)
    case 'not_contains':
      return !positive(condition, 'contains', fact)
    case 'not_in':
      return !positive(condition, 'in', fact)
    default:
      return positive(condition, condition.comparator, fact)
  }
}

function positive(condition: Condition, comparator: Comparator, fact: unknown): boolean {
  const kind = kindOf(condition.type)
  const value = condition.value
  if (kind === 'boolean') return typeof fact === 'boolean' && fact === value
  const elements: unknown[] = Array.isArray(fact) ? fact : [fact]
  if (kind === 'number') {
    const facts = elements.map(toFiniteNumber).filter((n): n is number => n !== undefined)
    return numberPasses(comparator, value, facts)
  }
  const facts = elements.filter((e): e is string => typeof e === 'string' && e !== '').map(fold)
  return stringPasses(comparator, value, facts)
}

function numberPasses(comparator: Comparator, value: Condition['value'], facts: number[]): boolean {
  const list = Array.isArray(value) ? (value as number[]) : []
  const n = value as number
  switch (comparator) {
    case 'equals':
      return facts.some((f) => f === n)
    case 'gt':
      return facts.some((f) => f > n)
    case 'gte':
      return facts.some((f) => f >= n)
    case 'lt':
      return facts.some((f) => f < n)
    case 'lte':
      return facts.some((f) => f <= n)
    case 'between':
      return facts.some((f) => f >= (list[0] as number) && f <= (list[1] as number))
    case 'in':
    case 'has_any':
      return facts.some((f) => list.includes(f))
    case 'has_all':
      return facts.length > 0 && list.every((v) => facts.includes(v))
    default:
      return false
  }
}

function stringPasses(comparator: Comparator, value: Condition['value'], facts: string[]): boolean {
  const list = Array.isArray(value) ? (value as string[]).map(fold) : []
  const s = typeof value === 'string' ? fold(value) : ''
  switch (comparator) {
    case 'equals':
      return facts.some((f) => f === s)
    case 'contains':
      return facts.some((f) => f.includes(s))
    case 'starts_with':
      return facts.some((f) => f.startsWith(s))
    case 'ends_with':
      return facts.some((f) => f.endsWith(s))
    case 'in':
    case 'has_any':
      return facts.some((f) => list.includes(f))
    case 'has_all':
      return facts.length > 0 && list.every((v) => facts.includes(v))
    default:
      return false
  }
}
