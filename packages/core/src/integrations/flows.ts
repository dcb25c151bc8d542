// Integration flows (docs/decisions.md, "Integrations"): a trigger and actions, their schema, the
// flows as stored and as the API shows them, and their run log. Running them is flow-runs.ts's.
// Actions: `audience.sync` syncs the list's SHA-256 enriched emails to an audience of the
// integration's selected ads account (made on the first run, kept in the flow's state: see
// audience-sync.ts); `webhook.call` posts the event, signed.
import { z } from 'zod'
import type { Coordination } from '../coordination/ports.js'
import { appError } from '../errors.js'
import { randomToken } from '../ids.js'
import { findList, type ListDeps, listIdPattern } from '../lists/lists.js'
import type { Repositories } from '../repositories.js'
import type { Store } from '../store/client.js'
import { storedTime } from '../store/time.js'
import { checkWebhookUrl } from '../webhooks/http-sender.js'
import { type FlowState, parseFlowState } from './flow-state.js'
import { integrationTypes } from './integration-store.js'
import type { IntegrationDeps } from './integrations.js'
import type { StoredFlowRow } from './rows.js'
import type { AudienceSyncOutcome } from './sync-outcome.js'

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
  /** The audiences made, and the syncs under way (flow-state.ts). */
  state: FlowState
  created_at: string
  updated_at: string
}

export interface FlowRunAction {
  type: string
  /** `skipped`: not run now, queued (another sync of the audience was under way); not a failure. */
  status: 'success' | 'failed' | 'skipped'
  detail: string
  /** An audience sync's outcome. */
  sync?: AudienceSyncOutcome
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
  /** The job queue too: paused syncs are resumed, request statuses read back, by jobs. */
  coordination: Pick<Coordination, 'kv' | 'locks' | 'jobs'>
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
  state: parseFlowState(state),
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
      if (!deps.settings[action.integrationType] || !deps.platforms[action.integrationType]) {
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
    state: { audiences: {}, syncs: {} },
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
