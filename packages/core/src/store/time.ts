/**
 * A timestamp the store returns, as ISO 8601 UTC with milliseconds. The store answers ISO (the
 * client asks for it), but a value without a zone designator is UTC too: every column is.
 * @example storedTime('2026-11-24 10:00:00.000') // '2026-11-24T10:00:00.000Z'
 */
export function storedTime(value: string): string {
  const zoned = /(?:Z|[+-]\d\d:?\d\d)$/i.test(value) ? value : `${value.replace(' ', 'T')}Z`
  return new Date(zoned).toISOString()
}
