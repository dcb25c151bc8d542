// The `audience.sync` action on the AdsPlatform port (docs/decisions.md, "Integrations"): the list's
// SHA-256 enriched emails the audience lacks are added, and the members that left the list are
// removed, in batches of at most min(AUDIENCE_BATCH_SIZE, the platform's maxBatch). After every
// batch the platform acknowledged, its members are recorded (`audience_members`) and the sync's
// progress saved in the flow's state, so a sync stopped anywhere resumes with the same sync id and
// the next batch, and sends no batch twice. The platform's failures decide what happens:
// `retry_later` pauses the sync (a job resumes it, after the wait the platform asked for, capped),
// `reauthorize` (after one retry with a refreshed token) asks the organization to reconnect,
// `report` fails the action in the platform's words. One sync of an audience runs at a time.
import { appError } from '../errors.js'
import { randomToken } from '../ids.js'
import { findList, setListIntegration } from '../lists/lists.js'
import { type ListRow, listsTable } from '../lists/rows.js'
import { createEntityRepository } from '../store/repository.js'
import { type AdsPlatform, AdsPlatformError, type AudienceTarget, type BatchOutcome } from './ads-platform.js'
import {
  type AudienceScope,
  audienceKeyOf,
  batchesOf,
  membersToAdd,
  membersToRemove,
  recordMembers,
} from './audience-members.js'
import { readFlowState, type SyncProgress, updateFlowState } from './flow-state.js'
import type { FlowDeps, FlowNodes, FlowRow } from './flows.js'
import type { IntegrationType } from './integration-store.js'
import { accessToken, connectedIntegration, platformOf, requireReauthorization } from './integrations.js'
import {
  type AudienceSyncOutcome,
  type OutcomeKey,
  pendingRequests,
  readBackRequests,
  readOutcome,
  requestsKept,
  type SyncRequest,
  withRequest,
  writeOutcome,
} from './sync-outcome.js'

export type AudienceSyncAction = Extract<FlowNodes['actions'][number], { type: 'audience.sync' }>

/** What the run log records of the action. */
export interface SyncActionResult {
  status: 'success' | 'failed'
  detail: string
  sync: AudienceSyncOutcome
}

/** What the sync asks the job queue for (flow-runs.ts knows the flow's run to resume). */
export interface SyncScheduler {
  /** Runs the sync again in `delayMs`; `resumes` counts the resumes of this sync. */
  resume(delayMs: number, sync: { syncId: string; resumes: number }): Promise<void>
  /** Reads the processing of the sync's requests back later. */
  readBack(key: OutcomeKey & { type: IntegrationType }): Promise<void>
}

/** Another run of the flow holds the audience's sync: this one runs after it. */
export class SyncBusyError extends Error {
  constructor() {
    super('A sync of this audience is under way: this one runs after it')
    this.name = 'SyncBusyError'
  }
}

/** How long a sync may hold its audience (a lease: a process that died frees it after this). */
const syncLeaseMs = 30 * 60_000
/** Resumes of one sync after the platform asked to wait, before it is reported as failed. */
const maxResumes = 20
const maxResumeDelayMs = 60 * 60_000

/** How long to wait before resuming: what the platform asked, else 30 s doubling; at least 1 s, at most an hour. */
export function resumeDelayMs(retryAfterMs: number | undefined, resumes: number): number {
  const wait = retryAfterMs ?? 30_000 * 2 ** Math.min(resumes, 6)
  return Math.min(maxResumeDelayMs, Math.max(1000, wait))
}

interface SyncContext {
  deps: FlowDeps
  flow: FlowRow
  list: ListRow
  type: IntegrationType
  platform: AdsPlatform
  target: AudienceTarget
  scope: AudienceScope
  /** The flow state's key of the sync. */
  key: string
  progress: SyncProgress
  /** The batches this run sent, and whether it continued a sync. */
  run: { added: number; removed: number; batches: number; resumedAt: number | undefined }
  /** Requests of earlier syncs of the audience still reported on (read back at the start). */
  carried: SyncRequest[]
  withToken: <T>(work: (token: string) => Promise<T>) => Promise<T>
  /** Renews the sync's hold on its audience; false once another run may have taken it. */
  keepHold: () => Promise<boolean>
  /** The name a new audience is made with. */
  audienceName: string
}

/**
 * Syncs the list of `action` to the audience of the integration's selected account: throws for
 * what is wrong on this side (no list, no account, another sync under way: `SyncBusyError`), and
 * returns a failed result for what the platform refused.
 */
