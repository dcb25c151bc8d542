// Running flows (docs/decisions.md, "Integrations"). A flow runs when a stored event of its
// trigger's type happens in its organization (`list.refreshed`, `visitor.identified`,
// `icp.matched`): the event consumer runs the matching flows one after the other and writes a run
// log row per run. A run is keyed by flow and event, so an event consumed twice (a crash before its
// mark) does not run a flow that succeeded for it again. An audience sync the platform paused, or
// that found another sync of its audience under way, runs again as a job (`audience-sync`), logged
// as a run of the same event.
import { type ConsumedEvent, storedEventOf } from '../events/events.js'
import { randomToken } from '../ids.js'
import { storedTime } from '../store/time.js'
import { sendWebhook } from '../webhooks/http-sender.js'
import { webhookHeaders } from '../webhooks/signature.js'
import { SyncBusyError, syncAudience } from './audience-sync.js'
import {
  type FlowDeps,
  type FlowNodes,
  type FlowRow,
  type FlowRun,
  type FlowRunAction,
  flowTriggers,
  getFlow,
  listFlows,
} from './flows.js'
import { type AudienceSyncJob, queueAudienceSync, syncScheduler } from './sync-jobs.js'

type TriggeringEvent = ConsumedEvent

/** The run an action belongs to: the event that triggered it. */
interface RunOrigin {
  eventId: string
  trigger: string
  payload: Record<string, unknown>
}

/** Whether the flow's trigger is this event (the list or ICP config it names, if any). */
function triggeredBy(flow: FlowRow, event: TriggeringEvent, payload: Record<string, unknown>): boolean {
  const trigger = flow.nodes?.trigger
  if (trigger?.type !== event.type) return false
  if (trigger.type === 'list.refreshed' && trigger.listId) return payload.list_id === trigger.listId
  if (trigger.type === 'icp.matched' && trigger.icpSlug) return payload.icp_slug === trigger.icpSlug
  return true
}

/**
 * The event consumer's part: runs the organization's flows this event triggers, each once per
 * event (a run that succeeded for it is not repeated). Returns the runs made.
 */
export async function runFlowsForEvent(deps: FlowDeps, event: TriggeringEvent): Promise<FlowRun[]> {
  if (!(flowTriggers as readonly string[]).includes(event.type)) return []
  const flows = (await listFlows(deps.repos, event.organizationId)).filter(
    (flow) => flow.trigger === event.type,
  )
  if (flows.length === 0) return []
  const stored = await storedEventOf(deps.store, event)
  if (!stored) return []
  const payload = JSON.parse(stored.payload) as Record<string, unknown>
  const happenedAt = Date.parse(storedTime(stored.created_at))
  const runs: FlowRun[] = []
  for (const flow of flows) {
    // A flow runs on what happens after it was made, not on a backlog of older events.
    if (happenedAt < Date.parse(flow.created_at) || !triggeredBy(flow, event, payload)) continue
    const [done] = await deps.store.query<{ n: number }>(
      `SELECT count() AS n FROM integration_flow_runs
       WHERE organization_id = {organizationId:UUID} AND flow_id = {flowId:String} AND event_id = {eventId:String} AND status = 'success'`,
      { organizationId: flow.organization_id, flowId: flow.id, eventId: event.eventId },
    )
    if (Number(done?.n ?? 0) > 0) continue
    const origin = { eventId: event.eventId, trigger: event.type, payload }
    const startedAt = new Date().toISOString()
    const actions: FlowRunAction[] = []
    for (const [index, action] of (flow.nodes?.actions ?? []).entries()) {
      actions.push(await runAction(deps, flow, action, index, origin))
    }
    runs.push(await logRun(deps, flow, origin, actions, startedAt))
  }
  return runs
}

