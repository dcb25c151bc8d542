import type { PixelConfigRow, Repositories } from '@visitor-id/core'

export interface TrackingKeyCacheOptions {
  repos: Repositories
  /** How long a lookup (found or not) is reused; pubsub invalidation makes changes visible sooner. */
  ttlMs: number
  /** Upper bound on cached keys, so random keys cannot grow memory without limit. */
  maxEntries?: number
}

export interface TrackingKeyCache {
  /** The key's pixel config, or undefined for an unknown key. Rejects only if the store fails and nothing is cached. */
  resolve(trackingKey: string): Promise<PixelConfigRow | undefined>
  invalidate(trackingKey?: string): void
}

interface Entry {
  value: Promise<PixelConfigRow | undefined>
  /** The last value the store answered, served while a refresh fails (ClickHouse down). */
  settled?: PixelConfigRow | undefined
  hasSettled: boolean
  expiresAt: number
}

/** Tracking key -> pixel config, cached: every hit needs it and it rarely changes. */
export function createTrackingKeyCache(options: TrackingKeyCacheOptions): TrackingKeyCache {
  const cache = new Map<string, Entry>()
  const maxEntries = options.maxEntries ?? 10_000
  const load = (trackingKey: string) =>
    options.repos.pixelConfigs.find({ tracking_key: trackingKey }, { limit: 1 }).then((rows) => rows[0])

  return {
    resolve(trackingKey) {
      const now = Date.now()
      const entry = cache.get(trackingKey)
      if (entry && entry.expiresAt > now) return entry.value
      if (!entry && cache.size >= maxEntries) cache.delete(cache.keys().next().value!)
      const previous = entry
      const next: Entry = { value: load(trackingKey), hasSettled: false, expiresAt: now + options.ttlMs }
      next.value = next.value.then(
        (config) => {
          next.settled = config
          next.hasSettled = true
          return config
        },
        (error: unknown) => {
          // Keep serving what we knew; try the store again soon.
          next.expiresAt = Date.now() + 1000
          if (previous?.hasSettled) return previous.settled
          cache.delete(trackingKey)
          throw error
        },
      )
      if (previous?.hasSettled) {
        next.settled = previous.settled
        next.hasSettled = true
      }
      cache.set(trackingKey, next)
      return next.value
    },
    invalidate(trackingKey) {
      if (trackingKey === undefined) cache.clear()
      else cache.delete(trackingKey)
    },
  }
}
