/**
 * Opening and closing ioredis connections the same way everywhere: errors reported instead of
 * "Unhandled error event" noise, and a close that never hangs, so the process can exit.
 */
import { Redis, type RedisOptions } from 'ioredis'
import type { CoordinationErrorHandler } from './listeners.js'

const QUIT_TIMEOUT_MS = 2_000

/** Opens a connection to `url`; connection errors go to `onError` (ioredis keeps reconnecting). */
export function openConnection(
  url: string,
  options: RedisOptions,
  onError: CoordinationErrorHandler,
  context: string,
): Redis {
  const redis = new Redis(url, options)
  redis.on('error', (error: Error) => onError(error, context))
  return redis
}

/** Rejects with an Error after `ms` unless `promise` settles first; the timer never holds the process. */
export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms)
    timer.unref()
  })
  try {
    return await Promise.race([promise, timeout])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * QUITs gracefully when connected, else (or when QUIT stalls) drops the socket and stops reconnecting.
 * With `rejectPending` (the default) the client always ends and commands still queued on it are
 * rejected instead of hanging; BullMQ's connections opt out (see below).
 */
export async function closeConnection(
  redis: Redis,
  options: { rejectPending?: boolean } = {},
): Promise<void> {
  if (redis.status === 'end') return
  if (redis.status === 'ready') {
    try {
      await withTimeout(redis.quit(), QUIT_TIMEOUT_MS, 'Redis QUIT')
      return
    } catch {
      // Fall through: the socket is dropped below.
    }
  }
  const wasReconnecting = redis.status === 'reconnecting'
  redis.disconnect()
  if (!wasReconnecting || options.rejectPending === false) return
  // ioredis quirk: disconnect() while waiting to reconnect only cancels the timer. The socket is already
  // gone, so the close handling that rejects queued commands and ends the client never runs, and every
  // caller awaiting a command hangs. One last attempt, after disconnect() marked the close as wanted,
  // runs it: a failed attempt ends the client; a successful one is QUIT like any open connection.
  // Not for BullMQ's connections: once closed, BullMQ drops its error listeners, and the client ending
  // with a connection error makes it re-emit that error with no listener: an unhandled rejection.
  await redis.connect().catch(() => undefined)
  if (redis.status === 'ready') await closeConnection(redis)
}
