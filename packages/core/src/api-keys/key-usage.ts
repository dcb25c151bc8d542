import type { Store } from '../store/client.js'

export interface KeyUsageRecorderOptions {
  store: Store
  /** At most one write per key per interval (default one minute). */
  intervalMs?: number
  /** Where failed writes are reported; they are never thrown at the request that caused them. */
  onError: (error: unknown) => void
  now?: () => number
}

/** Records `lastUsedAt` of API keys without a store write per request. */
export interface KeyUsageRecorder {
  /** Notes a use of the key; writes it when the last write for this key is older than the interval. */
  touch(keyId: string): void
  /** Waits for the writes in flight (call before closing the store). */
  close(): Promise<void>
}

/**
 * Throttled `lastUsedAt` writes: the time of the last write per key is kept in memory, so a busy key
 * costs one small insert a minute per process, off the request's path.
 * @example const usage = createKeyUsageRecorder({ store, onError: (e) => log.error(e) }); usage.touch(keyId)
 */
export function createKeyUsageRecorder(options: KeyUsageRecorderOptions): KeyUsageRecorder {
  const intervalMs = options.intervalMs ?? 60_000
  const now = options.now ?? Date.now
  const lastWrite = new Map<string, number>()
  const inFlight = new Set<Promise<void>>()
  return {
    touch(keyId) {
      const at = now()
      const previous = lastWrite.get(keyId)
      if (previous !== undefined && at - previous < intervalMs) return
      // Bounded: keys not used for an interval need no memory, so forget them.
      if (lastWrite.size >= 100_000) {
        for (const [id, time] of lastWrite) if (at - time >= intervalMs) lastWrite.delete(id)
      }
      lastWrite.set(keyId, at)
      const write = options.store
        .insert('api_key_usage', [{ key_id: keyId, last_used_at: new Date(at).toISOString() }])
        .catch((error: unknown) => {
          // Let the next request try again.
          if (lastWrite.get(keyId) === at) lastWrite.delete(keyId)
          options.onError(error)
        })
        .finally(() => inFlight.delete(write))
      inFlight.add(write)
    },
    async close() {
      await Promise.all([...inFlight])
    },
  }
}

/** The last recorded use of each key, as ISO 8601 strings; keys never used are absent. */
export async function readKeyUsage(store: Store, keyIds: readonly string[]): Promise<Map<string, string>> {
  if (keyIds.length === 0) return new Map()
  const rows = await store.query<{ key_id: string; last_used_at: string }>(
    `SELECT key_id, max(last_used_at) AS last_used_at FROM api_key_usage
     WHERE key_id IN {ids:Array(String)} GROUP BY key_id`,
    { ids: keyIds },
  )
  return new Map(rows.map((row) => [row.key_id, row.last_used_at]))
}
