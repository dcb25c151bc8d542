/**
 * In-process adapters: correct for a single process (the default deployment and the tests), and
 * useless across processes. State lives in the Coordination instance, never at module level.
 */
import { randomUUID } from 'node:crypto'
import { ExpiringMap } from './expiring-map.js'
import { type CoordinationErrorHandler, callListener, warnOnError } from './listeners.js'
import { MemoryJobQueue } from './memory-jobs.js'
import { pollAcquire } from './poll-acquire.js'
import type {
  Coordination,
  KeyValue,
  LockHandle,
  Locks,
  PubSub,
  RateLimiter,
  RateLimiterOptions,
  RateLimitResult,
} from './ports.js'
import { assertDuration, assertRateLimiterOptions } from './validate.js'

export interface MemoryCoordinationOptions {
  /** Where listener errors go (default: a console warning). */
  onError?: CoordinationErrorHandler
}

/**
 * Fixed-window rate limiter. Counters are shared by every limiter of one Coordination and keyed by
 * window length, exactly like the Redis keys, so two limiters with the same window share a count.
 */
export function createMemoryRateLimiter(
  counters: ExpiringMap<{ count: number }>,
  options: RateLimiterOptions,
): RateLimiter {
  assertRateLimiterOptions(options)
  const { limit, windowMs } = options
  return {
    async hit(key: string): Promise<RateLimitResult> {
      const counterKey = `${windowMs}:${key}`
      const entry = counters.get(counterKey) ?? counters.set(counterKey, { count: 0 }, windowMs)
      entry.value.count += 1
      const count = entry.value.count
      return {
        allowed: count <= limit,
        limit,
        remaining: Math.max(0, limit - count),
        resetAt: entry.expiresAt,
      }
    },
  }
}

/** Lease locks: a random token per acquisition, so only the holder's own release frees the lock. */
export function createMemoryLocks(): Locks {
  const held = new ExpiringMap<string>()
  const tryAcquire = async (name: string, ttlMs: number): Promise<LockHandle | undefined> => {
    assertDuration('ttlMs', ttlMs)
    if (held.get(name)) return undefined
    const token = randomUUID()
    held.set(name, token, ttlMs)
    return {
      async release() {
        if (held.get(name)?.value === token) held.delete(name)
      },
      async extend(nextTtlMs) {
        assertDuration('ttlMs', nextTtlMs)
        if (held.get(name)?.value !== token) return false
        held.set(name, token, nextTtlMs)
        return true
      },
    }
  }
  return {
    tryAcquire,
    async acquire(name, ttlMs, waitMs) {
      assertDuration('ttlMs', ttlMs)
      assertDuration('waitMs', waitMs, true)
      return pollAcquire(name, waitMs, () => tryAcquire(name, ttlMs))
    },
  }
}

/** Key-value with per-key expiry. */
export function createMemoryKeyValue(): KeyValue {
  const values = new ExpiringMap<string>()
  return {
    async get(key) {
      return values.get(key)?.value
    },
    async set(key, value, ttlMs) {
      assertDuration('ttlMs', ttlMs)
      values.set(key, value, ttlMs)
    },
    async setIfAbsent(key, value, ttlMs) {
      assertDuration('ttlMs', ttlMs)
      if (values.get(key)) return false
      values.set(key, value, ttlMs)
      return true
    },
    async delete(key) {
      values.delete(key)
    },
  }
}

/** Pubsub that reaches the subscribers of this process only; delivery is synchronous in `publish`. */
export function createMemoryPubSub(onError: CoordinationErrorHandler): PubSub & { clear(): void } {
  // One object per subscription, so the same function subscribed twice is two subscriptions.
  const channels = new Map<string, Set<{ listener: (message: string) => void }>>()
  return {
    async publish(channel, message) {
      const subscriptions = channels.get(channel)
      if (!subscriptions) return
      // A snapshot, so a listener that (un)subscribes while being called does not disturb this delivery.
      for (const { listener } of [...subscriptions]) {
        callListener(listener, [message], onError, `pubsub listener on "${channel}"`)
      }
    },
    async subscribe(channel, listener) {
      const subscription = { listener }
      const subscriptions = channels.get(channel) ?? new Set()
      channels.set(channel, subscriptions)
      subscriptions.add(subscription)
      return async () => {
        subscriptions.delete(subscription)
        if (subscriptions.size === 0 && channels.get(channel) === subscriptions) channels.delete(channel)
      }
    },
    clear() {
      channels.clear()
    },
  }
}

/** Builds the in-process Coordination; nothing in it keeps the process alive, even before `close()`. */
export function createMemoryCoordination(options: MemoryCoordinationOptions = {}): Coordination {
  const onError = options.onError ?? warnOnError
  const counters = new ExpiringMap<{ count: number }>()
  const jobs = new MemoryJobQueue(onError)
  const pubsub = createMemoryPubSub(onError)
  let closed = false
  return {
    kind: 'memory',
    createRateLimiter: (limiterOptions) => createMemoryRateLimiter(counters, limiterOptions),
    locks: createMemoryLocks(),
    jobs,
    pubsub,
    kv: createMemoryKeyValue(),
    async ping() {
      return !closed
    },
    async close() {
      closed = true
      pubsub.clear()
      await jobs.close()
    },
  }
}
