// Fact normalization shared by the parser, both evaluators and (as text) the SQL compiler, so the
// definitions of "missing", "numeric string" and "case-insensitive" exist exactly once.

/**
 * A string is numeric when it is entirely a decimal number: optional sign, digits with an optional
 * fraction (or a bare fraction), optional exponent. No spaces, no hex, no `_`, no Infinity/NaN.
 * The same pattern runs in ClickHouse (RE2) via `match()`, so both sides accept the same strings.
 */
export const NUMERIC_PATTERN = '^[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)?$'

const NUMERIC_RE = new RegExp(NUMERIC_PATTERN)

/** Finite number behind a fact value, or undefined: `toFiniteNumber('1e3') === 1000`, `toFiniteNumber('1e999') === undefined`. */
export function toFiniteNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined
  if (typeof value === 'string' && NUMERIC_RE.test(value)) {
    const n = Number(value)
    return Number.isFinite(n) ? n : undefined
  }
  return undefined
}

/** True for a numeric string as defined by NUMERIC_PATTERN (overflow to Infinity excluded): `isNumericString('.5') === true`. */
export function isNumericString(value: string): boolean {
  return toFiniteNumber(value) !== undefined
}

/** Case folding used everywhere: Unicode lowercase, identical to ClickHouse `lowerUTF8` (checked per code point). */
export function fold(value: string): string {
  return value.toLowerCase()
}

/** An array element counts only if it is a non-empty string or a number: `isPresentElement('') === false`. */
export function isPresentElement(value: unknown): boolean {
  return typeof value === 'number' || (typeof value === 'string' && value !== '')
}

/**
 * Presence as `exists` sees it: undefined, null, `""`, `[]` (and arrays holding only such
 * elements) are missing; any string, number or boolean otherwise is present, whatever its kind.
 * `isPresent(['', 'x']) === true`, `isPresent(false) === true`.
 */
export function isPresent(value: unknown): boolean {
  if (typeof value === 'string') return value !== ''
  if (typeof value === 'number' || typeof value === 'boolean') return true
  if (Array.isArray(value)) {
    for (const element of value) if (isPresentElement(element)) return true
  }
  return false
}

/** Lone surrogates cannot travel to ClickHouse as UTF-8, so rule values must be well-formed. */
export function isWellFormed(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i)
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = value.charCodeAt(i + 1)
      if (!(next >= 0xdc00 && next <= 0xdfff)) return false
      i++
    } else if (c >= 0xdc00 && c <= 0xdfff) {
      return false
    }
  }
  return true
}
