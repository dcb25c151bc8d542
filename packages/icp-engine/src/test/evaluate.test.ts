import { describe, expect, it } from 'vitest'
import { compileRules, evaluate, factKeyOf, parseRules, type Rules } from '../index.js'
import { EXAMPLES } from './examples.js'

function single(type: string, comparator: string, value: unknown, extra: object = {}): Rules {
  return parseRules({ groups: [{ operator: 'AND', conditions: [{ type, comparator, value, ...extra }] }] })
}

describe('conditions (example table)', () => {
  it.each(EXAMPLES.map((e) => [...e, JSON.stringify(e[3]) ?? 'undefined'] as const))(
    '%s %s %j on fact %s -> %s',
    (type, comparator, value, fact, expected) => {
      const rules = single(type, comparator, value)
      const facts = { [factKeyOf(type)]: fact }
      const result = evaluate(rules, facts)
      expect(result.groups[0]?.conditions[0]?.passed).toBe(expected)
      expect(result.matched).toBe(expected)
      const compiled = compileRules(rules)
      expect(compiled(facts)).toEqual(result)
      expect(compiled.matches(facts)).toBe(expected)
      expect(compiled.score(facts)).toBe(expected ? 100 : 0)
    },
  )
})

describe('groups and scoring', () => {
  const rules = parseRules({
    groups: [
      {
        operator: 'AND',
        conditions: [
          { type: 'industry', comparator: 'in', value: ['SaaS', 'Fintech'] },
          { type: 'company_size', comparator: 'between', value: [50, 500] },
          { type: 'page_contains', comparator: 'contains', value: '/pricing', optional: true },
        ],
      },
      {
        operator: 'OR',
        conditions: [
          { type: 'utm_source', comparator: 'equals', value: 'linkedin' },
          { type: 'job_title', comparator: 'contains', value: 'founder' },
          { type: 'country', comparator: 'equals', value: 'FR', optional: true, weight: 2 },
        ],
      },
    ],
  })

  it('matches a group whose required conditions all pass, scoring optional ones too', () => {
    const r = evaluate(rules, { industry: 'saas', company_size: 120 })
    expect(r.groups[0]).toMatchObject({ matched: true, score: 67 })
    expect(r.groups[1]).toMatchObject({ matched: false, score: 0 })
    expect(r).toMatchObject({ matched: true, score: 67 })
  })

  it('takes the best score among matched groups only', () => {
    const r = evaluate(rules, { industry: 'saas', company_size: 120, utm_source: 'LinkedIn', country: 'fr' })
    expect(r.groups.map((g) => [g.matched, g.score])).toEqual([
      [true, 67],
      [true, 75],
    ])
    expect(r.score).toBe(75)
    // A better-scoring group that does not match does not count.
    const r2 = evaluate(rules, { industry: 'retail', country: 'fr' })
    expect(r2.groups[1]).toMatchObject({ matched: false, score: 50 })
    expect(r2).toMatchObject({ matched: false, score: 0 })
  })

  it('an OR group needs one required condition; optional ones never decide', () => {
    expect(evaluate(rules, { job_title: 'Co-Founder' }).groups[1]?.matched).toBe(true)
    expect(evaluate(rules, { country: 'FR' }).groups[1]?.matched).toBe(false)
  })

  it('a group of only optional conditions always matches', () => {
    const onlyOptional = parseRules({
      groups: [
        {
          operator: 'AND',
          conditions: [{ type: 'city', comparator: 'equals', value: 'Paris', optional: true }],
        },
      ],
    })
    expect(evaluate(onlyOptional, {})).toMatchObject({ matched: true, score: 0 })
    expect(evaluate(onlyOptional, { city: 'paris' })).toMatchObject({ matched: true, score: 100 })
  })

  it('rounds half up with exact integer arithmetic and honours weights', () => {
    const conditions = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ type: 'utm_term', comparator: 'equals', value: `t${i}` }))
    const eight = parseRules({ groups: [{ operator: 'OR', conditions: conditions(8) }] })
    expect(evaluate(eight, { utm_term: 't0' }).score).toBe(13) // 12.5 -> 13
    const weighted = parseRules({
      groups: [
        {
          operator: 'OR',
          conditions: [
            { type: 'utm_term', comparator: 'equals', value: 'a', weight: 0.01 },
            { type: 'utm_term', comparator: 'equals', value: 'b', weight: 1.99 },
          ],
        },
      ],
    })
    expect(evaluate(weighted, { utm_term: 'a' }).score).toBe(1) // 0.5 -> 1
    expect(evaluate(weighted, { utm_term: 'b' }).score).toBe(100) // 99.5 -> 100
  })

  it('returns one result per condition, in rule order', () => {
    const r = evaluate(rules, { industry: 'fintech' })
    expect(r.groups[0]?.conditions).toEqual([
      { type: 'industry', comparator: 'in', optional: false, passed: true },
      { type: 'company_size', comparator: 'between', optional: false, passed: false },
      { type: 'page_contains', comparator: 'contains', optional: true, passed: false },
    ])
  })

  it('accepts hand-built rules by validating them first', () => {
    const raw = {
      groups: [{ operator: 'AND', conditions: [{ type: 'city', comparator: 'equals', value: 'x' }] }],
    }
    expect(evaluate(raw as unknown as Rules, { city: 'X' }).matched).toBe(true)
    expect(() => evaluate({ groups: [] } as unknown as Rules, {})).toThrow(/at least one group/)
  })

  it('compiled shortcuts agree with the full evaluation', () => {
    const compiled = compileRules(rules)
    for (const facts of [{}, { industry: 'saas', company_size: '60' }, { utm_source: ['x', 'linkedin'] }]) {
      const full = evaluate(rules, facts)
      expect(compiled(facts)).toEqual(full)
      expect(compiled.matches(facts)).toBe(full.matched)
      expect(compiled.score(facts)).toBe(full.score)
    }
  })

  it('stays correct past its text cache bound, with repeated and case-varied facts', () => {
    const compiled = compileRules(single('job_title', 'contains', 'cto'))
    for (let i = 0; i < 5000; i++) {
      const facts = { job_title: i % 3 === 0 ? `CTO ${i % 7}` : i % 3 === 1 ? `cto${i}` : `engineer ${i}` }
      expect(compiled.matches(facts)).toBe(i % 3 !== 2)
    }
  })

  it('has_all state does not leak between calls', () => {
    const compiled = compileRules(single('utm_source', 'has_all', ['a', 'b']))
    expect(compiled.matches({ utm_source: ['a'] })).toBe(false)
    expect(compiled.matches({ utm_source: ['b'] })).toBe(false)
    expect(compiled.matches({ utm_source: ['b', 'A'] })).toBe(true)
    expect(compiled.matches({ utm_source: ['a', 'a'] })).toBe(false)
  })
})

