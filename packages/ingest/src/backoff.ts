// How the background loops (spool replay, identification) retry a batch the store failed: a pause
// that doubles up to a bound between tries, and the verdict that a batch the store answered and
// refused again and again is to be set aside, so the batches behind it do not wait forever.

export interface BackoffOptions {
  minMs: number
  maxMs: number
  /** Failures in a row with a query error (not unavailability) after which a batch is set aside. */
  maxAttempts: number
}

/**
 * The retry state of one loop.
 * @example const backoff = createBackoff({ minMs: 250, maxMs: 10_000, maxAttempts: 8 }, pause)
 */
export function createBackoff(options: BackoffOptions, pause: (ms: number) => Promise<void>) {
  let delay = options.minMs
  let attempts = 0
  return {
    /** Failures in a row of the current batch. */
    get attempts() {
      return attempts
    },
    /** The batch went through: the next failure starts over. */
    succeeded() {
      delay = options.minMs
      attempts = 0
    },
    /** Counts a failure; true when the store refused the batch often enough to set it aside. */
    failed(error: unknown): boolean {
      attempts += 1
      return (error as { kind?: string }).kind === 'query' && attempts >= options.maxAttempts
    },
    /** The batch was set aside: the next one gets its own attempts (the pause keeps growing). */
    setAside() {
      attempts = 0
    },
    /** Waits before the next try, longer each time. */
    async wait() {
      await pause(delay)
      delay = Math.min(options.maxMs, delay * 2)
    },
  }
}

export type Backoff = ReturnType<typeof createBackoff>
