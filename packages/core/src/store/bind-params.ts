import { StoreError } from './store-error.js'

// Binds `{name:Type}` query parameters as typed literals in the SQL text, for the embedded engine.
//
// Why not the engine's own binder: chdb serializes every parameterized query of a process through
// one chain (its parameter state is process-wide), so parameterized reads run one at a time
// whatever the number of sessions, while queries without parameters run in parallel on several
// sessions of one data directory. Binding here is what lets the embedded store read in parallel.
//
// Safety rests on this one function: every value becomes `CAST(<literal> AS <Type>)`, where the
// literal is built from the JS value alone (quoted and escaped strings, finite numbers, booleans,
// NULL, arrays of those) and the type comes from our own SQL text. A string literal escapes the
// backslash, the quote and every control character, so no value can end its literal; property
// tests (bind-params.test.ts) check that hostile strings come back unchanged and never alter the
// query, and that results match the engine's own binder.

const placeholder = /\{([A-Za-z_][A-Za-z0-9_]*):([^{}]+)\}/g
// The declared type: letters, digits, underscores, spaces, commas, parentheses and quoted
// time zone names such as DateTime64(3, 'UTC'). Anything else in a placeholder is refused.
const typePattern = /^[A-Za-z][A-Za-z0-9_]*(\((?:[A-Za-z0-9_ ,()]|'[A-Za-z0-9_/+-]*')*\))?$/

const bindError = (message: string) => new StoreError('query', `Query parameter ${message}`)

/** A ClickHouse string literal: quoted, with `\`, `'` and every control character escaped. */
export function stringLiteral(text: string): string {
  let out = "'"
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code === 0x5c) out += '\\\\'
    else if (code === 0x27) out += "\\'"
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`
    else out += text[i]
  }
  return `${out}'`
}

/** The literal of a JS value, whatever the type it is cast to. */
function valueLiteral(value: unknown, name: string): string {
  if (value === null || value === undefined) return 'NULL'
  if (typeof value === 'string') return stringLiteral(value)
  if (typeof value === 'boolean') return value ? 'true' : 'false'
  if (typeof value === 'bigint') return value.toString()
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw bindError(`${name} is not a finite number`)
    return String(value)
  }
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw bindError(`${name} is an invalid date`)
    return stringLiteral(value.toISOString())
  }
  if (Array.isArray(value)) return `[${value.map((item) => valueLiteral(item, name)).join(', ')}]`
  throw bindError(`${name} has an unsupported type (${typeof value})`)
}

/**
 * `CAST(<literal> AS <type>)` for one parameter value.
 * @example typedLiteral("it's", 'String') // "CAST('it\\'s' AS String)"
 */
export function typedLiteral(value: unknown, type: string, name = 'value'): string {
  const trimmed = type.trim()
  if (!typePattern.test(trimmed)) throw bindError(`${name} declares an unsupported type ${trimmed}`)
  return `CAST(${valueLiteral(value, name)} AS ${trimmed})`
}

/**
 * Replaces every `{name:Type}` of the SQL with the typed literal of `params[name]`, in one pass,
 * so a bound value is never scanned again. A placeholder without a value is an error, as it is
 * for the engine.
 * @example bindQueryParams('SELECT {id:UUID}', { id }) // "SELECT CAST('…' AS UUID)"
 */
export function bindQueryParams(sql: string, params: Record<string, unknown> | undefined): string {
  return sql.replace(placeholder, (_match, name: string, type: string) => {
    if (!params || !Object.hasOwn(params, name)) throw bindError(`${name} has no value`)
    return typedLiteral(params[name], type, name)
  })
}