export async function syncAudience(
  deps: FlowDeps,
  flow: FlowRow,
  action: AudienceSyncAction,
  scheduler: SyncScheduler,
): Promise<SyncActionResult> {
  const list = await storedList(deps, action.listId)
  if (list?.organization_id !== flow.organization_id) throw appError('list_not_found')
  const type = action.integrationType
  const platform = platformOf(deps, type)
  const integration = await connectedIntegration(deps, flow.organization_id, type)
  const accountId = integration.selected_account_id
  if (!accountId)
    throw appError('unknown_ads_account', 'No ads account is selected: POST /integrations/account/select')
  if (!list.snapshot) throw new Error('The list was never refreshed: it has no members to sync yet')
  const key = `${list.id}:${type}:${accountId}`
  const lock = await deps.coordination.locks.tryAcquire(
    `audience-sync:${flow.organization_id}:${flow.id}:${key}`,
    syncLeaseMs,
  )
  if (!lock) throw new SyncBusyError()
  try {
    const consent = integration.consent ?? undefined
    const ctx = await startContext(deps, flow, { list, type, platform, accountId, consent, key }, action)
    ctx.keepHold = () => lock.extend(syncLeaseMs)
    return await runSync(ctx, scheduler)
  } finally {
    await lock.release()
  }
}

/**
 * The list as stored now, not a process's copy: its snapshot is what the audience is made to match,
 * and a stale one could be a snapshot already deleted (every member would look gone).
 */
async function storedList(deps: FlowDeps, listId: string): Promise<ListRow | undefined> {
  const known = await findList(deps.repos, listId)
  if (!known) return undefined
  return createEntityRepository(deps.store, listsTable).get({
    organization_id: known.organization_id,
    id: listId,
  })
}

/** Whether the list still points at the snapshot the sync reads (a refresh makes a new one). */
async function snapshotCurrent(ctx: SyncContext): Promise<boolean> {
  const list = await createEntityRepository(ctx.deps.store, listsTable).get({
    organization_id: ctx.list.organization_id,
    id: ctx.list.id,
  })
  return list?.snapshot === ctx.scope.snapshot
}

/**
 * The audience made for the list and account, if any, the progress to continue or a new one, the
 * token user. A sync that paused before its audience existed continues with the same sync id.
 */
async function startContext(
  deps: FlowDeps,
  flow: FlowRow,
  parts: Pick<SyncContext, 'list' | 'type' | 'platform' | 'key'> & Omit<AudienceTarget, 'audienceId'>,
  action: AudienceSyncAction,
): Promise<SyncContext> {
  const { list, type, platform, key, accountId, consent } = parts
  const state = await readFlowState(deps, flow)
  const audienceId = state.audiences[key] ?? ''
  const previous = state.syncs[key]
  const progress = previous?.audienceId === audienceId ? previous : newProgress(audienceId)
  return {
    deps,
    flow,
    list,
    type,
    platform,
    target: { accountId, audienceId, ...(consent ? { consent } : {}) },
    scope: {
      organizationId: flow.organization_id,
      audienceKey: audienceKeyOf(type, accountId, audienceId),
      listId: list.id,
      snapshot: list.snapshot,
      emailRule: platform.emailRule ?? 'standard',
    },
    key,
    progress,
    run: {
      added: 0,
      removed: 0,
      batches: 0,
      resumedAt: progress === previous ? nextBatch(progress) : undefined,
    },
    carried: [],
    withToken: tokenUser(deps, flow.organization_id, type),
    keepHold: async () => true,
    audienceName: action.audienceName ?? list.name,
  }
}

/** Makes the audience on the first sync of the list to the account, and remembers it in the flow. */
async function ensureAudience(ctx: SyncContext): Promise<void> {
  if (ctx.target.audienceId) return
  const { accountId } = ctx.target
  const made = await ctx.withToken((token) =>
    ctx.platform.createAudience(token, accountId, ctx.audienceName, ctx.list.id),
  )
  await updateFlowState(ctx.deps, ctx.flow, (next) => {
    next.audiences[ctx.key] = made
  })
  ctx.target = { ...ctx.target, audienceId: made }
  ctx.scope = { ...ctx.scope, audienceKey: audienceKeyOf(ctx.type, accountId, made) }
  ctx.progress = { ...ctx.progress, audienceId: made }
}

const newProgress = (audienceId: string): SyncProgress => ({
  syncId: randomToken('sync_', 12),
  audienceId,
  added: { sequence: 0, members: 0 },
  removed: { sequence: 0, members: 0 },
  requestIds: [],
  resumes: 0,
  startedAt: new Date().toISOString(),
})

