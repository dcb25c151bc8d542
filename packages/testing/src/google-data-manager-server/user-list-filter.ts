// The `filter` of ListUserLists as the Data Manager API documents it (AIP-160 syntax): conditions
// joined by `AND`, each a field on the left, an operator and a value, fields named all in snake case
// or all in camel case (`display_name = "list 1"`). Strings are in double quotes, `"` and `\`
// escaped by a backslash. This fake serves the string and enum fields with `=` and `!=`, compared
// exactly; anything else it does not serve (OR, NOT, parentheses, `:`, ordering operators, other
// fields) is Google's 400 INVALID_ARGUMENT, so a filter passing here is one Google documents.
import { invalidArgument } from './errors.js'

type Field = 'id' | 'displayName' | 'description' | 'membershipStatus' | 'integrationCode' | 'accessReason'

/** Snake and camel names of the fields served. */
const fields: Record<string, { field: Field; camel: boolean }> = {
  id: { field: 'id', camel: false },
  display_name: { field: 'displayName', camel: false },
  displayName: { field: 'displayName', camel: true },
  description: { field: 'description', camel: false },
  membership_status: { field: 'membershipStatus', camel: false },
  membershipStatus: { field: 'membershipStatus', camel: true },
  integration_code: { field: 'integrationCode', camel: false },
  integrationCode: { field: 'integrationCode', camel: true },
  access_reason: { field: 'accessReason', camel: false },
  accessReason: { field: 'accessReason', camel: true },
}
/** Fields that are one word: the same in both cases. */
const oneWord = new Set(['id', 'description'])

export interface Condition {
  field: Field
  operator: '=' | '!='
  value: string
}

type Token = { kind: 'name' | 'string' | 'operator'; text: string }

const refused = (why: string) => invalidArgument('filter', 'INVALID_ARGUMENT', `Invalid filter: ${why}`)

/** The filter's conditions (all must hold); none for an empty filter. */
export function parseUserListFilter(filter: string): Condition[] {
  const tokens = tokenize(filter)
  if (tokens.length === 0) return []
  const conditions: Condition[] = []
  let at = 0
  for (;;) {
    const [name, operator, value] = [tokens[at], tokens[at + 1], tokens[at + 2]]
    if (name?.kind !== 'name' || !fields[name.text]) {
      throw refused(`${JSON.stringify(name?.text ?? '')} is not a field this server filters on`)
    }
    if (operator?.kind !== 'operator' || (operator.text !== '=' && operator.text !== '!=')) {
      throw refused(`${JSON.stringify(operator?.text ?? '')} is not an operator this server serves`)
    }
    if (value === undefined || value.kind === 'operator' || value.text === 'AND') {
      throw refused(`${name.text} ${operator.text} needs a value`)
    }
    conditions.push({ field: fields[name.text]!.field, operator: operator.text, value: value.text })
    at += 3
    if (at === tokens.length) break
    if (tokens[at]?.kind !== 'name' || tokens[at]?.text !== 'AND') {
      throw refused(`conditions are joined by AND, not ${JSON.stringify(tokens[at]?.text)}`)
    }
    at += 1
  }
  const cases = new Set(
    tokens.filter((t, i) => i % 4 === 0 && !oneWord.has(t.text)).map((t) => fields[t.text]!.camel),
  )
  if (cases.size > 1) throw refused('fields are named all in camel case or all in snake case')
  return conditions
}

/** Whether the user list (as Google answers it) meets every condition. */
export function meets(resource: Record<string, unknown>, conditions: readonly Condition[]): boolean {
  return conditions.every((c) => (String(resource[c.field] ?? '') === c.value) === (c.operator === '='))
}

function tokenize(filter: string): Token[] {
  const tokens: Token[] = []
  let at = 0
  while (at < filter.length) {
    const rest = filter.slice(at)
    const space = /^\s+/.exec(rest)
    if (space) {
      at += space[0].length
      continue
    }
    if (rest[0] === '"') {
      const [text, length] = quoted(rest)
      tokens.push({ kind: 'string', text })
      at += length
      continue
    }
    const operator = /^(!=|>=|<=|=|>|<|:)/.exec(rest)
    const name = /^[A-Za-z0-9_.]+/.exec(rest)
    const token = operator
      ? { kind: 'operator' as const, text: operator[0] }
      : name
        ? { kind: 'name' as const, text: name[0] }
        : undefined
    if (!token) throw refused(`unexpected ${JSON.stringify(rest[0])} at ${at}`)
    tokens.push(token)
    at += token.text.length
  }
  return tokens
}

/** A double-quoted string at the start of `text`: its value and its length in the filter. */
function quoted(text: string): [string, number] {
  let value = ''
  for (let i = 1; i < text.length; i++) {
    const c = text[i]!
    if (c === '"') return [value, i + 1]
    if (c === '\\') {
      const next = text[i + 1]
      if (next !== '"' && next !== '\\') throw refused(`unknown escape \\${next ?? ''} in a string`)
      value += next
      i += 1
    } else {
      value += c
    }
  }
  throw refused('a string is not closed')
}
