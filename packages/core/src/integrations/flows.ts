// Integration flows (docs/decisions.md, "Integrations"): a trigger and actions. A flow runs when a stored
// event of its trigger's type happens in its organization (`list.refreshed`, `visitor.identified`,
// `icp.matched`): the event consumer runs the matching flows one after the other and writes a run
// log row per run. A run is keyed by flow and event, so an event consumed twice (a crash before its
// mark) does not run a flow that succeeded for it again. Actions: `audience.sync` uploads the list's
// SHA-256 enriched emails to an audience of the integration's selected ads account (made on the
// first run, kept in the flow's state), in batches; `webhook.call` posts the event, signed.
import { z } from 'zod'
import { appError } from '../errors.js'
import { type ConsumedEvent, storedEventOf } from '../events/events.js'
import { randomToken } from '../ids.js'
import {
  findList,
  type ListDeps,
  listEmailHashes,
  listIdPattern,
  setListIntegration,
} from '../lists/lists.js'
import type { Repositories } from '../repositories.js'
import type { Store } from '../store/client.js'
import { storedTime } from '../store/time.js'
import { checkWebhookUrl, sendWebhook } from '../webhooks/http-sender.js'
import { webhookHeaders } from '../webhooks/signature.js'
import { AdsApiError, createAudience, uploadAudienceMembers } from './ads-api.js'
import {
  accessToken,
  connectedIntegration,
  type IntegrationDeps,
  integrationTypes,
  providerOf,
} from './integrations.js'
import type { StoredFlowRow } from './rows.js'

export const flowTriggers = ['list.refreshed', 'visitor.identified', 'icp.matched'] as const
export type FlowTrigger = (typeof flowTriggers)[number]

const listId = z.string().regex(listIdPattern, 'must be a list id (`list_` + 24 hex)')

/** The documented schema of a flow's `nodes`: one trigger, 1 to 10 actions. */
export const flowNodesSchema = z
  .strictObject({
    trigger: z
      .discriminatedUnion('type', [
        z.strictObject({
          type: z.literal('list.refreshed'),
          listId: listId.optional().describe('Only this list; every list of the organization when left out'),
        }),
        z.strictObject({ type: z.literal('visitor.identified') }),
        z.strictObject({
          type: z.literal('icp.matched'),
          icpSlug: z.string().min(1).max(100).optional().describe('Only this ICP config; any when left out'),
        }),
      ])
      .describe('FlowTrigger'),
    actions: z
      .array(
        z
          .discriminatedUnion('type', [
            z.strictObject({
              type: z.literal('audience.sync'),
              listId,
              integrationType: z.enum(integrationTypes),
              audienceName: z.string().trim().min(1).max(200).optional().describe("Default: the list's name"),
            }),
            z.strictObject({
              type: z.literal('webhook.call'),
              url: z.string().max(2048),
              secret: z
                .string()
                .min(16)
                .max(200)
                .optional()
                .describe('Signs the call (`X-Service-Signature`); write-only'),
            }),
          ])
          .describe('FlowAction'),
      )
      .min(1)
      .max(10),
  })
  .describe('FlowNodes')

export type FlowNodes = z.infer<typeof flowNodesSchema>

export interface FlowRow {
  organization_id: string
  id: string
  title: string
  /** The integration type of its first audience sync (the spec's `integrationId` filter), else ''. */
  integration_id: string
  /** '' for a flow without nodes: no event is its trigger. */
  trigger: FlowTrigger | ''
  /** null: created without nodes (the spec makes them optional); it runs nothing. */
  nodes: FlowNodes | null
  /** Audience ids by `${listId}:${type}:${accountId}`. */
  state: Record<string, string>
  created_at: string
  updated_at: string
}

export interface FlowRunAction {
  type: string
  status: 'success' | 'failed' | 'skipped'
  detail: string
}