const nextBatch = (progress: SyncProgress) => progress.added.sequence + progress.removed.sequence + 1

/**
 * A user of the integration's token: one retry with a refreshed token when the platform refuses
 * it; refused again, the integration is marked `reauthorization_required`.
 */
function tokenUser(deps: FlowDeps, organizationId: string, type: IntegrationType) {
  const refused = (error: unknown) => error instanceof AdsPlatformError && error.kind === 'reauthorize'
  return async <T>(work: (token: string) => Promise<T>): Promise<T> => {
    try {
      return await work(await accessToken(deps, organizationId, type))
    } catch (error) {
      if (!refused(error)) throw error
    }
    try {
      return await work(await accessToken(deps, organizationId, type, true))
    } catch (error) {
      if (refused(error)) throw await requireReauthorization(deps, organizationId, type)
      throw error
    }
  }
}

async function runSync(ctx: SyncContext, scheduler: SyncScheduler): Promise<SyncActionResult> {
  try {
    // A rate limit may meet the sync here too: it pauses like any batch, before the audience exists.
    await ensureAudience(ctx)
    ctx.carried = await carriedRequests(ctx)
    await writeOutcome(ctx.deps.store, outcomeKeyOf(ctx), outcomeOf(ctx, 'running'))
    await sendSequence(ctx, 'add')
    await sendSequence(ctx, 'remove')
  } catch (error) {
    if (error instanceof SyncBusyError) throw error
    return stopped(ctx, error, scheduler)
  }
  await updateFlowState(ctx.deps, ctx.flow, (state) => {
    delete state.syncs[ctx.key]
  })
  const outcome = outcomeOf(ctx, 'success')
  await writeOutcome(ctx.deps.store, outcomeKeyOf(ctx), outcome)
  await setListIntegration(ctx.deps, ctx.list, ctx.type)
  if (ctx.platform.requestStatus && pendingRequests(outcome).length > 0) {
    await scheduler.readBack({ ...outcomeKeyOf(ctx), type: ctx.type })
  }
  return { status: 'success', detail: successDetail(ctx), sync: outcome }
}

const outcomeKeyOf = (ctx: SyncContext): OutcomeKey => ({
  organizationId: ctx.flow.organization_id,
  listId: ctx.list.id,
  audienceKey: ctx.scope.audienceKey,
})

/** Sends one sequence (the additions, or the removals), saving the progress after each batch. */
async function sendSequence(ctx: SyncContext, kind: 'add' | 'remove'): Promise<void> {
  const { deps, platform, target, scope } = ctx
  const size = Math.min(deps.settings.audienceBatchSize, platform.maxBatch)
  const members = kind === 'add' ? membersToAdd(deps.store, scope) : membersToRemove(deps.store, scope)
  for await (const { hashes, last } of batchesOf(members, size)) {
    // A refresh during the sync may delete the snapshot it reads: its members would all look gone.
    // The removals stop; the run of that refresh's event continues them on the new snapshot.
    if (kind === 'remove' && !(await snapshotCurrent(ctx))) return
    const done = kind === 'add' ? ctx.progress.added : ctx.progress.removed
    const position = {
      syncId: kind === 'add' ? ctx.progress.syncId : `${ctx.progress.syncId}.removals`,
      sequence: done.sequence + 1,
      last,
    }
    const answer = await ctx.withToken((token) =>
      kind === 'add'
        ? platform.addMembers(token, target, hashes, position)
        : platform.removeMembers(token, target, hashes, position),
    )
    await recordMembers(deps.store, scope, hashes, kind === 'remove')
    ctx.progress = advanced(ctx.progress, kind, answer)
    ctx.run[kind === 'add' ? 'added' : 'removed'] += answer.sent
    ctx.run.batches++
    const progress = ctx.progress
    await updateFlowState(deps, ctx.flow, (state) => {
      state.syncs[ctx.key] = progress
    })
    // A long sync renews its hold; one whose hold ran out stops: another run continues its progress.
    if (!(await ctx.keepHold())) throw new SyncBusyError()
  }
}

function advanced(progress: SyncProgress, kind: 'add' | 'remove', answer: BatchOutcome): SyncProgress {
  const field = kind === 'add' ? 'added' : 'removed'
  const sum = (total: number | undefined, more: number | undefined) =>
    more === undefined ? total : (total ?? 0) + more
  const received = sum(progress.received, answer.received)
  const invalid = sum(progress.invalid, answer.invalid)
  return {
    ...progress,
    [field]: { sequence: progress[field].sequence + 1, members: progress[field].members + answer.sent },
    ...(received !== undefined ? { received } : {}),
    ...(invalid !== undefined ? { invalid } : {}),
    requestIds: withRequest(progress.requestIds, answer.requestId),
  }
}

