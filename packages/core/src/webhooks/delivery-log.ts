// The partner webhook delivery log (docs/decisions.md, "Partner webhooks"): every attempt, paged
// and filtered; a logged delivery sent again; and a signed test delivery of a sample event.
import { appError } from '../errors.js'
import { randomToken } from '../ids.js'
import type { Store } from '../store/client.js'
import { attempt, failureOf } from './attempt.js'
import { readWebhookConfig, signingSecret, type WebhookDeps, type WebhookKind } from './config.js'
import { sendWebhook } from './http-sender.js'
import {
  type AttemptRow,
  type DeliveryRow,
  deliveryColumns,
  fromStored,
  type StoredDelivery,
  writeAttempts,
  writeDeliveries,
} from './outbox.js'
import { webhookHeaders } from './signature.js'

const now = () => new Date().toISOString()

export interface WebhookLogQuery {
  page: number
  pageSize: number
  type?: WebhookKind | undefined
  status?: AttemptRow['status'] | undefined
  organizationId?: string | undefined
}

const attemptColumns = `id, delivery_id, toString(partner_id) AS partner, toString(organization_id) AS organization,
  kind, event_id, event_type, attempt, status, status_code, error, attempted_at, response_time_ms`

type StoredAttempt = Omit<AttemptRow, 'partner_id' | 'organization_id'> & {
  partner: string
  organization: string | null
}

const attemptOf = ({ partner, organization, ...row }: StoredAttempt): AttemptRow => ({
  ...row,
  partner_id: partner,
  organization_id: organization,
  attempt: Number(row.attempt),
  status_code: row.status_code === null ? null : Number(row.status_code),
  response_time_ms: Number(row.response_time_ms),
})

/** The partner's delivery log, newest first, one page and the total. */
export async function webhookLogs(
  store: Store,
  partnerId: string,
  query: WebhookLogQuery,
): Promise<{ rows: AttemptRow[]; total: number }> {
  const conditions = ['partner_id = {partnerId:UUID}']
  if (query.type) conditions.push('kind = {type:String}')
  if (query.status) conditions.push('status = {status:String}')
  if (query.organizationId) conditions.push('toString(organization_id) = {organizationId:String}')
  const params = {
    partnerId,
    type: query.type,
    status: query.status,
    organizationId: query.organizationId?.toLowerCase(),
    limit: query.pageSize,
    offset: (query.page - 1) * query.pageSize,
  }
  const rows = await store.query<StoredAttempt & { total: number }>(
    `SELECT ${attemptColumns}, count() OVER () AS total FROM webhook_attempts
     WHERE ${conditions.join(' AND ')}
     ORDER BY attempted_at DESC, id DESC LIMIT {limit:UInt32} OFFSET {offset:UInt64}`,
    params,
  )
  const total =
    rows.length > 0
      ? Number(rows[0]!.total)
      : Number(
          (
            await store.query<{ n: number }>(
              `SELECT count() AS n FROM webhook_attempts WHERE ${conditions.join(' AND ')}`,
              params,
            )
          )[0]?.n ?? 0,
        )
  return { rows: rows.map(attemptOf), total }
}

/**
 * Sends the delivery of a log entry again, now, as a new delivery of the same event (same body and
 * event id): its own attempts and, if it fails, its own retries. Another partner's entry, or a
 * test delivery (nothing to send again): 404.
 */
export async function redeliver(
  deps: WebhookDeps,
  partnerId: string,
  attemptId: string,
): Promise<AttemptRow> {
  const [logged] = await deps.store.query<{ delivery_id: string }>(
    'SELECT delivery_id FROM webhook_attempts WHERE partner_id = {partnerId:UUID} AND id = {id:String} LIMIT 1',
    { partnerId, id: attemptId },
  )
  const [stored] = logged
    ? await deps.store.query<StoredDelivery>(
        `SELECT ${deliveryColumns} FROM webhook_deliveries FINAL
         WHERE partner_id = {partnerId:UUID} AND id = {id:String}`,
        { partnerId, id: logged.delivery_id },
      )
    : []
  if (!stored) throw appError('resource_not_found', 'Log entry not found')
  const original = fromStored(stored)
  const copy: DeliveryRow = {
    ...original,
    id: `${original.id}_r${Date.now().toString(36)}`,
    status: 'pending',
    attempts: 0,
    next_attempt_at: now(),
    created_at: now(),
    updated_at: now(),
  }
  const result = await attempt(deps, copy, await readWebhookConfig(deps.repos, partnerId, copy.kind))
  await writeAttempts(deps.store, [result.attempt])
  await writeDeliveries(deps.store, [result.delivery])
  return result.attempt
}

/**
 * `POST /partner/webhooks/test`: a signed sample event of the kind, sent now (even while the
 * webhook is disabled: that is what a test is for) and logged; the reply says what the receiver
 * answered or why it could not be reached.
 */
export async function testWebhook(
  deps: WebhookDeps,
  partnerId: string,
  kind: WebhookKind,
  sample: object,
): Promise<{ success: boolean; message: string }> {
  const config = await readWebhookConfig(deps.repos, partnerId, kind)
  if (!config?.url) return { success: false, message: `No ${kind} webhook URL is configured` }
  const eventId = randomToken('test_', 12)
  const eventType = kind === 'identification' ? 'visitor.identified' : 'invoice.paid'
  const body = Buffer.from(JSON.stringify(sample))
  const response = await sendWebhook({
    url: config.url,
    body,
    headers: webhookHeaders({ body, secret: signingSecret(deps.settings, config), eventId, eventType }),
    allowPrivate: deps.settings.allowPrivate,
  })
  await writeAttempts(deps.store, [
    {
      id: randomToken('whl_', 12),
      delivery_id: '',
      partner_id: partnerId,
      organization_id: null,
      kind,
      event_id: eventId,
      event_type: eventType,
      attempt: 1,
      status: response.ok ? 'success' : 'failed',
      status_code: response.statusCode,
      error: response.ok ? '' : failureOf(response),
      attempted_at: now(),
      response_time_ms: Math.round(response.responseTimeMs),
    },
  ])
  return response.ok
    ? {
        success: true,
        message: `The receiver answered ${response.statusCode} in ${Math.round(response.responseTimeMs)} ms`,
      }
    : { success: false, message: `The delivery failed: ${failureOf(response)}` }
}