/** One action of a run; a failure is recorded, not thrown, so the next action runs. */
async function runAction(
  deps: FlowDeps,
  flow: FlowRow,
  action: FlowNodes['actions'][number],
  index: number,
  origin: RunOrigin,
): Promise<FlowRunAction> {
  try {
    if (action.type === 'webhook.call') {
      return { type: action.type, status: 'success', detail: await callWebhook(deps, flow, action, origin) }
    }
    const job = jobOf(flow, index, origin)
    const result = await syncAudience(deps, flow, action, syncScheduler(deps.coordination, job))
    return { type: action.type, ...result }
  } catch (error) {
    if (error instanceof SyncBusyError) {
      await queueAudienceSync(deps.coordination, jobOf(flow, index, origin), { dedupe: origin.eventId })
      return { type: action.type, status: 'skipped', detail: error.message }
    }
    return { type: action.type, status: 'failed', detail: reasonOf(error) }
  }
}

const jobOf = (flow: FlowRow, actionIndex: number, origin: RunOrigin): AudienceSyncJob => ({
  organizationId: flow.organization_id,
  flowId: flow.id,
  actionIndex,
  eventId: origin.eventId,
  trigger: origin.trigger,
})

async function logRun(
  deps: FlowDeps,
  flow: FlowRow,
  origin: RunOrigin,
  actions: FlowRunAction[],
  startedAt: string,
): Promise<FlowRun> {
  const run: FlowRun = {
    run_id: randomToken('run_', 12),
    flow_id: flow.id,
    event_id: origin.eventId,
    trigger: origin.trigger,
    // A skipped action is queued to run later: not a failure of the run.
    status: actions.some((a) => a.status === 'failed') ? 'failed' : 'success',
    actions,
    started_at: startedAt,
    finished_at: new Date().toISOString(),
  }
  await deps.store.insert('integration_flow_runs', [
    { ...run, organization_id: flow.organization_id, actions: JSON.stringify(run.actions) },
  ])
  return run
}

/**
 * The `audience-sync` job: the flow's sync action runs again, logged as a run of the same event.
 * A sync still under way elsewhere makes the job fail, so the queue tries it again later.
 */
export async function runAudienceSyncJob(deps: FlowDeps, job: AudienceSyncJob): Promise<FlowRun | undefined> {
  let flow: FlowRow
  try {
    flow = await getFlow(deps.repos, job.organizationId, job.flowId)
  } catch {
    return undefined // Deleted since: nothing to resume.
  }
  const action = flow.nodes?.actions[job.actionIndex]
  if (action?.type !== 'audience.sync') return undefined
  const origin = { eventId: job.eventId, trigger: job.trigger, payload: {} }
  const startedAt = new Date().toISOString()
  let result: FlowRunAction
  try {
    result = {
      type: action.type,
      ...(await syncAudience(deps, flow, action, syncScheduler(deps.coordination, job))),
    }
  } catch (error) {
    if (error instanceof SyncBusyError) throw error
    result = { type: action.type, status: 'failed', detail: reasonOf(error) }
  }
  return logRun(deps, flow, origin, [result], startedAt)
}

/** Why an action failed, for the run log: our codes' messages; never a token. */
function reasonOf(error: unknown): string {
  const code = (error as { code?: unknown }).code
  const message = error instanceof Error ? error.message : String(error)
  return (typeof code === 'string' ? `${code}: ${message}` : message).slice(0, 300)
}

async function callWebhook(
  deps: FlowDeps,
  flow: FlowRow,
  action: Extract<FlowNodes['actions'][number], { type: 'webhook.call' }>,
  origin: RunOrigin,
): Promise<string> {
  const body = Buffer.from(
    JSON.stringify({
      event_type: origin.trigger,
      event_id: origin.eventId,
      flow_id: flow.id,
      organization_id: flow.organization_id,
      event: origin.payload,
    }),
  )
  const { eventId, trigger: eventType } = origin
  const headers = action.secret
    ? webhookHeaders({ body, secret: action.secret, eventId, eventType })
    : {
        'content-type': 'application/json',
        'x-service-event-id': eventId,
        'x-service-event-type': eventType,
      }
  const response = await sendWebhook({ url: action.url, body, headers, allowPrivate: deps.allowPrivate })
  if (!response.ok) throw new Error(`the webhook failed: ${response.error ?? `HTTP ${response.statusCode}`}`)
  return `HTTP ${response.statusCode} in ${response.responseTimeMs} ms`
}