export interface FlowRun {
  run_id: string
  flow_id: string
  event_id: string
  trigger: string
  status: 'success' | 'failed'
  actions: FlowRunAction[]
  started_at: string
  finished_at: string
}

export interface FlowDeps extends IntegrationDeps, ListDeps {
  /** WEBHOOK_ALLOW_PRIVATE, for `webhook.call`. */
  allowPrivate: boolean
}

export const flowIdPattern = /^flow_[0-9a-f]{24}$/

const iso = storedTime

// --- Store ---------------------------------------------------------------------------------------

const flowOf = ({ nodes, state, ...row }: StoredFlowRow): FlowRow => ({
  ...row,
  trigger: row.trigger as FlowTrigger | '',
  nodes: JSON.parse(nodes || 'null') as FlowNodes | null,
  state: JSON.parse(state || '{}') as Record<string, string>,
  created_at: iso(row.created_at),
  updated_at: iso(row.updated_at),
})

/** Flows are read by the event consumer for every event: through the read model, from memory. */
type FlowRepos = Pick<Repositories, 'flows'>

async function writeFlow(repos: FlowRepos, flow: FlowRow): Promise<void> {
  await repos.flows.save({ ...flow, nodes: JSON.stringify(flow.nodes), state: JSON.stringify(flow.state) })
}

/** The organization's flows, newest first; `integrationId` filters by integration type. */
export async function listFlows(
  repos: FlowRepos,
  organizationId: string,
  integrationId?: string,
): Promise<FlowRow[]> {
  const rows = await repos.flows.find({
    organization_id: organizationId,
    ...(integrationId !== undefined ? { integration_id: integrationId } : {}),
  })
  return rows
    .map(flowOf)
    .sort((a, b) => Date.parse(b.created_at) - Date.parse(a.created_at) || (a.id < b.id ? -1 : 1))
}

/** The flow, or 404 `flow_not_found` (another organization's too). */
export async function getFlow(repos: FlowRepos, organizationId: string, flowId: string): Promise<FlowRow> {
  if (!flowIdPattern.test(flowId)) throw appError('flow_not_found')
  const row = await repos.flows.get({ organization_id: organizationId, id: flowId })
  if (!row) throw appError('flow_not_found')
  return flowOf(row)
}

/**
 * What `nodes` names that the schema cannot check: the organization's lists, configured integration
 * types, webhook URLs (the SSRF rules of partner webhooks). Each problem is a 400 naming its path.
 */
async function checkNodes(deps: FlowDeps, organizationId: string, nodes: FlowNodes): Promise<void> {
  const issues: { path: string; message: string }[] = []
  const listsNamed = [
    ...(nodes.trigger.type === 'list.refreshed' && nodes.trigger.listId
      ? [{ id: nodes.trigger.listId, path: 'nodes.trigger.listId' }]
      : []),
  ]
  for (const [index, action] of nodes.actions.entries()) {
    const path = `nodes.actions.${index}`
    if (action.type === 'audience.sync') {
      listsNamed.push({ id: action.listId, path: `${path}.listId` })
      if (!deps.settings[action.integrationType]) {
        issues.push({
          path: `${path}.integrationType`,
          message: `${action.integrationType} is not configured on this server`,
        })
      }
    } else {
      const problem = await checkWebhookUrl(action.url, { allowPrivate: deps.allowPrivate })
      if (problem) issues.push({ path: `${path}.url`, message: problem })
    }
  }
  for (const { id, path } of listsNamed) {
    const list = await findList(deps.repos, id)
    if (list?.organization_id !== organizationId)
      issues.push({ path, message: 'no list of the organization has this id' })
  }
  if (issues.length > 0) throw appError('invalid_request', issues[0]!.message, { issues })
}

/**
 * Creates a flow, its `nodes` checked first (`checkNodes`). Without nodes it is created all the
 * same and runs nothing: no event is its trigger.
 */
