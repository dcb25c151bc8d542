// Incremental re-scoring: visitors with new activity or a new identification are scored again by
// every active config of their organization, without a full recalculation. `visitor_changes` says
// who changed and when (written by materialized views as rows land), so a pass reads only the
// window since the last one.
import { type PeriodicTask, startPeriodicTask } from '../coordination/periodic.js'
import type { Coordination } from '../coordination/ports.js'
import { withLock } from '../coordination/with-lock.js'
import { appendNewEvents, eventIdOf } from '../events/events.js'
import type { Repositories } from '../repositories.js'
import type { Store } from '../store/client.js'
import { warnOnSplit } from '../store/slices.js'
import { storedTime } from '../store/time.js'
import { organizationIcpConfigs } from './configs.js'
import type { IcpConfigRow } from './rows.js'
import {
  activeOrganizationConfigIds,
  scoreConfig,
  scoringLockName,
  scoringLockTtlMs,
  splitMessage,
} from './scoring.js'

export interface IncrementalDeps {
  store: Store
  repos: Repositories
  coordination: Coordination
  log: { info(object: object, message: string): void; warn(object: object, message: string): void }
}

/**
 * Scores one config again for the visitors of its organization that changed in (after, until];
 * with `emitMatches`, each visitor this made a match of the config for the first time becomes an
 * `icp.matched` event (flows trigger on it).
 */
async function scoreChanged(
  deps: Pick<IncrementalDeps, 'store' | 'log'>,
  config: IcpConfigRow,
  configs: readonly IcpConfigRow[],
  window: { after: string; until?: string },
  emitMatches = false,
): Promise<void> {
  const computedAt = await scoreConfig(deps.store, config, {
    organizationConfigIds: activeOrganizationConfigIds(configs),
    changed: { after: window.after, until: window.until ?? new Date(Date.now() + 60_000).toISOString() },
    onSplit: warnOnSplit(deps.log, splitMessage, { configId: config.id }),
  })
  if (emitMatches) await emitIcpMatches(deps.store, config, computedAt)
}

/**
 * `icp.matched` for the visitors a scoring run wrote as matched (its rows share `computed_at`), once
 * per visitor and config: the event id is made from both, and ids already stored are left alone.
 */
async function emitIcpMatches(store: Store, config: IcpConfigRow, computedAt: string): Promise<void> {
  const matched = await store.query<{ visitor: string }>(
    `SELECT toString(visitor_id) AS visitor FROM icp_scores
     WHERE organization_id = {organizationId:UUID} AND config_id = {configId:String}
       AND computed_at = {computedAt:DateTime64(3, 'UTC')} AND matched = 1`,
    { organizationId: config.organization_id, configId: config.id, computedAt },
  )
  const at = new Date().toISOString()
  await appendNewEvents(
    store,
    matched.map((row) => ({
      event_id: eventIdOf('icp.matched', config.organization_id, `${config.id}:${row.visitor}`),
      type: 'icp.matched' as const,
      organization_id: config.organization_id,
      visitor_id: row.visitor,
      payload: JSON.stringify({
        event_type: 'icp.matched',
        icp_slug: config.slug,
        icp_name: config.name,
        icp_kind: config.kind,
        visitor_id: row.visitor,
        matched_at: computedAt,
      }),
      created_at: at,
    })),
  )
}

/** Whether the organization has a flow triggered by `icp.matched` (else no event is worth storing). */
async function hasIcpMatchFlows(
  repos: Pick<Repositories, 'flows'>,
  organizationId: string,
): Promise<boolean> {
  const flows = await repos.flows.find({ organization_id: organizationId })
  return flows.some((flow) => flow.trigger === 'icp.matched')
}

/** Organization-level configs first: partner rules may read their results (icp_match & co). */
const scoringOrder = (configs: readonly IcpConfigRow[]) =>
  configs
    .filter((c) => c.is_active)
    .sort((a, b) => (a.kind === b.kind ? 0 : a.kind === 'organization' ? -1 : 1))

/** Rows are stamped when written, but an insert may finish a little after its stamp: read back this far. */
const overlapMs = 30_000
/** Without a pass on record, the changes of the last day (what `visitor_changes` keeps). */
const firstWindowMs = 24 * 3600 * 1000

/**
 * One pass: every visitor changed since the last pass, scored by every active config of its
 * organization. Returns how many organizations it scored. Scoring twice is harmless (the latest
 * row wins), so passes overlap a little rather than miss a slow insert. How far the last pass got
 * is kept in the store (`icp_rescore_passes`), so a start goes on from there.
 */
export async function rescoreChangedVisitors(
  deps: IncrementalDeps,
  options: { now?: number; overlapMs?: number } = {},
): Promise<number> {
  const now = options.now ?? Date.now()
  const until = new Date(now).toISOString()
  const [last] = await deps.store.query<{ until: string; passes: number }>(
    'SELECT max(until) AS until, count() AS passes FROM icp_rescore_passes',
  )
  const lastUntil = Number(last?.passes) > 0 ? Date.parse(storedTime(String(last?.until))) : 0
  const after = new Date(
    Math.max(lastUntil, now - firstWindowMs) - (options.overlapMs ?? overlapMs),
  ).toISOString()
  const organizations = await deps.store.query<{ organization_id: string }>(
    `SELECT DISTINCT organization_id FROM visitor_changes
     WHERE changed_at > {after:DateTime64(3, 'UTC')} AND changed_at <= {until:DateTime64(3, 'UTC')}`,
    { after, until },
  )
  let scored = 0
  for (const { organization_id: organizationId } of organizations) {
    const configs = await organizationIcpConfigs(deps.repos, organizationId)
    const active = scoringOrder(configs)
    const emitMatches = active.length > 0 && (await hasIcpMatchFlows(deps.repos, organizationId))
    for (const { id } of active) {
      const lock = { leaseMs: scoringLockTtlMs, waitMs: scoringLockTtlMs }
      await withLock(deps.coordination.locks, scoringLockName(id), lock, async () => {
        // Read again under the lock: a recalculation of a changed config may have run while this
        // waited, and scoring with the config as it was read before would undo its results.
        const current = await organizationIcpConfigs(deps.repos, organizationId)
        const config = current.find((c) => c.id === id)
        if (config?.is_active) await scoreChanged(deps, config, current, { after, until }, emitMatches)
      })
    }
    if (active.length > 0) scored++
  }
  await deps.store.insert('icp_rescore_passes', [{ until, finished_at: new Date().toISOString() }])
  return scored
}

export type IncrementalScoring = PeriodicTask

/**
 * Runs a pass every `intervalMs` in the one process that holds the pass lock (any number of
 * workers may run this; passes never overlap).
 */
export function startIncrementalScoring(deps: IncrementalDeps, intervalMs: number): IncrementalScoring {
  return startPeriodicTask({
    locks: deps.coordination.locks,
    lockName: 'icp:incremental',
    lockTtlMs: Math.max(60_000, intervalMs * 4),
    intervalMs,
    async pass() {
      const started = Date.now()
      const organizations = await rescoreChangedVisitors(deps)
      if (organizations > 0) {
        deps.log.info({ organizations, durationMs: Date.now() - started }, 'icp: changed visitors scored')
      }
    },
    onError: (error) =>
      deps.log.warn({ err: error }, 'icp: incremental scoring failed; the next pass retries the window'),
  })
}
