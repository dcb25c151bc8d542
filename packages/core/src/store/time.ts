/**
 * A timestamp the store returns, as ISO 8601 UTC with milliseconds. The store answers ISO (the
 * client asks for it), but a value without a zone designator is UTC too: every column is.
 * @example storedTime('2026-11-24 10:00:00.000') // '2026-11-24T10:00:00.000Z'
 */
export function storedTime(value: string): string {
  const zoned = /(?:Z|[+-]\d\d:?\d\d)$/i.test(value) ? value : `${value.replace(' ', 'T')}Z`
  return new Date(zoned).toISOString()
}

/**
 * An instant as a `DateTime64` query parameter. A ClickHouse server binds parameters itself and
 * refuses ISO 8601 with its zone designator; this form it takes (and so does the embedded engine).
 * @example timeParam('2026-11-24T10:00:00.000Z') // '2026-11-24 10:00:00.000'
 */
export function timeParam(iso: string): string {
  return iso.replace('T', ' ').replace('Z', '')
}
