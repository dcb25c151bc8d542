import { ClickHouseError } from '@clickhouse/client'

export type StoreErrorKind = 'unavailable' | 'query'

/** A failed store call. `kind: 'unavailable'` means the store could not be reached: try again later. */
export class StoreError extends Error {
  override name = 'StoreError'
  constructor(
    readonly kind: StoreErrorKind,
    message: string,
    readonly clickhouseCode?: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }
}

/** Sorts a thrown error into query errors (our SQL or data) and unavailability (the store's state). */
export function classifyStoreError(error: unknown): StoreError {
  if (error instanceof StoreError) return error
  // The embedded engine throws its own copy of ClickHouseError, so recognise it by shape too.
  if (error instanceof ClickHouseError || (error as Error)?.constructor?.name === 'ClickHouseError') {
    const engineError = error as ClickHouseError
    return new StoreError('query', engineError.message, engineError.type ?? engineError.code, {
      cause: error,
    })
  }
  // Anything that is not the engine's own answer is transport: refused, reset, timed out, closed.
  const err = error as { code?: unknown; message?: unknown }
  const code = typeof err?.code === 'string' ? err.code : undefined
  const message = typeof err?.message === 'string' ? err.message : String(error)
  return new StoreError('unavailable', message, code, { cause: error })
}