describe('README example', () => {
  it('gives the documented results', () => {
    const rules = parseRules({
      groups: [
        {
          operator: 'AND',
          conditions: [
            { type: 'industry', comparator: 'in', value: ['SaaS', 'Fintech'] },
            { type: 'company_size', comparator: 'between', value: [50, 1000] },
            { type: 'country', comparator: 'in', value: ['US', 'GB', 'DE', 'FR'] },
            { type: 'page_contains', comparator: 'contains', value: '/pricing', optional: true, weight: 2 },
          ],
        },
        {
          operator: 'OR',
          conditions: [
            { type: 'job_title', comparator: 'contains', value: 'CTO' },
            { type: 'utm_source', comparator: 'equals', value: 'linkedin' },
          ],
        },
      ],
    })
    const facts = {
      industry: 'saas',
      company_size: '120',
      country: 'FR',
      pages: ['/', '/Pricing/Team'],
      utm_source: ['google', 'LinkedIn'],
    }
    const r = evaluate(rules, facts)
    expect(r).toMatchObject({ matched: true, score: 100 })
    expect(r.groups.map((g) => [g.matched, g.score])).toEqual([
      [true, 100],
      [true, 50],
    ])
    const fit = compileRules(rules)
    expect(fit(facts)).toEqual(r)
    expect([fit.matches(facts), fit.score(facts)]).toEqual([true, 100])
  })
})
