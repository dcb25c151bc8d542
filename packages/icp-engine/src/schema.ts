// The zod schema of the rule language. Structural checks live here; the comparator x value table
// lives in values.ts and runs inside the condition transform so its issues carry full JSON paths.

// A namespace import lets bundlers drop the parts of zod the schemas never use (97 KB -> 25 KB gzipped).
import * as z from 'zod'
import { COMPARATORS, CONDITION_TYPES, type Condition, type Group, LIMITS, type Rules } from './types.js'
import { checkCondition } from './values.js'

const enumError = (what: string, allowed: readonly string[]) => (issue: { input?: unknown }) =>
  `unknown ${what} ${JSON.stringify(issue.input) ?? String(issue.input)}; expected one of: ${allowed.join(', ')}`

/** Weights become integer hundredths internally, so scores are exact in JS and in SQL alike. */
const weightSchema = z.number({ error: 'weight must be a finite number' }).check((ctx) => {
  const w = ctx.value
  const units = Math.round(w * 100)
  if (w <= 0 || w > LIMITS.maxWeight || units < 1 || Math.abs(w * 100 - units) > 1e-6) {
    const message = `weight must be a positive multiple of 0.01, at most ${LIMITS.maxWeight}; got ${w}`
    ctx.issues.push({ code: 'custom', message, input: w })
  }
})

/** Schema of one condition: `{ type, comparator, value, optional?, weight? }`. */
export const conditionSchema = z
  .strictObject({
    type: z.enum(CONDITION_TYPES, { error: enumError('condition type', CONDITION_TYPES) }),
    comparator: z.enum(COMPARATORS, { error: enumError('comparator', COMPARATORS) }),
    value: z.unknown().optional(),
    optional: z.boolean({ error: 'optional must be true or false' }).optional(),
    weight: weightSchema.optional(),
  })
  .transform((input, ctx): Condition => {
    const checked = checkCondition(input.type, input.comparator, input.value)
    if (!checked.ok) {
      for (const issue of checked.issues) {
        ctx.issues.push({ code: 'custom', message: issue.message, path: issue.segments, input: input.value })
      }
      return z.NEVER
    }
    return {
      type: input.type,
      comparator: input.comparator,
      value: checked.value,
      optional: input.optional ?? false,
      weight: input.weight === undefined ? 1 : Math.round(input.weight * 100) / 100,
    }
  })

/** Schema of one group: `{ operator: 'AND' | 'OR', conditions: [...] }`. */
export const groupSchema = z.strictObject({
  operator: z.enum(['AND', 'OR'], { error: enumError('operator', ['AND', 'OR']) }),
  conditions: z
    .array(conditionSchema, { error: 'conditions must be an array' })
    .min(1, { error: 'a group needs at least one condition' })
    .max(LIMITS.conditionsPerGroup, {
      error: `a group holds at most ${LIMITS.conditionsPerGroup} conditions`,
    }),
}) satisfies z.ZodType<Group, unknown>

/** Schema of a whole rule set; parses to normalized `Rules`. Prefer `parseRules`, which also freezes. */
export const rulesSchema = z.strictObject(
  {
    groups: z
      .array(groupSchema, { error: 'groups must be an array' })
      .min(1, { error: 'rules need at least one group' })
      .max(LIMITS.groups, { error: `rules hold at most ${LIMITS.groups} groups` }),
  },
  // Only the type error gets a custom text; unknown keys keep zod's message, which names the key.
  {
    error: (issue) =>
      issue.code === 'invalid_type' ? 'rules must be an object with a groups array' : undefined,
  },
) satisfies z.ZodType<Rules, unknown>
