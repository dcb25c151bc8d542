// compileRules: same results as evaluate, with every per-rule decision taken once up front.

import { parseRules } from './parse.js'
import { type CompiledTest, compileCondition, runTest, TEXT_CACHE_BUDGET } from './predicates.js'
import { groupScore, weightUnits } from './score.js'
import type { Condition, ConditionResult, Evaluation, Facts, GroupResult, Rules } from './types.js'

/** A compiled rule set: call it for a full `Evaluation`, or use the allocation-free shortcuts. */
export interface CompiledRules {
  (facts: Facts): Evaluation
  /** The parsed rules this evaluator was built from. */
  readonly rules: Rules
  /** Only `matched`, short-circuiting and allocation-free: `compiled.matches(facts)`. */
  matches(facts: Facts): boolean
  /** Only `score`, allocation-free: `compiled.score(facts)`. */
  score(facts: Facts): number
}

interface CompiledCondition {
  /** The two possible results, frozen and shared by every call, so results cost no allocation. */
  readonly passedResult: ConditionResult
  readonly failedResult: ConditionResult
  readonly test: CompiledTest
  readonly optional: boolean
  readonly units: number
}

interface CompiledGroup {
  readonly isAnd: boolean
  readonly hasRequired: boolean
  readonly totalUnits: number
  readonly conditions: readonly CompiledCondition[]
}

/** Compiles rules once for many evaluations: `const fit = compileRules(rules); fit(facts).score`. */
export function compileRules(rules: Rules): CompiledRules {
  const valid = parseRules(rules)
  const groups = compileGroups(valid)
  return Object.assign(evaluatorOf(groups), {
    rules: valid,
    matches: matcherOf(groups),
    score: scorerOf(groups),
  })
}

/** Every per-rule decision taken once: each condition's test, weight units and frozen results. */
function compileGroups(valid: Rules): CompiledGroup[] {
  const conditionCount = valid.groups.reduce((n, g) => n + g.conditions.length, 0)
  const textCacheLimit = Math.max(16, Math.floor(TEXT_CACHE_BUDGET / conditionCount))
  return valid.groups.map((group) => {
    const conditions = group.conditions.map((c) => ({
      passedResult: frozenResult(c, true),
      failedResult: frozenResult(c, false),
      test: compileCondition(c, textCacheLimit),
      optional: c.optional,
      units: weightUnits(c.weight),
    }))
    return {
      isAnd: group.operator === 'AND',
      hasRequired: conditions.some((c) => !c.optional),
      totalUnits: conditions.reduce((sum, c) => sum + c.units, 0),
      conditions,
    }
  })
}

/** The full `Evaluation`: every condition of every group runs. */
function evaluatorOf(groups: readonly CompiledGroup[]): (facts: Facts) => Evaluation {
  return (facts) => {
    let matched = false
    let best = 0
    // Exact-size arrays and indexed loops: measurably cheaper than push and for-of here.
    const groupResults = new Array<GroupResult>(groups.length)
    for (let gi = 0; gi < groups.length; gi++) {
      const g = groups[gi] as CompiledGroup
      const conditions = g.conditions
      const conditionResults = new Array<ConditionResult>(conditions.length)
      let passedUnits = 0
      let anyRequired = false
      let allRequired = true
      for (let ci = 0; ci < conditions.length; ci++) {
        const c = conditions[ci] as CompiledCondition
        const passed = runTest(c.test, facts)
        conditionResults[ci] = passed ? c.passedResult : c.failedResult
        if (passed) passedUnits += c.units
        if (!c.optional) {
          if (passed) anyRequired = true
          else allRequired = false
        }
      }
      const groupMatched = !g.hasRequired || (g.isAnd ? allRequired : anyRequired)
      const score = groupScore(passedUnits, g.totalUnits)
      if (groupMatched) {
        matched = true
        if (score > best) best = score
      }
      groupResults[gi] = { matched: groupMatched, score, conditions: conditionResults }
    }
    return { matched, score: best, groups: groupResults }
  }
}

/** Only `matched`: stops at the first group that matches. */
function matcherOf(groups: readonly CompiledGroup[]): (facts: Facts) => boolean {
  return (facts) => {
    for (const g of groups) if (groupMatches(g, facts)) return true
    return false
  }
}

/** Only `score`: the best score of the groups that match. */
function scorerOf(groups: readonly CompiledGroup[]): (facts: Facts) => number {
  return (facts) => {
    let best = 0
    for (const g of groups) {
      if (best === 100) break // nothing can beat it
      // One pass per group: each condition runs once and feeds both the match and the score.
      let passedUnits = 0
      let anyRequired = false
      let allRequired = true
      for (const c of g.conditions) {
        if (runTest(c.test, facts)) {
          passedUnits += c.units
          if (!c.optional) anyRequired = true
        } else if (!c.optional) {
          allRequired = false
        }
      }
      if (g.hasRequired && !(g.isAnd ? allRequired : anyRequired)) continue
      const s = groupScore(passedUnits, g.totalUnits)
      if (s > best) best = s
    }
    return best
  }
}

function frozenResult(c: Condition, passed: boolean): ConditionResult {
  return Object.freeze({ type: c.type, comparator: c.comparator, optional: c.optional, passed })
}

function groupMatches(g: CompiledGroup, facts: Facts): boolean {
  if (!g.hasRequired) return true
  for (const c of g.conditions) {
    if (c.optional) continue
    const passed = runTest(c.test, facts)
    if (g.isAnd && !passed) return false
    if (!g.isAnd && passed) return true
  }
  return g.isAnd
}