/**
 * Why the sync stopped, recorded. A rate limit pauses it (its progress kept, a resume scheduled);
 * anything else fails it, its progress kept too, so the next run continues the same sync.
 */
async function stopped(
  ctx: SyncContext,
  error: unknown,
  scheduler: SyncScheduler,
): Promise<SyncActionResult> {
  const outcomeKey = outcomeKeyOf(ctx)
  const words = wordsOf(error)
  const wait = error instanceof AdsPlatformError && error.kind === 'retry_later'
  if (wait && ctx.progress.resumes < maxResumes) {
    const delayMs = resumeDelayMs(error.details.retryAfterMs, ctx.progress.resumes)
    const progress = { ...ctx.progress, resumes: ctx.progress.resumes + 1 }
    ctx.progress = progress
    await updateFlowState(ctx.deps, ctx.flow, (state) => {
      state.syncs[ctx.key] = progress
    })
    const resumesAt = new Date(Date.now() + delayMs).toISOString()
    const outcome = { ...outcomeOf(ctx, 'paused'), error: words, resumesAt }
    await writeOutcome(ctx.deps.store, outcomeKey, outcome)
    await scheduler.resume(delayMs, progress)
    const detail = `paused after ${ctx.run.batches} batches (${words}): resumes in ${Math.ceil(delayMs / 1000)} s`
    return { status: 'failed', detail, sync: outcome }
  }
  const reason = wait ? `the platform asked to wait ${maxResumes} times in this sync (${words})` : words
  const outcome = { ...outcomeOf(ctx, 'failed'), error: reason }
  await writeOutcome(ctx.deps.store, outcomeKey, outcome)
  return { status: 'failed', detail: reason, sync: outcome }
}

/** Why a sync stopped, in the platform's words or ours: never a token (adapters keep them out of messages). */
function wordsOf(error: unknown): string {
  const code = (error as { code?: unknown }).code
  const message = error instanceof Error ? error.message : String(error)
  const words =
    typeof code === 'string' && !(error instanceof AdsPlatformError) ? `${code}: ${message}` : message
  return words.slice(0, 300)
}

function successDetail(ctx: SyncContext): string {
  const { run, target } = ctx
  const resumed = run.resumedAt ? `resumed ${ctx.progress.syncId} at batch ${run.resumedAt}: ` : ''
  return (
    `${resumed}added ${run.added} and removed ${run.removed} hashed emails in ${run.batches} batches ` +
    `to audience ${target.audienceId} (account ${target.accountId})`
  )
}

/** The earlier syncs' requests still processing, read back now (the last outcome's). */
async function carriedRequests(ctx: SyncContext): Promise<SyncRequest[]> {
  const previous = await readOutcome(ctx.deps.store, outcomeKeyOf(ctx))
  if (!previous) return []
  const read = ctx.platform.requestStatus?.bind(ctx.platform)
  if (!read || pendingRequests(previous).length === 0) return previous.requests
  const updated = await readBackRequests(previous, (id) => ctx.withToken((token) => read(token, id)))
  return updated.requests
}

function outcomeOf(ctx: SyncContext, status: AudienceSyncOutcome['status']): AudienceSyncOutcome {
  const { progress, target } = ctx
  // Without a way to read requests back, an acknowledged request is all there is to know.
  const state = ctx.platform.requestStatus ? 'processing' : 'succeeded'
  const requests = new Map<string, SyncRequest>()
  for (const request of ctx.carried) requests.set(request.id, request)
  for (const id of progress.requestIds) if (!requests.has(id)) requests.set(id, { id, state })
  const kept = [...requests.values()].slice(-requestsKept)
  const known = kept.filter((request) => request.matched !== undefined)
  return {
    status,
    flowId: ctx.flow.id,
    integrationType: ctx.type,
    accountId: target.accountId,
    audienceId: target.audienceId,
    syncId: progress.syncId,
    sent: progress.added.members,
    removed: progress.removed.members,
    ...(progress.received !== undefined ? { received: progress.received } : {}),
    ...(progress.invalid !== undefined ? { invalid: progress.invalid } : {}),
    ...(known.length > 0 ? { matched: known.reduce((sum, r) => sum + (r.matched ?? 0), 0) } : {}),
    requests: kept,
    error: null,
    resumesAt: null,
    startedAt: progress.startedAt,
    finishedAt: status === 'success' || status === 'failed' ? new Date().toISOString() : null,
  }
}
