/** One problem found in rules: `{ path: 'groups.0.conditions.2.value', message: '...' }`. */
export interface RulesIssue {
  /** Dotted JSON path of the offending value; `''` for the root. */
  readonly path: string
  /** The same path as segments, for UIs that highlight form fields. */
  readonly segments: readonly (string | number)[]
  readonly message: string
}

/** Thrown by `parseRules`; `issues` lists every problem, not just the first. */
export class RulesError extends Error {
  readonly issues: readonly RulesIssue[]

  constructor(issues: readonly RulesIssue[]) {
    super(formatIssues(issues))
    this.name = 'RulesError'
    this.issues = issues
  }
}

/** Thrown by `toClickHouseSql` when the column map cannot express the rules (e.g. a missing column). */
export class SqlCompileError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'SqlCompileError'
  }
}

function formatIssues(issues: readonly RulesIssue[]): string {
  const lines = issues.slice(0, 10).map((i) => `${i.path || '(root)'}: ${i.message}`)
  if (issues.length > 10) lines.push(`... and ${issues.length - 10} more`)
  return `Invalid ICP rules:\n${lines.join('\n')}`
}
