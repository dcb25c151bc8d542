import type { Repositories } from '@visitor-id/core/repositories'
import type { PixelConfigRow } from '@visitor-id/core/visitor-tracking'

export interface TrackingKeyCacheOptions {
  /** The repositories with the process's read model: pixel configs come from memory. */
  repos: Repositories
}

export interface TrackingKeyCache {
  /**
   * The key's pixel config, or undefined for an unknown key. While the store is down, the last
   * known answer is served; rejects only when there is none.
   */
  resolve(trackingKey: string): Promise<PixelConfigRow | undefined>
}

/**
 * Tracking key -> pixel config. Every hit needs it and it rarely changes, so it is read through the
 * entity read model (core's store/read-model.ts), which a changed pixel config invalidates in every
 * process.
 */
export function createTrackingKeyCache(options: TrackingKeyCacheOptions): TrackingKeyCache {
  return {
    resolve: async (trackingKey) =>
      (await options.repos.pixelConfigs.find({ tracking_key: trackingKey }, { limit: 1 }))[0],
  }
}
