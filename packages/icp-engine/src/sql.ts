// toClickHouseSql: the same match and score as evaluate(), as ClickHouse expressions over a table
// whose columns hold the facts. Rule values only ever travel as query parameters; the only
// literals in the SQL text are integers this module computes itself (weights, totals).

import { SqlCompileError } from './errors.js'
import { parseRules } from './parse.js'
import { weightUnits } from './score.js'
import { type AddParam, conditionSql, type SqlColumn } from './sql-conditions.js'
import type { ConditionType, Rules } from './types.js'

/** Columns per condition type; `pages` serves both page_contains and page_equals unless they have their own. */
export type SqlColumns = Partial<Record<ConditionType | 'pages', SqlColumn>>

export interface SqlOptions {
  /** Prefix of the generated query parameter names, default `icp_`. */
  readonly paramPrefix?: string
}

export interface ClickHouseRules {
  /** UInt8 expression, 1 when the visitor matches. */
  readonly matched: string
  /** UInt8 expression, the 0-100 score. */
  readonly score: string
  /** Per-group expressions, in rule order, for breakdowns. */
  readonly groups: readonly { readonly matched: string; readonly score: string }[]
  /** Pass as `query_params`. */
  readonly params: Record<string, unknown>
}

/** Compiles rules to ClickHouse expressions: `toClickHouseSql(rules, { industry: { sql: 'industry' } }).matched`. */
export function toClickHouseSql(
  rules: Rules,
  columns: SqlColumns,
  options: SqlOptions = {},
): ClickHouseRules {
  const valid = parseRules(rules)
  const prefix = options.paramPrefix ?? 'icp_'
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(prefix)) {
    throw new SqlCompileError(`paramPrefix must be an identifier, got ${JSON.stringify(prefix)}`)
  }
  checkColumns(valid, columns)

  const params: Record<string, unknown> = {}
  let next = 0
  const addParam: AddParam = (type, value) => {
    const name = `${prefix}${next++}`
    params[name] = value
    return `{${name}:${type}}`
  }

  const groups = valid.groups.map((group) => {
    const parts = group.conditions.map((c) => ({
      sql: conditionSql(c, columnFor(columns, c.type) as SqlColumn, addParam),
      optional: c.optional,
      units: weightUnits(c.weight),
    }))
    const required = parts.filter((p) => !p.optional).map((p) => p.sql)
    const joiner = group.operator === 'AND' ? ' AND ' : ' OR '
    const matched = required.length === 0 ? '1' : `(${required.join(joiner)})`
    // round(100 * passed / total), halves up, in integers: intDiv(200 * passed + total, 2 * total).
    const total = parts.reduce((sum, p) => sum + p.units, 0)
    const passed200 = parts.map((p) => `toUInt64(${p.sql}) * ${200 * p.units}`).join(' + ')
    const score = `intDiv(${passed200} + ${total}, ${2 * total})`
    return { matched, score }
  })

  const matched = `toUInt8(${groups.map((g) => g.matched).join(' OR ')})`
  const scored = groups.map((g) => `if(${g.matched}, ${g.score}, 0)`)
  const best = scored.length === 1 ? scored[0] : `greatest(${scored.join(', ')})`
  return { matched, score: `toUInt8(${best})`, groups, params }
}

function columnFor(columns: SqlColumns, type: ConditionType): SqlColumn | undefined {
  const own = columns[type]
  if (own !== undefined) return own
  return type === 'page_contains' || type === 'page_equals' ? columns.pages : undefined
}

function checkColumns(rules: Rules, columns: SqlColumns): void {
  const missing = new Set<string>()
  for (const group of rules.groups) {
    for (const c of group.conditions) {
      const column = columnFor(columns, c.type)
      if (column === undefined || typeof column.sql !== 'string' || column.sql.trim() === '') {
        missing.add(c.type)
      }
    }
  }
  if (missing.size > 0) {
    // A forgotten column would otherwise read as "fact missing" and silently change who matches.
    throw new SqlCompileError(`no column given for condition type(s): ${[...missing].join(', ')}`)
  }
}
