// The partner webhook outbox (docs/decisions.md, "Partner webhooks"): the store is the outbox.
// `enqueueWebhookEvent` writes a delivery row for the partner of the event's organization, and the
// dispatcher (dispatcher.ts) sends due deliveries and writes their next state and an attempt row, so
// a delivery written is delivered after any restart or outage, at least once, always with the same
// `X-Service-Event-Id` and the same bytes.
import { managingPartnerId } from '../access/access.js'
import { type ConsumedEvent, storedEventOf } from '../events/events.js'
import { nextVersion } from '../ids.js'
import type { Store } from '../store/client.js'
import { readWebhookConfig, type WebhookDeps, type WebhookKind } from './config.js'

export type DeliveryStatus = 'pending' | 'retrying' | 'success' | 'failed'

export interface DeliveryRow {
  id: string
  partner_id: string
  organization_id: string
  kind: WebhookKind
  event_id: string
  event_type: string
  body: string
  status: DeliveryStatus
  attempts: number
  next_attempt_at: string
  created_at: string
  updated_at: string
}

export interface AttemptRow {
  id: string
  delivery_id: string
  partner_id: string
  organization_id: string | null
  kind: WebhookKind
  event_id: string
  event_type: string
  attempt: number
  status: 'success' | 'retrying' | 'failed'
  status_code: number | null
  error: string
  attempted_at: string
  response_time_ms: number
}

const now = () => new Date().toISOString()

/** Events of the service's own (flow triggers) that partners are not sent. */
const internalEvents = new Set(['list.refreshed', 'icp.matched'])

/** The kind of webhook an event type goes to; undefined for internal events. */
export function webhookKindOf(eventType: string): WebhookKind | undefined {
  if (internalEvents.has(eventType)) return undefined
  return eventType.startsWith('visitor.') ? 'identification' : 'billing'
}

/**
 * Queues an event for the partner of its organization, if that partner has an enabled webhook of
 * the event's kind: the one function every producer calls (identification events through the
 * event queue, billing events too). Writing the same event twice queues it once.
 * Returns the delivery id, or undefined when nobody is to be told.
 * @example await enqueueWebhookEvent(deps, { organizationId, eventId, eventType: 'subscription.updated', payload })
 */
export async function enqueueWebhookEvent(
  deps: Pick<WebhookDeps, 'store' | 'repos'>,
  event: { organizationId: string; eventId: string; eventType: string; payload: string | object },
): Promise<string | undefined> {
  const kind = webhookKindOf(event.eventType)
  if (!kind) return undefined
  const partnerId = await managingPartnerId(deps.repos, event.organizationId)
  if (!partnerId) return undefined
  const config = await readWebhookConfig(deps.repos, partnerId, kind)
  if (!config?.enabled || !config.url) return undefined
  const id = `whd_${event.eventId}_${kind}`
  const [existing] = await deps.store.query<{ n: number }>(
    'SELECT count() AS n FROM webhook_deliveries WHERE partner_id = {partnerId:UUID} AND id = {id:String}',
    { partnerId, id },
  )
  if (Number(existing?.n ?? 0) > 0) return id
  await writeDeliveries(deps.store, [
    {
      id,
      partner_id: partnerId,
      organization_id: event.organizationId,
      kind,
      event_id: event.eventId,
      event_type: event.eventType,
      body: typeof event.payload === 'string' ? event.payload : JSON.stringify(event.payload),
      status: 'pending',
      attempts: 0,
      next_attempt_at: now(),
      created_at: now(),
      updated_at: now(),
    },
  ])
  return id
}

/**
 * The event queue's consumer: the stored event (its payload as stored, byte for byte) queued for
 * the partner of its organization.
 */
export async function enqueueStoredEvent(
  deps: Pick<WebhookDeps, 'store' | 'repos'>,
  job: ConsumedEvent,
): Promise<string | undefined> {
  const payload = (await storedEventOf(deps.store, job))?.payload
  if (payload === undefined) return undefined
  return enqueueWebhookEvent(deps, {
    organizationId: job.organizationId,
    eventId: job.eventId,
    eventType: job.type,
    payload,
  })
}

export async function writeDeliveries(store: Store, rows: readonly DeliveryRow[]): Promise<void> {
  if (rows.length > 0)
    await store.insert(
      'webhook_deliveries',
      rows.map((row) => ({ ...row, version: nextVersion() })),
    )
}

export async function writeAttempts(store: Store, rows: readonly AttemptRow[]): Promise<void> {
  if (rows.length > 0) await store.insert('webhook_attempts', rows)
}

export const deliveryColumns = `id, toString(partner_id) AS partner, toString(organization_id) AS organization, kind,
  event_id, event_type, body, status, attempts, next_attempt_at, created_at, updated_at`

export type StoredDelivery = Omit<DeliveryRow, 'partner_id' | 'organization_id'> & {
  partner: string
  organization: string
}

export const fromStored = ({ partner, organization, ...row }: StoredDelivery): DeliveryRow => ({
  ...row,
  partner_id: partner,
  organization_id: organization,
  attempts: Number(row.attempts),
})
