import { RulesError, type RulesIssue } from './errors.js'
import { rulesSchema } from './schema.js'
import type { Rules } from './types.js'

// Rules that came out of parseRules are deep-frozen and remembered here, so evaluate/compile/SQL
// can trust them without validating again, and can still validate anything else they are handed.
const parsed = new WeakSet<object>()

export type SafeParseResult = { success: true; rules: Rules } | { success: false; error: RulesError }

/** Validates and normalizes rules without throwing: `safeParseRules(input).success`. */
export function safeParseRules(input: unknown): SafeParseResult {
  if (typeof input === 'object' && input !== null && parsed.has(input)) {
    return { success: true, rules: input as Rules }
  }
  const result = rulesSchema.safeParse(input)
  if (!result.success) {
    const issues: RulesIssue[] = result.error.issues.map((issue) => {
      const segments = issue.path.map((s) => (typeof s === 'symbol' ? String(s) : s))
      return { path: segments.join('.'), segments, message: issue.message }
    })
    return { success: false, error: new RulesError(issues) }
  }
  const rules = deepFreeze(result.data)
  parsed.add(rules)
  return { success: true, rules }
}

/** Validates and normalizes rules, throwing a `RulesError` listing every issue: `parseRules({ groups: [...] })`. */
export function parseRules(input: unknown): Rules {
  const result = safeParseRules(input)
  if (!result.success) throw result.error
  return result.rules
}

/** True when `rules` came from `parseRules` (and so is frozen and valid): `isParsedRules(parseRules(x)) === true`. */
export function isParsedRules(rules: unknown): rules is Rules {
  return typeof rules === 'object' && rules !== null && parsed.has(rules)
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child)
    Object.freeze(value)
  }
  return value
}
