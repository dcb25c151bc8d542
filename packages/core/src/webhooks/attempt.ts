// One attempt at a partner webhook delivery (docs/decisions.md, "Partner webhooks"): signed and sent
// once, giving the attempt row for the log and the delivery's next state on the retry schedule.
import { randomToken } from '../ids.js'
import { signingSecret, type WebhookDeps } from './config.js'
import { sendWebhook, type WebhookResponse } from './http-sender.js'
import type { AttemptRow, DeliveryRow } from './outbox.js'
import type { WebhookConfigRow } from './rows.js'
import { webhookHeaders } from './signature.js'

const now = () => new Date().toISOString()

export /** Why an attempt failed, for the log and the test reply. */
function failureOf(response: WebhookResponse): string {
  return response.error ?? (response.statusCode ? `HTTP ${response.statusCode}` : 'no answer')
}

export /** Sends one delivery once: the attempt row and the delivery's next state (not written yet). */
async function attempt(
  deps: WebhookDeps,
  delivery: DeliveryRow,
  config: WebhookConfigRow | undefined,
  signal?: AbortSignal,
): Promise<{ delivery: DeliveryRow; attempt: AttemptRow }> {
  const tries = delivery.attempts + 1
  const attemptedAt = now()
  let response: WebhookResponse
  let secret: string | undefined
  let unreadable: string | undefined
  try {
    secret = config ? signingSecret(deps.settings, config) : undefined
  } catch (error) {
    unreadable = (error as Error).message
  }
  if (!config?.enabled || !config.url) {
    response = { ok: false, statusCode: null, responseTimeMs: 0, error: 'the webhook is disabled' }
  } else if (unreadable !== undefined || secret === undefined) {
    // Retried on the schedule: setting the same SECRET_KEY as the process that sealed it fixes it.
    response = { ok: false, statusCode: null, responseTimeMs: 0, error: unreadable ?? 'no secret' }
  } else {
    const body = Buffer.from(delivery.body)
    response = await sendWebhook({
      url: config.url,
      body,
      headers: webhookHeaders({
        body,
        secret,
        eventId: delivery.event_id,
        eventType: delivery.event_type,
      }),
      allowPrivate: deps.settings.allowPrivate,
      signal,
    })
  }
  const schedule = deps.settings.retryScheduleMs
  const disabled = !config?.enabled || !config.url
  const status: AttemptRow['status'] = response.ok
    ? 'success'
    : !disabled && tries <= schedule.length
      ? 'retrying'
      : 'failed'
  return {
    delivery: {
      ...delivery,
      status: status === 'success' ? 'success' : status === 'retrying' ? 'retrying' : 'failed',
      attempts: tries,
      next_attempt_at:
        status === 'retrying'
          ? new Date(Date.now() + schedule[tries - 1]!).toISOString()
          : delivery.next_attempt_at,
      updated_at: now(),
    },
    attempt: {
      id: randomToken('whl_', 12),
      delivery_id: delivery.id,
      partner_id: delivery.partner_id,
      organization_id: delivery.organization_id,
      kind: delivery.kind,
      event_id: delivery.event_id,
      event_type: delivery.event_type,
      attempt: tries,
      status,
      status_code: response.statusCode,
      error: response.ok ? '' : failureOf(response),
      attempted_at: attemptedAt,
      response_time_ms: Math.max(0, Math.round(response.responseTimeMs)),
    },
  }
}
