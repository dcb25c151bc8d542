/**
 * The coordination layer: the ports and their two adapters. Which one a process uses (Redis when
 * REDIS_URL is set) is decided by the server's composition root, not here.
 */
export type { CoordinationErrorHandler } from './listeners.js'
export type { MemoryCoordinationOptions } from './memory.js'
export { createMemoryCoordination } from './memory.js'
export { type PeriodicTask, startPeriodicTask } from './periodic.js'
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
