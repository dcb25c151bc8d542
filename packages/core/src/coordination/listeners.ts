/**
 * Calls user callbacks (pubsub listeners, onFailed listeners) so that one that throws, or returns a
 * rejected promise, neither breaks the others nor crashes the process: its error goes to `onError`.
 */
import { toError } from './validate.js'

/** Receives errors that have no caller to reject: listener failures, connection errors. */
export type CoordinationErrorHandler = (error: Error, context: string) => void

/** The default handler: a warning on stderr, so background failures are never silent. */
export const warnOnError: CoordinationErrorHandler = (error, context) => {
  console.warn(`[coordination] ${context}:`, error)
}

/** Calls `listener(...args)`, routing a throw or a rejection to `onError`. */
export function callListener<A extends unknown[]>(
  listener: (...args: A) => unknown,
  args: A,
  onError: CoordinationErrorHandler,
  context: string,
): void {
  try {
    const result = listener(...args)
    if (result instanceof Promise) result.catch((error: unknown) => onError(toError(error), context))
  } catch (error) {
    onError(toError(error), context)
  }
}
