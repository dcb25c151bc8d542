import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  CONDITION_TYPES,
  type Comparator,
  type Condition,
  type ConditionType,
  compileRules,
  conditionPasses,
  evaluate,
  type Facts,
  factKeyOf,
  isPresent,
  kindOf,
  parseRules,
  type Rules,
} from '../index.js'
import { factsArb, factValueArb, numberArb, rulesInputArb, textArb } from './arbitraries.js'

const RUNS = { numRuns: 300 }
const NUMBER_TYPES = CONDITION_TYPES.filter((t) => kindOf(t) === 'number' && t !== 'icp_score')
const STRING_TYPES = CONDITION_TYPES.filter((t) => kindOf(t) === 'string')
const BOOLEAN_TYPES = CONDITION_TYPES.filter((t) => kindOf(t) === 'boolean')

/** One parsed condition, so values are normalized exactly as in real rules. */
function condition(type: ConditionType, comparator: Comparator, value: unknown): Condition {
  const rules = parseRules({ groups: [{ operator: 'AND', conditions: [{ type, comparator, value }] }] })
  return rules.groups[0]?.conditions[0] as Condition
}

const passes = (type: ConditionType, comparator: Comparator, value: unknown, fact: unknown) =>
  conditionPasses(condition(type, comparator, value), { [factKeyOf(type)]: fact } as Facts)

/** A scalar fact (never an array): the case where the negation and range laws are stated. */
const scalarFactArb = (kind: 'string' | 'number' | 'boolean') =>
  factValueArb(kind).filter((f) => !Array.isArray(f))

function shuffle<T>(items: readonly T[], seed: number): T[] {
  const out = [...items]
  let s = seed >>> 0
  for (let i = out.length - 1; i > 0; i--) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0
    const j = s % (i + 1)
    ;[out[i], out[j]] = [out[j] as T, out[i] as T]
  }
  return out
}

function mapConditions(rules: Rules, f: (c: Condition, g: number, i: number) => Condition): Rules {
  return parseRules({
    groups: rules.groups.map((g, gi) => ({ ...g, conditions: g.conditions.map((c, i) => f(c, gi, i)) })),
  })
}

describe('comparator laws', () => {
  it('between [a, b] equals gte a and lte b on scalar facts', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...NUMBER_TYPES),
        numberArb,
        numberArb,
        scalarFactArb('number'),
        (t, x, y, f) => {
          const [a, b] = x <= y ? [x, y] : [y, x]
          expect(passes(t, 'between', [a, b], f)).toBe(passes(t, 'gte', a, f) && passes(t, 'lte', b, f))
        },
      ),
      RUNS,
    )
  })

  it('in [v] equals equals v, for scalars and arrays alike', () => {
    const stringCase = fc.tuple(fc.constantFrom(...STRING_TYPES), textArb, factValueArb('string'))
    const numberCase = fc.tuple(fc.constantFrom(...NUMBER_TYPES), numberArb, factValueArb('number'))
    fc.assert(
      fc.property(fc.oneof(stringCase, numberCase), ([t, v, f]) => {
        expect(passes(t, 'in', [v], f)).toBe(passes(t, 'equals', v, f))
        expect(passes(t, 'has_any', [v], f)).toBe(passes(t, 'equals', v, f))
      }),
      RUNS,
    )
  })

  it('every not_X is the negation of X on present scalar facts', () => {
    const cases = fc.oneof(
      fc.tuple(
        fc.constantFrom(...STRING_TYPES),
        fc.constantFrom('equals', 'contains'),
        textArb,
        scalarFactArb('string'),
      ),
      fc.tuple(
        fc.constantFrom(...STRING_TYPES),
        fc.constant('in'),
        fc.array(textArb, { minLength: 1 }),
        scalarFactArb('string'),
      ),
      fc.tuple(fc.constantFrom(...NUMBER_TYPES), fc.constant('equals'), numberArb, scalarFactArb('number')),
      fc.tuple(
        fc.constantFrom(...NUMBER_TYPES),
        fc.constant('in'),
        fc.array(numberArb, { minLength: 1 }),
        scalarFactArb('number'),
      ),
      fc.tuple(
        fc.constantFrom(...BOOLEAN_TYPES),
        fc.constant('equals'),
        fc.boolean(),
        scalarFactArb('boolean'),
      ),
      fc.tuple(
        fc.constantFrom(...CONDITION_TYPES),
        fc.constant('exists'),
        fc.boolean(),
        scalarFactArb('string'),
      ),
    )
    fc.assert(
      fc.property(cases, ([t, comparator, v, f]) => {
        fc.pre(isPresent(f))
        const negative = `not_${comparator}` as Comparator
        expect(passes(t, negative, v, f)).toBe(!passes(t, comparator as Comparator, v, f))
      }),
      RUNS,
    )
  })
})