export async function createFlow(
  deps: FlowDeps,
  organizationId: string,
  input: { title: string; nodes?: FlowNodes | undefined },
): Promise<FlowRow> {
  const nodes = input.nodes ?? null
  if (nodes) await checkNodes(deps, organizationId, nodes)
  const now = new Date().toISOString()
  const flow: FlowRow = {
    organization_id: organizationId,
    id: randomToken('flow_', 12),
    title: input.title,
    integration_id: nodes?.actions.find((a) => a.type === 'audience.sync')?.integrationType ?? '',
    trigger: nodes?.trigger.type ?? '',
    nodes,
    state: {},
    created_at: now,
    updated_at: now,
  }
  await writeFlow(deps.repos, flow)
  return flow
}

export async function deleteFlow(repos: FlowRepos, flow: FlowRow): Promise<void> {
  await repos.flows.remove({ organization_id: flow.organization_id, id: flow.id })
}

/** The flow's last runs, newest first. */
export async function flowRuns(store: Store, flow: FlowRow, limit = 20): Promise<FlowRun[]> {
  const rows = await store.query<Omit<FlowRun, 'actions'> & { actions: string }>(
    `SELECT run_id, flow_id, event_id, trigger, status, actions, started_at, finished_at FROM integration_flow_runs
     WHERE organization_id = {organizationId:UUID} AND flow_id = {flowId:String}
     ORDER BY started_at DESC, run_id LIMIT {limit:UInt32}`,
    { organizationId: flow.organization_id, flowId: flow.id, limit },
  )
  return rows.map((row) => ({
    ...row,
    actions: JSON.parse(row.actions) as FlowRunAction[],
    started_at: iso(row.started_at),
    finished_at: iso(row.finished_at),
  }))
}

// --- Running -------------------------------------------------------------------------------------

type TriggeringEvent = ConsumedEvent

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
  const happenedAt = Date.parse(iso(stored.created_at))
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
    runs.push(await runFlow(deps, flow, event, payload))
  }
  return runs
}

async function runFlow(
  deps: FlowDeps,
  flow: FlowRow,
  event: TriggeringEvent,
  payload: Record<string, unknown>,
): Promise<FlowRun> {
  const startedAt = new Date().toISOString()
  const actions: FlowRunAction[] = []
  let state = flow.state
  for (const action of flow.nodes?.actions ?? []) {
    try {
      if (action.type === 'audience.sync') {
        const result = await syncAudience(deps, { ...flow, state }, action)
        state = result.state
        actions.push({ type: action.type, status: 'success', detail: result.detail })
      } else {
        actions.push({
          type: action.type,
          status: 'success',
          detail: await callWebhook(deps, flow, action, event, payload),
        })
      }
    } catch (error) {
      actions.push({ type: action.type, status: 'failed', detail: reasonOf(error) })
    }
  }
  if (state !== flow.state)
    await writeFlow(deps.repos, { ...flow, state, updated_at: new Date().toISOString() })
  const run: FlowRun = {
    run_id: randomToken('run_', 12),
    flow_id: flow.id,
    event_id: event.eventId,
    trigger: event.type,
    status: actions.every((a) => a.status === 'success') ? 'success' : 'failed',
    actions,
    started_at: startedAt,
    finished_at: new Date().toISOString(),
  }
  await deps.store.insert('integration_flow_runs', [
    { ...run, organization_id: flow.organization_id, actions: JSON.stringify(run.actions) },
  ])
  return run
}

/** Why an action failed, for the run log: our codes' messages, the ads API's status; never a token. */
function reasonOf(error: unknown): string {
  if (error instanceof AdsApiError) return error.message
  const code = (error as { code?: unknown }).code
  const message = error instanceof Error ? error.message : String(error)
  return typeof code === 'string' ? `${code}: ${message}` : message.slice(0, 300)
}

