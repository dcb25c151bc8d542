import { createBatchLoader } from '../store/batch-loader.js'
import type { Store } from '../store/client.js'
import { isVisitorKey, type VisitorKey, visitorKeyOf } from '../store/visitor-keys.js'
import { type PhoneSearchRow, readPhoneSearches } from './search.js'

export interface PhoneSearchReader {
  /** readPhoneSearch, read together with the visitors asked for while an earlier read runs. */
  read(organizationId: string, visitorId: string): Promise<PhoneSearchRow | undefined>
}

/**
 * The latest phone search of visitors whose profiles are asked for concurrently: one store read
 * for every visitor asked for while the previous read ran (store/batch-loader.ts). For what a
 * profile shows only: a search's own rules read it alone, under the visitor's lock.
 * @example const searches = createPhoneSearchReader(store); await searches.read(org, visitor)
 */
export function createPhoneSearchReader(
  store: Store,
  options: { maxBatch?: number; maxInFlight?: number } = {},
): PhoneSearchReader {
  const loader = createBatchLoader<VisitorKey, PhoneSearchRow | undefined>({
    keyOf: visitorKeyOf,
    loadMany: (keys) => readPhoneSearches(store, keys),
    maxBatch: options.maxBatch,
    maxInFlight: options.maxInFlight,
  })
  return {
    // A key that is no pair of UUIDs has no search (and would fail the read of its whole batch).
    read: async (organizationId, visitorId) => {
      const key = { organizationId, visitorId }
      return isVisitorKey(key) ? loader.load(key) : undefined
    },
  }
}