describe('rule-level laws', () => {
  it('the score is an integer in 0..100, and 0 when nothing matched', () => {
    fc.assert(
      fc.property(rulesInputArb(), factsArb, (input, facts) => {
        const r = evaluate(parseRules(input), facts)
        for (const s of [r.score, ...r.groups.map((g) => g.score)]) {
          expect(Number.isInteger(s) && s >= 0 && s <= 100).toBe(true)
        }
        if (!r.matched) expect(r.score).toBe(0)
        expect(r.matched).toBe(r.groups.some((g) => g.matched))
      }),
      RUNS,
    )
  })

  it('reordering groups or conditions changes nothing', () => {
    fc.assert(
      fc.property(rulesInputArb(), factsArb, fc.nat(), (input, facts, seed) => {
        const rules = parseRules(input)
        const order = shuffle(
          rules.groups.map((g, i) => ({ g, i })),
          seed,
        )
        const shuffled = parseRules({
          groups: order.map(({ g }, k) => ({ ...g, conditions: shuffle(g.conditions, seed + k) })),
        })
        const a = evaluate(rules, facts)
        const b = evaluate(shuffled, facts)
        expect([b.matched, b.score]).toEqual([a.matched, a.score])
        order.forEach(({ i }, k) => {
          expect(b.groups[k]?.matched).toBe(a.groups[i]?.matched)
          expect(b.groups[k]?.score).toBe(a.groups[i]?.score)
        })
      }),
      RUNS,
    )
  })

  it('an optional condition never changes matched', () => {
    // Replacing every optional condition by any other optional condition keeps `matched`.
    const replacement = rulesInputArb().map((r) => r.groups.flatMap((g) => g.conditions))
    fc.assert(
      fc.property(rulesInputArb(), replacement, factsArb, (input, others, facts) => {
        const rules = parseRules(input)
        let k = 0
        const swapped = mapConditions(rules, (c) => {
          const other = others[k++ % others.length]
          return c.optional && other ? ({ ...other, optional: true } as unknown as Condition) : c
        })
        expect(evaluate(swapped, facts).matched).toBe(evaluate(rules, facts).matched)
      }),
      RUNS,
    )
  })

  it('making one more optional condition pass never lowers the score', () => {
    fc.assert(
      fc.property(rulesInputArb(), factsArb, fc.nat(), (input, facts, pick) => {
        const rules = parseRules(input)
        const before = evaluate(rules, facts)
        const failing: [number, number][] = []
        before.groups.forEach((g, gi) => {
          g.conditions.forEach((c, i) => {
            if (c.optional && !c.passed) failing.push([gi, i])
          })
        })
        fc.pre(failing.length > 0)
        const [tg, ti] = failing[pick % failing.length] as [number, number]
        // `exists` with the fact's actual presence passes by construction; same type and weight.
        const improved = mapConditions(rules, (c, gi, i) =>
          gi === tg && i === ti
            ? { ...c, comparator: 'exists', value: isPresent(facts[factKeyOf(c.type)]) }
            : c,
        )
        const after = evaluate(improved, facts)
        expect(after.groups[tg]?.conditions[ti]?.passed).toBe(true)
        expect(after.matched).toBe(before.matched)
        expect(after.score).toBeGreaterThanOrEqual(before.score)
      }),
      RUNS,
    )
  })

  it('compileRules(r)(f) deep-equals evaluate(r, f), and its shortcuts agree', () => {
    fc.assert(
      fc.property(rulesInputArb(), fc.array(factsArb, { minLength: 1, maxLength: 5 }), (input, factsList) => {
        const rules = parseRules(input)
        const compiled = compileRules(rules)
        for (const facts of factsList) {
          const expected = evaluate(rules, facts)
          expect(compiled(facts)).toStrictEqual(expected)
          expect(compiled.matches(facts)).toBe(expected.matched)
          expect(compiled.score(facts)).toBe(expected.score)
        }
      }),
      { numRuns: 500 },
    )
  })
})
