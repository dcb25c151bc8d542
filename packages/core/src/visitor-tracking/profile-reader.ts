import { createBatchLoader } from '../store/batch-loader.js'
import type { Store } from '../store/client.js'
import { type VisitorKey, visitorKeyOf, visitorKeysCondition } from '../store/visitor-keys.js'
import {
  getVisitorProfile,
  identityRowsMax,
  identitySessionId,
  profileOf,
  type TimelineRow,
  uuidPattern,
  type VisitorProfile,
  type VisitorProfileOptions,
} from './visitors.js'

/** The sessions a batched profile holds at most (getVisitorProfile's default). */
const sessionLimit = 100

/**
 * The profile read of getVisitorProfile for a batch of visitors, of one organization or several:
 * each pair's rows of `sessions` under FINAL, the identity row first, then its sessions, newest
 * first. The pairs filter in PREWHERE, before the FINAL merge: they are sorting-key columns, the
 * same for every row that merges into one, so filtering first leaves the merge's result as it is
 * and spares it the rows of the granules' other visitors.
 */
const profilesSql = (condition: string) => `
SELECT toString(organization_id) AS organization, toString(visitor_id) AS visitor,
  toString(session_id) AS id, started_at, ended_at,
  finalizeAggregation(first_page_view) AS first, finalizeAggregation(exit_page) AS exit_page,
  page_view_count, engaged_ms, max_scroll, finalizeAggregation(company_id) AS company_id,
  finalizeAggregation(views) AS views, finalizeAggregation(identity) AS identity, icp
FROM sessions FINAL
PREWHERE ${condition}
ORDER BY organization_id, visitor_id, session_id = toUUID('${identitySessionId}') DESC, started_at DESC
LIMIT {rowLimit:UInt32} BY organization_id, visitor_id
SETTINGS max_threads = 1`

type BatchedRow = TimelineRow & { organization: string; visitor: string }

/** Each key's timeline rows, from one read. */
async function readTimelines(store: Store, keys: readonly VisitorKey[]): Promise<TimelineRow[][]> {
  const { sql, params } = visitorKeysCondition(keys)
  const rows = await store.query<BatchedRow>(profilesSql(sql), {
    ...params,
    rowLimit: sessionLimit + identityRowsMax,
  })
  const byKey = new Map<string, TimelineRow[]>()
  for (const row of rows) {
    const id = visitorKeyOf({ organizationId: row.organization, visitorId: row.visitor })
    const list = byKey.get(id)
    if (list) list.push(row)
    else byKey.set(id, [row])
  }
  return keys.map((key) => byKey.get(visitorKeyOf(key)) ?? [])
}

export interface VisitorProfileReader {
  /** getVisitorProfile, read together with the profiles asked for while an earlier read runs. */
  read(
    organizationId: string,
    visitorId: string,
    options: VisitorProfileOptions,
  ): Promise<VisitorProfile | undefined>
}

export interface VisitorProfileReaderOptions {
  /** The most visitors one read asks for (default 64). */
  maxBatch?: number
  /** Profile reads running at once before new ones wait to share the next (default 1). */
  maxInFlight?: number
}

/**
 * Visitor profiles for concurrent requests: one store read serves every profile asked for while
 * the previous read ran (store/batch-loader.ts). One at a time, a profile costs what
 * getVisitorProfile costs; at 16 concurrent requests, one read of 16 visitors costs about two of one.
 * @example const profiles = createVisitorProfileReader(store); await profiles.read(org, visitor, { ipTracking })
 */
export function createVisitorProfileReader(
  store: Store,
  options: VisitorProfileReaderOptions = {},
): VisitorProfileReader {
  const loader = createBatchLoader<VisitorKey, TimelineRow[]>({
    keyOf: visitorKeyOf,
    loadMany: (keys) => readTimelines(store, keys),
    maxBatch: options.maxBatch,
    maxInFlight: options.maxInFlight,
  })
  return {
    async read(organizationId, visitorId, profileOptions) {
      if (!uuidPattern.test(visitorId) || !uuidPattern.test(organizationId)) return undefined
      // Another session limit reads alone: a batch reads every visitor's rows up to one limit.
      if ((profileOptions.sessionLimit ?? sessionLimit) !== sessionLimit)
        return getVisitorProfile(store, organizationId, visitorId, profileOptions)
      const rows = await loader.load({ organizationId, visitorId })
      return profileOf(rows, organizationId, visitorId, profileOptions)
    },
  }
}
