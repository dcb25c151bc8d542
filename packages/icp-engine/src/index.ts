export { type CompiledRules, compileRules } from './compile.js'
export { RulesError, type RulesIssue, SqlCompileError } from './errors.js'
export { conditionPasses, evaluate } from './evaluate.js'
export { fold, isPresent, NUMERIC_PATTERN, toFiniteNumber } from './facts.js'
export { isParsedRules, parseRules, type SafeParseResult, safeParseRules } from './parse.js'
export { conditionSchema, groupSchema, rulesSchema } from './schema.js'
export { groupScore } from './score.js'
export { type ClickHouseRules, type SqlColumns, type SqlOptions, toClickHouseSql } from './sql.js'
export type { SqlColumn } from './sql-conditions.js'
export {
  COMPARATORS,
  CONDITION_TYPES,
  type Comparator,
  type Condition,
  type ConditionResult,
  type ConditionType,
  type ConditionValue,
  type Evaluation,
  type FactKey,
  type Facts,
  type FactValue,
  factKeyOf,
  type Group,
  type GroupOperator,
  type GroupResult,
  kindOf,
  LIMITS,
  type Rules,
  type ValueKind,
} from './types.js'
export { comparatorsFor } from './values.js'
