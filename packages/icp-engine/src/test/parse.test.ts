import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  isParsedRules,
  LIMITS,
  parseRules,
  RulesError,
  type RulesIssue,
  rulesSchema,
  safeParseRules,
} from '../index.js'
import { rulesInputArb } from './arbitraries.js'

function issuesOf(input: unknown): Pick<RulesIssue, 'path' | 'message'>[] {
  const result = safeParseRules(input)
  if (result.success) throw new Error('expected a parse error')
  return result.error.issues.map(({ path, message }) => ({ path, message }))
}

const cond = (type: string, comparator: string, value?: unknown, extra: object = {}) => ({
  type,
  comparator,
  ...(value === undefined ? {} : { value }),
  ...extra,
})
const wrap = (...conditions: unknown[]) => ({ groups: [{ operator: 'AND', conditions }] })
const valueIssue = (c: unknown) => issuesOf(wrap(c)).map((i) => i.path)

describe('parseRules', () => {
  it('normalizes defaults and value kinds', () => {
    const rules = parseRules(
      wrap(
        cond('company_size', 'between', ['10', 200]),
        cond('company_size', 'gt', '-0'),
        cond('company_postal_code', 'in', [75001, '75002']),
        cond('linkedin_url', 'exists'),
        cond('industry', 'equals', 'SaaS', { optional: true, weight: 2.5 }),
      ),
    )
    expect(rules.groups[0]?.conditions).toEqual([
      { type: 'company_size', comparator: 'between', value: [10, 200], optional: false, weight: 1 },
      { type: 'company_size', comparator: 'gt', value: 0, optional: false, weight: 1 },
      {
        type: 'company_postal_code',
        comparator: 'in',
        value: ['75001', '75002'],
        optional: false,
        weight: 1,
      },
      { type: 'linkedin_url', comparator: 'exists', value: true, optional: false, weight: 1 },
      { type: 'industry', comparator: 'equals', value: 'SaaS', optional: true, weight: 2.5 },
    ])
    expect(Object.is((rules.groups[0]?.conditions[1]?.value as number) + 0, 0)).toBe(true)
  })

  it('returns deep-frozen rules that are recognised without re-validation', () => {
    const rules = parseRules(wrap(cond('city', 'equals', 'Paris')))
    expect(Object.isFrozen(rules.groups[0]?.conditions[0])).toBe(true)
    expect(isParsedRules(rules)).toBe(true)
    expect(isParsedRules(JSON.parse(JSON.stringify(rules)))).toBe(false)
    expect(parseRules(rules)).toBe(rules)
  })

  it('reports every issue with its JSON path', () => {
    const issues = issuesOf({
      groups: [
        {
          operator: 'XOR',
          conditions: [
            cond('industry', 'equals', 'ok'),
            cond('industry', 'gt', 5),
            cond('company_size', 'between', [5]),
            cond('company_size', 'in', [1, 'x', 3]),
          ],
        },
        { operator: 'AND', conditions: [] },
      ],
    })
    expect(issues.map((i) => i.path)).toEqual([
      'groups.0.operator',
      'groups.0.conditions.1.comparator',
      'groups.0.conditions.2.value',
      'groups.0.conditions.3.value.1',
      'groups.1.conditions',
    ])
    expect(issues[1]?.message).toMatch(/"gt" does not apply to industry/)
    const error = (() => {
      try {
        parseRules({ groups: [] })
      } catch (e) {
        return e
      }
    })()
    expect(error).toBeInstanceOf(RulesError)
    expect((error as RulesError).issues).toEqual([
      { path: 'groups', segments: ['groups'], message: 'rules need at least one group' },
    ])
    expect((error as RulesError).message).toMatch(/groups: rules need at least one group/)
  })

  it.each([
    ['a comparator that does not fit the type', cond('industry', 'gt', 5), 'comparator'],
    ['contains on a number type', cond('company_size', 'contains', '5'), 'comparator'],
    ['between on a string type', cond('city', 'between', [1, 2]), 'comparator'],
    ['gt on a boolean type', cond('is_hosting', 'gt', 1), 'comparator'],
    ['in on a boolean type', cond('icp_match', 'in', [true]), 'comparator'],
    ['between with one number', cond('company_size', 'between', [5]), 'value'],
    ['between with min > max', cond('company_size', 'between', [5, 1]), 'value'],
    ['between with a non-number', cond('company_size', 'between', [1, 'x']), 'value.1'],
    ['gt with a non-numeric string', cond('company_size', 'gt', '5 '), 'value'],
    ['gt with NaN', cond('company_size', 'gt', Number.NaN), 'value'],
    ['gt with Infinity', cond('session_count', 'gt', Number.POSITIVE_INFINITY), 'value'],
    ['gt with a numeric string that overflows', cond('session_count', 'gt', '1e999'), 'value'],
    ['icp_score above 100', cond('icp_score', 'gte', 101), 'value'],
    ['equals with a boolean on a string type', cond('city', 'equals', true), 'value'],
    ['equals with a string on a boolean type', cond('is_hosting', 'equals', 'true'), 'value'],
    ['an empty string value', cond('city', 'contains', ''), 'value'],
    ['contains with a number', cond('city', 'contains', 5), 'value'],
    ['an empty list', cond('country', 'in', []), 'value'],
    ['a scalar for a list comparator', cond('country', 'in', 'FR'), 'value'],
    ['an empty string in a list', cond('country', 'has_any', ['FR', '']), 'value.1'],
    ['a null in a list', cond('country', 'has_all', [null]), 'value.0'],
    ['exists with a non-boolean', cond('city', 'exists', 'yes'), 'value'],
    ['a missing value', cond('city', 'equals'), 'value'],
    ['a lone surrogate', cond('city', 'equals', 'a\ud800'), 'value'],
    ['a too long string', cond('city', 'equals', 'x'.repeat(LIMITS.stringLength + 1)), 'value'],
    [
      'too many list values',
      cond(
        'country',
        'in',
        Array.from({ length: 1001 }, (_, i) => `c${i}`),
      ),
      'value',
    ],
    ['a zero weight', cond('city', 'exists', true, { weight: 0 }), 'weight'],
    ['a negative weight', cond('city', 'exists', true, { weight: -1 }), 'weight'],
    ['a weight finer than 0.01', cond('city', 'exists', true, { weight: 0.005 }), 'weight'],
    ['a weight above the limit', cond('city', 'exists', true, { weight: 1001 }), 'weight'],
    ['a non-boolean optional', cond('city', 'exists', true, { optional: 'yes' }), 'optional'],
    ['an unknown type', cond('favourite_colour', 'equals', 'red'), 'type'],
    ['an unknown comparator', cond('city', 'like', 'x'), 'comparator'],
    ['an unknown key (typo)', cond('city', 'exists', true, { optinal: true }), ''],
  ])('rejects %s', (_, condition, path) => {
    const prefix = 'groups.0.conditions.0'
    expect(valueIssue(condition)).toEqual([path === '' ? prefix : `${prefix}.${path}`])
  })

  it.each([
    ['a non-object', 5, ''],
    ['no groups', {}, 'groups'],
    ['an empty groups array', { groups: [] }, 'groups'],
    ['a group without conditions', { groups: [{ operator: 'AND', conditions: [] }] }, 'groups.0.conditions'],
    ['a group without operator', { groups: [{ conditions: [cond('city', 'exists')] }] }, 'groups.0.operator'],
    [
      'a lowercase operator',
      { groups: [{ operator: 'and', conditions: [cond('city', 'exists')] }] },
      'groups.0.operator',
    ],
    ['too many groups', { groups: Array(51).fill(wrap(cond('city', 'exists')).groups[0]) }, 'groups'],
    ['too many conditions', wrap(...Array(101).fill(cond('city', 'exists'))), 'groups.0.conditions'],
  ])('rejects %s', (_, input, path) => {
    expect(issuesOf(input).map((i) => i.path)).toEqual([path])
  })

  it('accepts every condition generated from the language table, idempotently', () => {
    fc.assert(
      fc.property(rulesInputArb(), (input) => {
        const rules = parseRules(input)
        expect(parseRules(JSON.parse(JSON.stringify(rules)))).toEqual(rules)
      }),
      { numRuns: 300 },
    )
  })

  it('never throws anything but RulesError on arbitrary input', () => {
    fc.assert(
      fc.property(fc.anything(), (input) => {
        const result = safeParseRules(input)
        if (!result.success) expect(result.error.issues.length).toBeGreaterThan(0)
        try {
          parseRules(input)
        } catch (e) {
          expect(e).toBeInstanceOf(RulesError)
        }
      }),
      { numRuns: 300 },
    )
  })

  it('exports the zod schema', () => {
    expect(rulesSchema.safeParse(wrap(cond('city', 'exists'))).success).toBe(true)
  })
})
