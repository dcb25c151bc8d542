/**
 * Every condition type of the rule language: the spec's, in the order it lists them, then the
 * types the organization-level filter vocabulary needs that the spec's list lacks.
 */
export const CONDITION_TYPES = [
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'utm_term',
  'utm_content',
  'page_contains',
  'page_equals',
  'page_view_count',
  'session_count',
  'last_seen_days',
  'industry',
  'domain',
  'job_title',
  'linkedin_url',
  'country',
  'region',
  'city',
  'employee_size_range',
  'company_city',
  'company_region',
  'company_postal_code',
  'company_size',
  'icp_match',
  'persona_match',
  'icp_score',
  'is_hosting',
  'is_anonymous',
  'company_country',
  'revenue_range',
  'seniority',
  'department',
  'contact_country',
] as const

export type ConditionType = (typeof CONDITION_TYPES)[number]

/** Every comparator of the rule language. */
export const COMPARATORS = [
  'equals',
  'not_equals',
  'contains',
  'not_contains',
  'starts_with',
  'ends_with',
  'gt',
  'gte',
  'lt',
  'lte',
  'in',
  'not_in',
  'has_any',
  'has_all',
  'between',
  'exists',
  'not_exists',
] as const

export type Comparator = (typeof COMPARATORS)[number]

/** How a condition type compares: decides which comparators and values are legal. */
export type ValueKind = 'string' | 'number' | 'boolean'

const NUMBER_TYPES = new Set<ConditionType>([
  'page_view_count',
  'session_count',
  'last_seen_days',
  'company_size',
  'icp_score',
])
const BOOLEAN_TYPES = new Set<ConditionType>(['icp_match', 'persona_match', 'is_hosting', 'is_anonymous'])

/** Kind of a condition type, e.g. `kindOf('company_size') === 'number'`. */
export function kindOf(type: ConditionType): ValueKind {
  if (NUMBER_TYPES.has(type)) return 'number'
  if (BOOLEAN_TYPES.has(type)) return 'boolean'
  return 'string'
}

/** Keys of a facts object: condition types, except that both page types read `pages`. */
export type FactKey = Exclude<ConditionType, 'page_contains' | 'page_equals'> | 'pages'

/** Fact a condition reads, e.g. `factKeyOf('page_equals') === 'pages'`. */
export function factKeyOf(type: ConditionType): FactKey {
  return type === 'page_contains' || type === 'page_equals' ? 'pages' : type
}

/** One observed value; arrays are multi-valued facts (every utm_source seen, every page visited). */
export type FactValue = string | number | boolean | null | undefined | readonly (string | number)[]

/** What is known about one visitor, keyed by condition type (`pages` for the page types). */
export type Facts = { readonly [K in FactKey]?: FactValue }

/** A normalized condition value (see README: numbers for numeric types, strings for string types). */
export type ConditionValue = string | number | boolean | readonly string[] | readonly number[]

export interface Condition {
  readonly type: ConditionType
  readonly comparator: Comparator
  readonly value: ConditionValue
  readonly optional: boolean
  /** Positive multiple of 0.01, at most 1000; 1 unless the input said otherwise. */
  readonly weight: number
}

export type GroupOperator = 'AND' | 'OR'

export interface Group {
  readonly operator: GroupOperator
  readonly conditions: readonly Condition[]
}

/** Validated, normalized rules: only `parseRules` should produce them. */
export interface Rules {
  readonly groups: readonly Group[]
}

// Results are read-only: compileRules shares frozen per-condition results between calls.
export interface ConditionResult {
  readonly type: ConditionType
  readonly comparator: Comparator
  readonly optional: boolean
  readonly passed: boolean
}

export interface GroupResult {
  readonly matched: boolean
  /** 0-100 integer, computed whether or not the group matched. */
  readonly score: number
  readonly conditions: readonly ConditionResult[]
}

export interface Evaluation {
  readonly matched: boolean
  /** 0-100 integer: the best score among matched groups, 0 when none matched. */
  readonly score: number
  readonly groups: readonly GroupResult[]
}

/** Limits that keep a stored rule set cheap to evaluate and to compile to SQL. */
export const LIMITS = {
  groups: 50,
  conditionsPerGroup: 100,
  valuesPerList: 1000,
  stringLength: 1000,
  maxWeight: 1000,
} as const