async function syncAudience(
  deps: FlowDeps,
  flow: FlowRow,
  action: Extract<FlowNodes['actions'][number], { type: 'audience.sync' }>,
): Promise<{ state: Record<string, string>; detail: string }> {
  const list = await findList(deps.repos, action.listId)
  if (list?.organization_id !== flow.organization_id) throw appError('list_not_found')
  const provider = providerOf(deps.settings, action.integrationType)
  const integration = await connectedIntegration(deps, flow.organization_id, action.integrationType)
  const accountId = integration.selected_account_id
  if (!accountId)
    throw appError('unknown_ads_account', 'No ads account is selected: POST /integrations/account/select')
  // One retry with a refreshed token when the ads API refuses the current one.
  const withToken = async <T>(work: (token: string) => Promise<T>): Promise<T> => {
    try {
      return await work(await accessToken(deps, flow.organization_id, action.integrationType))
    } catch (error) {
      if (!(error instanceof AdsApiError && error.unauthorized)) throw error
      return work(await accessToken(deps, flow.organization_id, action.integrationType, true))
    }
  }
  const key = `${list.id}:${action.integrationType}:${accountId}`
  let audienceId = flow.state[key]
  const state = { ...flow.state }
  if (!audienceId) {
    const name = action.audienceName ?? list.name
    audienceId = await withToken((token) => createAudience(provider.apiUrl, token, accountId, name))
    state[key] = audienceId
  }
  const batchSize = deps.settings.audienceBatchSize
  let batch: string[] = []
  let sent = 0
  let batches = 0
  const flush = async () => {
    const hashes = batch
    batch = []
    await withToken((token) => uploadAudienceMembers(provider.apiUrl, token, audienceId!, hashes))
    sent += hashes.length
    batches++
  }
  for await (const hash of listEmailHashes(deps.store, list)) {
    batch.push(hash)
    if (batch.length >= batchSize) await flush()
  }
  if (batch.length > 0) await flush()
  await setListIntegration(deps, list, action.integrationType)
  return {
    state,
    detail: `${sent} hashed emails in ${batches} batches to audience ${audienceId} (account ${accountId})`,
  }
}

async function callWebhook(
  deps: FlowDeps,
  flow: FlowRow,
  action: Extract<FlowNodes['actions'][number], { type: 'webhook.call' }>,
  event: TriggeringEvent,
  payload: Record<string, unknown>,
): Promise<string> {
  const body = Buffer.from(
    JSON.stringify({
      event_type: event.type,
      event_id: event.eventId,
      flow_id: flow.id,
      organization_id: flow.organization_id,
      event: payload,
    }),
  )
  const headers = action.secret
    ? webhookHeaders({ body, secret: action.secret, eventId: event.eventId, eventType: event.type })
    : {
        'content-type': 'application/json',
        'x-service-event-id': event.eventId,
        'x-service-event-type': event.type,
      }
  const response = await sendWebhook({ url: action.url, body, headers, allowPrivate: deps.allowPrivate })
  if (!response.ok) throw new Error(`the webhook failed: ${response.error ?? `HTTP ${response.statusCode}`}`)
  return `HTTP ${response.statusCode} in ${response.responseTimeMs} ms`
}

/** A flow as the API shows it: a webhook's secret never, `hasSecret` instead. */
export function presentFlow(flow: FlowRow, runs?: FlowRun[]) {
  return {
    id: flow.id,
    organizationId: flow.organization_id,
    title: flow.title,
    integrationId: flow.integration_id || null,
    nodes: flow.nodes && {
      trigger: flow.nodes.trigger,
      actions: flow.nodes.actions.map((action) =>
        action.type === 'webhook.call'
          ? { type: action.type, url: action.url, hasSecret: action.secret !== undefined }
          : action,
      ),
    },
    createdAt: flow.created_at,
    updatedAt: flow.updated_at,
    ...(runs
      ? {
          runs: runs.map((run) => ({
            id: run.run_id,
            eventId: run.event_id,
            trigger: run.trigger,
            status: run.status,
            actions: run.actions,
            startedAt: run.started_at,
            finishedAt: run.finished_at,
          })),
        }
      : {}),
  }
}
