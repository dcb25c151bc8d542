// fast-check generators shared by the property and differential tests. Values and facts are drawn
// from overlapping pools (with case changes and non-ASCII text) so conditions pass often enough for
// the properties to say something, plus fully random strings for the unexpected.

import fc from 'fast-check'
import {
  CONDITION_TYPES,
  type Comparator,
  type ConditionType,
  type FactKey,
  type Facts,
  type FactValue,
  factKeyOf,
  kindOf,
} from '../types.js'
import { comparatorsFor } from '../values.js'

export const TEXT_POOL = [
  'SaaS',
  'fintech',
  'Fin',
  'tech',
  'École',
  'ÉCOLE',
  'straße',
  'STRASSE',
  'İstanbul',
  'ΟΔΟΣ',
  'οδος',
  'Σ',
  '日本',
  '🙂 ok',
  '/pricing',
  '/Pricing/Team',
  'a',
  'ab',
  ' a',
  "o'neil",
  'back\\slash',
  'tab\tnew\nline',
  '12',
  '1e3',
] as const

export const NUMBER_POOL = [0, 1, 5, 10, 12, 50, 99.5, 100, 500, 1000, -1, 0.5, 2.5, 1e-7, 1e21] as const

/** Strings that a numeric condition may see: numeric under our rule or deliberately not. */
export const NUMERIC_TEXT_POOL = [
  '10',
  '+10',
  '10.0',
  '1e1',
  '.5',
  '5.',
  '-0',
  '0012',
  '1E3',
  ' 10',
  '10 ',
  'abc',
  '0x10',
  'Infinity',
  'NaN',
  '1e400',
  '1_000',
  '１２',
  '',
] as const

const caseVariant = (s: string) => fc.constantFrom(s, s.toLowerCase(), s.toUpperCase())

export const textArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...TEXT_POOL).chain(caseVariant) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 6 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 4 }) },
)

export const numberArb: fc.Arbitrary<number> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...NUMBER_POOL) },
  { weight: 1, arbitrary: fc.integer({ min: -5, max: 120 }) },
  { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
)

export const numericTextArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NUMERIC_TEXT_POOL) },
  { weight: 2, arbitrary: numberArb.map(String) },
  { weight: 1, arbitrary: fc.stringMatching(/^[+-]?\d{1,3}(\.\d{0,2})?([eE][+-]?\d)?$/) },
)

/** A value a rule may legally hold for this type and comparator (as input, before normalization). */
export function valueArb(type: ConditionType, comparator: Comparator): fc.Arbitrary<unknown> {
  const kind = kindOf(type)
  const score = type === 'icp_score'
  const num = score
    ? fc.oneof(fc.constantFrom(0, 10, 50, 99.5, 100), fc.integer({ min: 0, max: 100 }))
    : numberArb
  const scalar: fc.Arbitrary<unknown> =
    kind === 'boolean'
      ? fc.boolean()
      : kind === 'number'
        ? num
        : fc.oneof({ weight: 5, arbitrary: textArb }, { weight: 1, arbitrary: num })
  switch (comparator) {
    case 'exists':
    case 'not_exists':
      return fc.boolean()
    case 'contains':
    case 'not_contains':
    case 'starts_with':
    case 'ends_with':
      return textArb
    case 'in':
    case 'not_in':
    case 'has_any':
    case 'has_all':
      return fc.array(scalar, { minLength: 1, maxLength: 3 })
    case 'between':
      return fc.tuple(num, num).map(([a, b]) => (a <= b ? [a, b] : [b, a]))
    default:
      return scalar
  }
}

export interface ConditionInput {
  type: ConditionType
  comparator: Comparator
  value: unknown
  optional: boolean
  weight?: number
}

export function conditionArb(
  types: readonly ConditionType[] = CONDITION_TYPES,
): fc.Arbitrary<ConditionInput> {
  return fc
    .constantFrom(...types)
    .chain((type) => fc.constantFrom(...comparatorsFor(type)).map((comparator) => ({ type, comparator })))
    .chain(({ type, comparator }) =>
      fc.record(
        {
          type: fc.constant(type),
          comparator: fc.constant(comparator),
          value: valueArb(type, comparator),
          optional: fc.boolean(),
          weight: fc.constantFrom(1, 2, 0.5, 0.33, 3.25, 7),
        },
        { requiredKeys: ['type', 'comparator', 'value', 'optional'] },
      ),
    )
}

export function rulesInputArb(types: readonly ConditionType[] = CONDITION_TYPES) {
  const group = fc.record({
    operator: fc.constantFrom('AND' as const, 'OR' as const),
    conditions: fc.array(conditionArb(types), { minLength: 1, maxLength: 5 }),
  })
  return fc.record({ groups: fc.array(group, { minLength: 1, maxLength: 4 }) })
}

const missingArb = fc.constantFrom<FactValue>(undefined, null, '', [])

/** Any fact value, including ones of the wrong kind for the type (those count as missing). */
export function factValueArb(kind: 'string' | 'number' | 'boolean'): fc.Arbitrary<FactValue> {
  const own: fc.Arbitrary<FactValue> =
    kind === 'boolean'
      ? fc.boolean()
      : kind === 'number'
        ? fc.oneof(numberArb, numericTextArb, fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY))
        : textArb
  const element = kind === 'number' ? fc.oneof(numberArb, numericTextArb) : fc.oneof(textArb, fc.constant(''))
  return fc.oneof(
    { weight: 2, arbitrary: missingArb },
    { weight: 5, arbitrary: own },
    { weight: 3, arbitrary: fc.array(element, { maxLength: 4 }) as fc.Arbitrary<FactValue> },
    { weight: 1, arbitrary: fc.oneof(textArb, numberArb, fc.boolean()) },
  )
}

const FACT_KEYS: FactKey[] = [...new Set(CONDITION_TYPES.map(factKeyOf))]

export const factsArb: fc.Arbitrary<Facts> = fc.record(
  Object.fromEntries(
    FACT_KEYS.map((key) => [key, factValueArb(key === 'pages' ? 'string' : kindOf(key))]),
  ) as { [K in FactKey]: fc.Arbitrary<FactValue> },
  { requiredKeys: [] },
)
