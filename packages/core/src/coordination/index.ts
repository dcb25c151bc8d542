/** The coordination layer: pick an adapter from configuration, and the ports it implements. */
import type { CoordinationErrorHandler } from './listeners.js'
import { createMemoryCoordination } from './memory.js'
import type { Coordination } from './ports.js'
import { createRedisCoordination } from './redis.js'

export interface CoordinationOptions {
  /** Set: Redis adapters (several processes). Unset or empty: in-process adapters (one process). */
  redisUrl?: string
  /** Prefix of every Redis key, channel and queue (default `vid:`); ignored in memory. */
  prefix?: string
  /** Where background errors go (default: a console warning). */
  onError?: CoordinationErrorHandler
}

/** Builds the Coordination for this process: Redis when `redisUrl` is set, else in-process. */
export function createCoordination(options: CoordinationOptions = {}): Coordination {
  const { redisUrl, prefix, onError } = options
  if (redisUrl) return createRedisCoordination({ url: redisUrl, prefix, onError })
  return createMemoryCoordination({ onError })
}

export type { CoordinationErrorHandler } from './listeners.js'
export type { MemoryCoordinationOptions } from './memory.js'
export { createMemoryCoordination } from './memory.js'
export type {
  Coordination,
  JobHandler,
  JobInfo,
  JobOptions,
  JobQueue,
  KeyValue,
  LockHandle,
  Locks,
  PubSub,
  RateLimiter,
  RateLimiterOptions,
  RateLimitResult,
} from './ports.js'
export { LockTimeoutError } from './ports.js'
export type { RedisCoordinationOptions } from './redis.js'
export { createRedisCoordination } from './redis.js'
