// The outcome of the last sync of a list to an audience (migration 0023, `audience_syncs`): what
// the list (`lastAudienceSync`) and the flow's run log show. Written when a sync starts, pauses
// and ends; the processing of its requests, on platforms that report it later (Google's request
// status), is read back by a job a while after the sync and again at the start of the next one.
import { nextVersion } from '../ids.js'
import type { Store } from '../store/client.js'
import type { RequestStatus } from './ads-platform.js'

export interface SyncRequest {
  id: string
  state: RequestStatus['state']
  matched?: number
  /** The share matched, in percent, where the platform gives a range instead of a count (Google). */
  matchRate?: { min: number; max: number }
  detail?: string
}

export interface AudienceSyncOutcome {
  /** `paused`: the platform asked to wait; a job resumes it at `resumesAt`. */
  status: 'running' | 'paused' | 'success' | 'failed'
  flowId: string
  integrationType: string
  accountId: string
  audienceId: string
  syncId: string
  /** Members the platform acknowledged in the sync: added, removed. */
  sent: number
  removed: number
  /** What the platform counted, when it says: members taken, refused as malformed, matched to its users. */
  received?: number
  invalid?: number
  matched?: number
  /** The sync's requests (the last 20) and how the platform processed them, when it reports it. */
  requests: SyncRequest[]
  /** The platform's words (or ours) on why the sync stopped. */
  error: string | null
  resumesAt: string | null
  startedAt: string
  finishedAt: string | null
}

/** Where an outcome is kept: a list's sync to one audience. */
export interface OutcomeKey {
  organizationId: string
  listId: string
  audienceKey: string
}

export async function writeOutcome(
  store: Store,
  key: OutcomeKey,
  outcome: AudienceSyncOutcome,
): Promise<void> {
  await store.insert('audience_syncs', [
    {
      organization_id: key.organizationId,
      list_id: key.listId,
      audience_key: key.audienceKey,
      flow_id: outcome.flowId,
      outcome: JSON.stringify(outcome),
      updated_at: new Date().toISOString(),
      version: nextVersion(),
    },
  ])
}

export async function readOutcome(store: Store, key: OutcomeKey): Promise<AudienceSyncOutcome | undefined> {
  const [row] = await store.query<{ outcome: string }>(
    `SELECT outcome FROM audience_syncs FINAL
     WHERE organization_id = {organization:UUID} AND list_id = {list:String} AND audience_key = {audience:String}`,
    { organization: key.organizationId, list: key.listId, audience: key.audienceKey },
  )
  return row ? (JSON.parse(row.outcome) as AudienceSyncOutcome) : undefined
}

/** The last sync of each of the organization's lists (to whichever audience), by list id. */
export async function lastAudienceSyncs(
  store: Store,
  organizationId: string,
): Promise<Map<string, AudienceSyncOutcome>> {
  const rows = await store.query<{ list_id: string; outcome: string }>(
    `SELECT list_id, argMax(outcome, updated_at) AS outcome FROM audience_syncs FINAL
     WHERE organization_id = {organization:UUID} GROUP BY list_id`,
    { organization: organizationId },
  )
  return new Map(rows.map((row) => [row.list_id, JSON.parse(row.outcome) as AudienceSyncOutcome]))
}

export const requestsKept = 20

/** The request ids of a sync, the newest kept. */
export function withRequest(ids: readonly string[], id: string | undefined): string[] {
  return id ? [...ids, id].slice(-requestsKept) : [...ids]
}

export const pendingRequests = (outcome: AudienceSyncOutcome) =>
  outcome.requests.filter((request) => request.state === 'processing')

/**
 * The outcome with its pending requests read back (`read` is the platform's `requestStatus`); a
 * request whose status cannot be read now stays `processing`. `matched` sums what is known.
 */
export async function readBackRequests(
  outcome: AudienceSyncOutcome,
  read: (requestId: string) => Promise<RequestStatus>,
): Promise<AudienceSyncOutcome> {
  const requests: SyncRequest[] = []
  for (const request of outcome.requests) {
    if (request.state !== 'processing') {
      requests.push(request)
      continue
    }
    try {
      const status = await read(request.id)
      requests.push({
        id: request.id,
        state: status.state,
        ...(status.matched !== undefined ? { matched: status.matched } : {}),
        ...(status.matchRate ? { matchRate: status.matchRate } : {}),
        ...(status.detail ? { detail: status.detail.slice(0, 300) } : {}),
      })
    } catch {
      requests.push(request)
    }
  }
  const known = requests.filter((request) => request.matched !== undefined)
  const matched = known.reduce((sum, request) => sum + (request.matched ?? 0), 0)
  return { ...outcome, requests, ...(known.length > 0 ? { matched } : {}) }
}
