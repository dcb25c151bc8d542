/**
 * A Map whose entries expire, the in-process stand-in for Redis keys with a PX expiry. Expired entries
 * are dropped when read and by a sweep at most once per `sweepEveryMs` on writes, so no timer is needed.
 */

export interface ExpiringEntry<V> {
  value: V
  /** Unix time in milliseconds after which the entry is gone. */
  expiresAt: number
}

export class ExpiringMap<V> {
  readonly #entries = new Map<string, ExpiringEntry<V>>()
  readonly #sweepEveryMs: number
  #nextSweepAt = 0

  constructor(sweepEveryMs = 10_000) {
    this.#sweepEveryMs = sweepEveryMs
  }

  /** The live entry for `key`, or undefined when absent or expired. */
  get(key: string): ExpiringEntry<V> | undefined {
    const entry = this.#entries.get(key)
    if (entry === undefined) return undefined
    if (entry.expiresAt <= Date.now()) {
      this.#entries.delete(key)
      return undefined
    }
    return entry
  }

  /** Stores `value` for `ttlMs` and returns the new entry. */
  set(key: string, value: V, ttlMs: number): ExpiringEntry<V> {
    const now = Date.now()
    this.#sweep(now)
    const entry = { value, expiresAt: now + ttlMs }
    this.#entries.set(key, entry)
    return entry
  }

  delete(key: string): void {
    this.#entries.delete(key)
  }

  #sweep(now: number): void {
    if (now < this.#nextSweepAt) return
    this.#nextSweepAt = now + this.#sweepEveryMs
    for (const [key, entry] of this.#entries) if (entry.expiresAt <= now) this.#entries.delete(key)
  }
}
