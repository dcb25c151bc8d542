// The jobs of audience syncs, on the coordination job queue: `audience-sync` runs a flow's sync
// action again (a sync the platform paused, after the wait it asked for; a sync that found another
// one of its audience under way, retried until it is free), and `audience-request-status` reads
// back how the platform processed a finished sync's requests, on platforms that report it later.
import type { Coordination } from '../coordination/ports.js'
import type { Store } from '../store/client.js'
import type { SyncScheduler } from './audience-sync.js'
import type { IntegrationType } from './integration-store.js'
import { accessToken, type IntegrationDeps, platformOf } from './integrations.js'
import {
  type OutcomeKey,
  pendingRequests,
  readBackRequests,
  readOutcome,
  writeOutcome,
} from './sync-outcome.js'

export const audienceSyncJobName = 'audience-sync'
export const requestStatusJobName = 'audience-request-status'

/** Which action of which flow to run again, and the run it continues (its event). */
export interface AudienceSyncJob {
  organizationId: string
  flowId: string
  actionIndex: number
  eventId: string
  trigger: string
}

export interface RequestStatusJob extends OutcomeKey {
  type: IntegrationType
  /** 1 for the first read-back. */
  attempt: number
}

type Jobs = Pick<Coordination, 'jobs'>

/** A busy audience is tried again this often (exponential from the delay), then the run says so. */
const busyRetry = { attempts: 8, backoff: { type: 'exponential' as const, delayMs: 30_000 } }

/** Runs the sync action again later: after another sync of its audience, when it is free. */
export async function queueAudienceSync(
  coordination: Jobs,
  job: AudienceSyncJob,
  options: { delayMs?: number; dedupe: string },
): Promise<void> {
  await coordination.jobs.add(audienceSyncJobName, job, {
    ...busyRetry,
    jobId: `audience-sync:${job.flowId}:${job.actionIndex}:${options.dedupe}`,
    ...(options.delayMs !== undefined ? { delayMs: options.delayMs } : {}),
  })
}

/** The scheduler of one run's sync action (audience-sync.ts asks; the queue does it). */
export function syncScheduler(coordination: Jobs, job: AudienceSyncJob): SyncScheduler {
  return {
    // Each resume its own job id: this one may be running the sync that pauses again.
    resume: (delayMs, sync) =>
      queueAudienceSync(coordination, job, { delayMs, dedupe: `${sync.syncId}:${sync.resumes}` }),
    readBack: (key) => queueRequestStatus(coordination, { ...key, attempt: 1 }),
  }
}

/** A read-back a minute after the sync, then 5 and 30 minutes, 2 and 6 hours after the one before. */
const readBackDelaysMs = [60_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000, 6 * 3_600_000]

async function queueRequestStatus(coordination: Jobs, job: RequestStatusJob): Promise<void> {
  const delayMs = readBackDelaysMs[job.attempt - 1]
  if (delayMs === undefined) return
  await coordination.jobs.add(requestStatusJobName, job, {
    delayMs,
    jobId: `audience-request-status:${job.organizationId}:${job.listId}:${job.audienceKey}:${job.attempt}`,
  })
}

/**
 * The read-back job: the requests of the audience's last sync still processing are asked about;
 * while some still are, another read-back is queued (the next run reads them back too).
 */
export async function runRequestStatusJob(
  deps: IntegrationDeps & { store: Store; coordination: Jobs & IntegrationDeps['coordination'] },
  job: RequestStatusJob,
): Promise<void> {
  const outcome = await readOutcome(deps.store, job)
  if (!outcome || pendingRequests(outcome).length === 0) return
  const platform = platformOf(deps, job.type)
  if (!platform.requestStatus) return
  const token = await accessToken(deps, job.organizationId, job.type)
  const updated = await readBackRequests(outcome, (id) => platform.requestStatus!(token, id))
  // A sync that started meanwhile wrote its own outcome: that one is kept.
  const current = await readOutcome(deps.store, job)
  if (current?.syncId !== outcome.syncId || current.status !== outcome.status) return
  await writeOutcome(deps.store, job, updated)
  if (pendingRequests(updated).length > 0) {
    await queueRequestStatus(deps.coordination, { ...job, attempt: job.attempt + 1 })
  }
}
