/**
 * Redis adapters: what makes several processes behave as one. Every key, channel and BullMQ queue
 * lives under one prefix (default `vid:`): `<prefix>rl:`, `lock:`, `kv:`, `ps:` and `jobs:`.
 */
import { randomUUID } from 'node:crypto'
import type { Redis } from 'ioredis'
import { type CoordinationErrorHandler, warnOnError } from './listeners.js'
import { pollAcquire } from './poll-acquire.js'
import type {
  Coordination,
  KeyValue,
  LockHandle,
  Locks,
  RateLimiter,
  RateLimiterOptions,
  RateLimitResult,
} from './ports.js'
import { closeConnection, openConnection, withTimeout } from './redis-connection.js'
import { BullJobQueue } from './redis-jobs.js'
import { RedisPubSub } from './redis-pubsub.js'
import { assertDuration, assertRateLimiterOptions } from './validate.js'

export interface RedisCoordinationOptions {
  /** e.g. `redis://127.0.0.1:6379` or `rediss://user:pass@host:6380/0`. */
  url: string
  /** Prepended verbatim to every key, channel and queue (default `vid:`). */
  prefix?: string
  /** Where connection and listener errors go (default: a console warning). */
  onError?: CoordinationErrorHandler
}

const PING_TIMEOUT_MS = 1_000

// One round trip, atomic: the first hit of a window sets its expiry. The PTTL < 0 branch also repairs
// a counter that lost its expiry, which would otherwise block the key forever.
const RATE_HIT_LUA = `
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}
`

// Compare-and-delete, so a holder whose lease ran out cannot delete the next holder's lock.
const RELEASE_LOCK_LUA = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`

// Compare-and-renew: only the holder whose token is still there extends its lease.
const EXTEND_LOCK_LUA = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
`

/** The scripts above, registered on the command connection (ioredis uses EVALSHA after the first call). */
interface CoordinationCommands {
  coordinationRateHit(key: string, windowMs: number): Promise<[number, number]>
  coordinationReleaseLock(key: string, token: string): Promise<number>
  coordinationExtendLock(key: string, token: string, ttlMs: number): Promise<number>
}

type CommandConnection = Redis & CoordinationCommands

function defineCommands(redis: Redis): CommandConnection {
  redis.defineCommand('coordinationRateHit', { numberOfKeys: 1, lua: RATE_HIT_LUA })
  redis.defineCommand('coordinationReleaseLock', { numberOfKeys: 1, lua: RELEASE_LOCK_LUA })
  redis.defineCommand('coordinationExtendLock', { numberOfKeys: 1, lua: EXTEND_LOCK_LUA })
  return redis as CommandConnection
}

/** Redis PX takes whole milliseconds. */
const px = (ms: number): number => Math.max(1, Math.ceil(ms))

/** Fixed-window limiter: one counter key per key and window length, expiring when the window ends. */
export function createRedisRateLimiter(
  redis: CommandConnection,
  keyPrefix: string,
  options: RateLimiterOptions,
): RateLimiter {
  assertRateLimiterOptions(options)
  const { limit } = options
  const windowMs = px(options.windowMs)
  return {
    async hit(key: string): Promise<RateLimitResult> {
      const [count, ttl] = await redis.coordinationRateHit(`${keyPrefix}${windowMs}:${key}`, windowMs)
      return {
        allowed: count <= limit,
        limit,
        remaining: Math.max(0, limit - count),
        resetAt: Date.now() + ttl,
      }
    },
  }
}

/** Lease locks with `SET NX PX` and a random token per acquisition. */
export function createRedisLocks(redis: CommandConnection, keyPrefix: string): Locks {
  const tryAcquire = async (name: string, ttlMs: number): Promise<LockHandle | undefined> => {
    assertDuration('ttlMs', ttlMs)
    const key = keyPrefix + name
    const token = randomUUID()
    const set = await redis.set(key, token, 'PX', px(ttlMs), 'NX')
    if (set !== 'OK') return undefined
    return {
      async release() {
        await redis.coordinationReleaseLock(key, token)
      },
      async extend(nextTtlMs) {
        assertDuration('ttlMs', nextTtlMs)
        return (await redis.coordinationExtendLock(key, token, px(nextTtlMs))) === 1
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

/** Key-value on plain strings with `SET PX` / `SET NX PX`. */
export function createRedisKeyValue(redis: Redis, keyPrefix: string): KeyValue {
  return {
    async get(key) {
      return (await redis.get(keyPrefix + key)) ?? undefined
    },
    async set(key, value, ttlMs) {
      assertDuration('ttlMs', ttlMs)
      await redis.set(keyPrefix + key, value, 'PX', px(ttlMs))
    },
    async setIfAbsent(key, value, ttlMs) {
      assertDuration('ttlMs', ttlMs)
      return (await redis.set(keyPrefix + key, value, 'PX', px(ttlMs), 'NX')) === 'OK'
    },
    async delete(key) {
      await redis.del(keyPrefix + key)
    },
  }
}

/**
 * Builds the Redis Coordination. Opens one command connection now; the pubsub subscriber, BullMQ
 * producer and BullMQ worker connections open on first use. `close()` closes all of them.
 */
export function createRedisCoordination(options: RedisCoordinationOptions): Coordination {
  const prefix = options.prefix ?? 'vid:'
  const onError = options.onError ?? warnOnError
  const { url } = options
  const redis = defineCommands(openConnection(url, {}, onError, 'redis connection'))
  const jobs = new BullJobQueue({
    openProducerConnection: () => openConnection(url, {}, onError, 'redis producer connection'),
    // BullMQ refuses a worker connection whose commands could fail after N retries.
    openWorkerConnection: () =>
      openConnection(url, { maxRetriesPerRequest: null }, onError, 'redis worker connection'),
    bullPrefix: `${prefix}jobs`,
    onError,
  })
  const pubsub = new RedisPubSub(
    redis,
    () => openConnection(url, {}, onError, 'redis subscriber connection'),
    `${prefix}ps:`,
    onError,
  )
  let closing: Promise<void> | undefined
  const close = async (): Promise<void> => {
    try {
      // Jobs first: running handlers may still use the other ports and the connections.
      await jobs.close()
    } finally {
      await pubsub.close()
      await closeConnection(redis)
    }
  }
  return {
    kind: 'redis',
    createRateLimiter: (limiterOptions) => createRedisRateLimiter(redis, `${prefix}rl:`, limiterOptions),
    locks: createRedisLocks(redis, `${prefix}lock:`),
    jobs,
    pubsub,
    kv: createRedisKeyValue(redis, `${prefix}kv:`),
    async ping() {
      try {
        return (await withTimeout(redis.ping(), PING_TIMEOUT_MS, 'Redis PING')) === 'PONG'
      } catch {
        return false
      }
    },
    close() {
      closing ??= close()
      return closing
    },
  }
}
