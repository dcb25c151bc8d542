// What a flow keeps between runs (`integration_flows.state`, JSON): the audience made for each list
// and account, and each audience sync under way, so a sync that a rate limit, a failure or a
// restart stopped resumes where it stopped (the same sync id, the next batch) instead of sending
// again. The progress is saved after every batch the platform acknowledged.
import type { Locks } from '../coordination/ports.js'
import { withLock } from '../coordination/with-lock.js'
import { appError } from '../errors.js'
import type { Repositories } from '../repositories.js'
import type { Store } from '../store/client.js'
import { createEntityRepository } from '../store/repository.js'
import { flowsTable } from './rows.js'

/** One sequence of batches (a sync's additions, or its removals). */
export interface SequenceProgress {
  /** Batches the platform acknowledged: the next one is `sequence + 1`. */
  sequence: number
  /** Members in those batches. */
  members: number
}

export interface SyncProgress {
  /** The additions' sequence id (BatchPosition.syncId); the removals' is `${syncId}.removals`. */
  syncId: string
  audienceId: string
  added: SequenceProgress
  removed: SequenceProgress
  /** What the platform counted, summed over the batches, when it says. */
  received?: number
  invalid?: number
  /** The platform's ids of the requests (the last 20), to read their processing back. */
  requestIds: string[]
  /** Times the sync waited for the platform and resumed. */
  resumes: number
  startedAt: string
}

export interface FlowState {
  /** Audience ids by `${listId}:${type}:${accountId}`. */
  audiences: Record<string, string>
  /** Syncs under way, by the same key. */
  syncs: Record<string, SyncProgress>
}

/** The stored state; flows made before syncs were kept hold the audiences alone. */
export function parseFlowState(json: string): FlowState {
  const value = JSON.parse(json || '{}') as Partial<FlowState> | Record<string, string>
  if (!('audiences' in value) || typeof value.audiences !== 'object') {
    return { audiences: value as Record<string, string>, syncs: {} }
  }
  return { audiences: value.audiences ?? {}, syncs: (value as Partial<FlowState>).syncs ?? {} }
}

type StateDeps = { store: Store; repos: Pick<Repositories, 'flows'>; locks: Locks }

/** The flow's state as stored now (read from the store, not from memory: another process may have saved it). */
export async function readFlowState(
  deps: StateDeps,
  flow: { organization_id: string; id: string },
): Promise<FlowState> {
  const stored = await createEntityRepository(deps.store, flowsTable).get({
    organization_id: flow.organization_id,
    id: flow.id,
  })
  if (!stored) throw appError('flow_not_found')
  return parseFlowState(stored.state)
}

/**
 * Saves what `change` makes of the stored state, under the flow's lock: the syncs of a flow's
 * audiences may run side by side (resumed by jobs), each changing its own key.
 */
export async function updateFlowState(
  deps: StateDeps,
  flow: { organization_id: string; id: string },
  change: (state: FlowState) => void,
): Promise<FlowState> {
  const lock = `flow-state:${flow.organization_id}:${flow.id}`
  return withLock(deps.locks, lock, { leaseMs: 30_000, waitMs: 30_000 }, () =>
    changeState(deps, flow, change),
  )
}

async function changeState(
  deps: StateDeps,
  flow: { organization_id: string; id: string },
  change: (state: FlowState) => void,
): Promise<FlowState> {
  const stored = await createEntityRepository(deps.store, flowsTable).get({
    organization_id: flow.organization_id,
    id: flow.id,
  })
  // Deleted while it synced: nothing more is sent for it.
  if (!stored) throw appError('flow_not_found')
  const state = parseFlowState(stored.state)
  change(state)
  await deps.repos.flows.save({
    ...stored,
    state: JSON.stringify(state),
    updated_at: new Date().toISOString(),
  })
  return state
}
