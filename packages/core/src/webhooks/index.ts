// The public face of core's webhooks domain: what other packages import as @visitor-id/core/webhooks.
export {
  presentWebhookConfig,
  readWebhookConfig,
  updateWebhookConfig,
  type WebhookDeps,
  type WebhookKind,
  webhookKinds,
} from './config.js'
export { redeliver, testWebhook, webhookLogs } from './delivery-log.js'
export { startWebhookDispatcher, type WebhookDispatcher } from './dispatcher.js'
export {
  type AttemptRow,
  type DeliveryRow,
  enqueueStoredEvent,
  enqueueWebhookEvent,
} from './outbox.js'
export type { WebhookConfigRow } from './rows.js'
export { sampleWebhookPayload } from './sample-payloads.js'
