import type { PixelConfigRow, Repositories } from '@visitor-id/core'

export interface TrackingKeyCacheOptions {
  repos: Repositories
  /** How long a lookup (found or not) is reused. */
  ttlMs: number
  /** Upper bound on cached keys, so random keys cannot grow memory without limit. */
  maxEntries?: number
}

export interface TrackingKeyCache {
  resolve(trackingKey: string): Promise<PixelConfigRow | undefined>
  invalidate(trackingKey?: string): void
}

/** Tracking key -> pixel config, cached: every hit needs it and it rarely changes. */
export function createTrackingKeyCache(options: TrackingKeyCacheOptions): TrackingKeyCache {
  const cache = new Map<string, { value: Promise<PixelConfigRow | undefined>; expiresAt: number }>()
  const maxEntries = options.maxEntries ?? 10_000
  return {
    resolve(trackingKey) {
      const now = Date.now()
      const hit = cache.get(trackingKey)
      if (hit && hit.expiresAt > now) return hit.value
      if (cache.size >= maxEntries) cache.delete(cache.keys().next().value!)
      const value = options.repos.pixelConfigs
        .find({ tracking_key: trackingKey }, { limit: 1 })
        .then((rows) => rows[0])
      // A failed lookup is not cached.
      value.catch(() => cache.delete(trackingKey))
      cache.set(trackingKey, { value, expiresAt: now + options.ttlMs })
      return value
    },
    invalidate(trackingKey) {
      if (trackingKey === undefined) cache.clear()
      else cache.delete(trackingKey)
    },
  }
}
