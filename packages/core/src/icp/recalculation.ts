// Recalculation as a job: 202 at once, one run at a time per config, a status the API can read,
// and a log line per run. Asking again while a run is queued adds nothing; asking while one runs
// queues exactly one more run, so a change made during a run is always scored.
import type { Coordination } from '../coordination/ports.js'
import type { Repositories } from '../repositories.js'
import type { Store } from '../store/client.js'
import { warnOnSplit } from '../store/slices.js'
import { organizationIcpConfigs } from './configs.js'
import type { IcpConfigRow } from './rows.js'
import {
  activeOrganizationConfigIds,
  configExpressions,
  scoreConfig,
  scoringLockName,
  scoringLockTtlMs,
  splitMessage,
} from './scoring.js'

export const recalculationJobName = 'icp.recalculate'

export interface RecalculationStatus {
  status: 'queued' | 'running' | 'succeeded' | 'failed'
  requestedAt: string
  startedAt: string | null
  finishedAt: string | null
  /** Of the last finished run: visitors scored and, of those, matched. */
  visitors: number | null
  matches: number | null
  durationMs: number | null
  error: string | null
}

interface RecalculationJob {
  organizationId: string
  configId: string
}

const statusKey = (configId: string) => `icp:recalculation:${configId}`
const statusTtlMs = 7 * 24 * 3600 * 1000

/** The config's last recalculation, or null when none was ever asked for. */
export async function recalculationStatus(
  coordination: Coordination,
  configId: string,
): Promise<RecalculationStatus | null> {
  const raw = await coordination.kv.get(statusKey(configId))
  return raw ? (JSON.parse(raw) as RecalculationStatus) : null
}

async function saveStatus(coordination: Coordination, configId: string, status: RecalculationStatus) {
  await coordination.kv.set(statusKey(configId), JSON.stringify(status), statusTtlMs)
}

/** Queues a recalculation of the config over all its organization's visitors; returns its status. */
export async function requestRecalculation(
  coordination: Coordination,
  config: IcpConfigRow,
): Promise<RecalculationStatus> {
  const previous = await recalculationStatus(coordination, config.id)
  const status: RecalculationStatus = {
    visitors: null,
    matches: null,
    durationMs: null,
    error: null,
    startedAt: null,
    finishedAt: null,
    ...previous,
    status: previous?.status === 'running' ? 'running' : 'queued',
    requestedAt: new Date().toISOString(),
  }
  await saveStatus(coordination, config.id, status)
  const job: RecalculationJob = { organizationId: config.organization_id, configId: config.id }
  // A queue keeps one job per id while it is pending, running included: a request during a run
  // gets the id of that run's follow-up, so it is scored after the run, once however often asked.
  const followUp = previous?.status === 'running' ? `:after:${previous.startedAt}` : ''
  await coordination.jobs.add(recalculationJobName, job, {
    jobId: `icp-recalculate:${config.id}${followUp}`,
    attempts: 3,
    backoff: { type: 'exponential', delayMs: 5000 },
  })
  return status
}

/**
 * Partner configs whose rules read the organization-level results (icp_match, persona_match,
 * icp_score) are scored again once those results change: after a run of an organization-level
 * config, and when one is turned off or deleted. Returns how many were asked for.
 */
export async function requestDependentRecalculations(
  deps: { repos: Repositories; coordination: Coordination },
  organizationId: string,
): Promise<number> {
  const dependents = (await organizationIcpConfigs(deps.repos, organizationId)).filter(
    (c) => c.kind === 'partner' && c.is_active && configExpressions(c).readsOrganizationResults,
  )
  for (const config of dependents) await requestRecalculation(deps.coordination, config)
  return dependents.length
}

export interface RecalculationDeps {
  store: Store
  repos: Repositories
  coordination: Coordination
  log: { info(object: object, message: string): void; warn(object: object, message: string): void }
}

/** Visitors of the organization (all scored by a run) and, of those, the config's matches. */
async function countScores(
  store: Store,
  config: IcpConfigRow,
): Promise<{ visitors: number; matches: number }> {
  const [row] = await store.query<{ visitors: number; matches: number }>(
    `SELECT
       (SELECT uniqExact(visitor_id) FROM visitor_facts WHERE organization_id = {organizationId:UUID}) AS visitors,
       (SELECT count() FROM icp_scores FINAL
        WHERE organization_id = {organizationId:UUID} AND config_id = {configId:String} AND matched = 1) AS matches`,
    { organizationId: config.organization_id, configId: config.id },
  )
  return { visitors: Number(row?.visitors ?? 0), matches: Number(row?.matches ?? 0) }
}

/** Runs one recalculation (the job's handler); one run at a time per config, in any process. */
export async function runRecalculation(deps: RecalculationDeps, job: RecalculationJob): Promise<void> {
  const { coordination, log } = deps
  const lock = await coordination.locks.acquire(
    scoringLockName(job.configId),
    scoringLockTtlMs,
    scoringLockTtlMs,
  )
  const startedAt = new Date().toISOString()
  const started = Date.now()
  const previous = await recalculationStatus(coordination, job.configId)
  const base: RecalculationStatus = {
    visitors: null,
    matches: null,
    durationMs: null,
    error: null,
    finishedAt: null,
    requestedAt: startedAt,
    ...previous,
    status: 'running',
    startedAt,
  }
  try {
    await saveStatus(coordination, job.configId, base)
    const configs = await organizationIcpConfigs(deps.repos, job.organizationId)
    const config = configs.find((c) => c.id === job.configId)
    // A deleted or inactive config keeps no scores that count: nothing to compute.
    if (config?.is_active) {
      // Visitors that change while this runs are scored by the incremental pass; its rows carry a
      // later version and a later computed_at, so they win over this run's.
      await scoreConfig(deps.store, config, {
        organizationConfigIds: activeOrganizationConfigIds(configs),
        onSplit: warnOnSplit(log, splitMessage, { configId: config.id }),
      })
    }
    const counts = config?.is_active ? await countScores(deps.store, config) : { visitors: 0, matches: 0 }
    // Partner rules that read these results are stale now; asked for before this run reports success.
    if (config?.kind === 'organization') await requestDependentRecalculations(deps, job.organizationId)
    const durationMs = Date.now() - started
    const latest = await recalculationStatus(coordination, job.configId)
    const askedAgain = latest !== null && latest.requestedAt > startedAt
    await saveStatus(coordination, job.configId, {
      ...base,
      ...counts,
      requestedAt: latest?.requestedAt ?? base.requestedAt,
      status: askedAgain ? 'queued' : 'succeeded',
      finishedAt: new Date().toISOString(),
      durationMs,
      error: null,
    })
    log.info(
      {
        organizationId: job.organizationId,
        configId: job.configId,
        slug: config?.slug,
        durationMs,
        ...counts,
      },
      'icp recalculation finished',
    )
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    await saveStatus(coordination, job.configId, {
      ...base,
      status: 'failed',
      finishedAt: new Date().toISOString(),
      durationMs: Date.now() - started,
      error: message.slice(0, 500),
    })
    log.warn(
      { organizationId: job.organizationId, configId: job.configId, err: error },
      'icp recalculation failed',
    )
    throw error
  } finally {
    await lock.release()
  }
}
