// Spec section "Partner: webhooks" (X-Partner-API-Key): the partner's two webhooks, a test delivery,
// the delivery log and redelivery. Deliveries themselves are the worker's (core webhooks/).
import {
  type AttemptRow,
  presentWebhookConfig,
  readWebhookConfig,
  redeliver,
  sampleWebhookPayload,
  testWebhook,
  updateWebhookConfig,
  type WebhookKind,
  webhookKinds,
  webhookLogs,
} from '@visitor-id/core/webhooks'
import { z } from 'zod'
import { iso } from '../presenters.js'
import { type ApiServices, defineRoute, type Route } from '../route-definition.js'
import { organizationIdField, pathId, timestamp } from '../schemas/common.js'
import { partnerPrincipal } from './context.js'

const configSchema = z
  .object({
    url: z.string().describe("The receiver's URL ('' when none)"),
    enabled: z.boolean(),
    hasSecret: z.boolean().describe('Whether deliveries are signed; the secret is never returned'),
  })
  .describe('WebhookConfig')

const logEntrySchema = z
  .object({
    id: z.string(),
    type: z.enum(webhookKinds),
    organizationId: z.string().describe("'' for test deliveries"),
    status: z.enum(['success', 'retrying', 'failed']),
    statusCode: z.number().int().describe("The receiver's HTTP status; 0 when it gave none"),
    attemptedAt: timestamp,
    responseTimeMs: z.number().int(),
    eventId: z.string().describe('`X-Service-Event-Id`: the same on every attempt of an event'),
    eventType: z.string(),
    deliveryId: z.string().describe("'' for test deliveries"),
    attempt: z.number().int().describe('1 for the first attempt of a delivery'),
    error: z.string().nullable().describe('Why the attempt failed (a network error, a timeout, a status)'),
  })
  .describe('WebhookLogEntry')

const change = z.strictObject({
  url: z.union([z.url({ protocol: /^https?$/ }).max(2048), z.literal('')]).optional(),
  secret: z.string().min(16).max(256).optional().describe('At least 16 characters'),
  enabled: z.boolean().optional(),
})

/** A log entry as the API shows it. */
function presentAttempt(row: AttemptRow): z.input<typeof logEntrySchema> {
  return {
    id: row.id,
    type: row.kind,
    organizationId: row.organization_id ?? '',
    status: row.status,
    statusCode: row.status_code ?? 0,
    attemptedAt: iso(row.attempted_at),
    responseTimeMs: row.response_time_ms,
    eventId: row.event_id,
    eventType: row.event_type,
    deliveryId: row.delivery_id,
    attempt: row.attempt,
    error: row.error || null,
  }
}

const deps = (services: ApiServices) => ({
  store: services.store,
  repos: services.repos,
  coordination: services.coordination,
  settings: services.config.webhooks,
})

const configRoute = (kind: WebhookKind) =>
  defineRoute({
    operationId: `update${kind === 'identification' ? 'Identification' : 'Billing'}Webhook`,
    method: 'PUT',
    path: `/partner/webhooks/${kind}`,
    auth: 'partner',
    scope: 'write',
    tenancy: 'none',
    tag: 'Partner webhooks',
    summary: `Configure the ${kind} webhook`,
    description:
      'Fields left out keep their value; `url: ""` removes the URL (and disables the webhook). The ' +
      'URL must be http(s), without credentials, and may not resolve to a private, loopback or ' +
      'link-local address (unless the operator sets WEBHOOK_ALLOW_PRIVATE): a 400 says why. A new ' +
      'URL is enabled unless `enabled: false`. Disabling stops new deliveries; retries still pending ' +
      'end as `failed`.',
    body: change,
    response: {
      status: 200,
      description: 'The webhook, without its secret',
      schema: z.object({ [kind]: configSchema }),
    },
    errors: [],
    example: () => ({
      body: {
        url: 'https://hooks.example.com/visitor-id',
        secret: 'whsec-a-long-random-secret',
        enabled: true,
      },
    }),
    async handler({ principal, body, services }) {
      const row = await updateWebhookConfig(deps(services), partnerPrincipal(principal).partnerId, kind, body)
      return { [kind]: presentWebhookConfig(row) }
    },
  })

/** Spec section "Partner: webhooks". */
export const partnerWebhookRoutes: Route[] = [
  defineRoute({
    operationId: 'getWebhooks',
    method: 'GET',
    path: '/partner/webhooks',
    auth: 'partner',
    scope: 'read',
    tenancy: 'none',
    tag: 'Partner webhooks',
    summary: "The partner's webhooks",
    response: {
      status: 200,
      description: 'Both webhooks, without their secrets',
      schema: z.object({ identification: configSchema, billing: configSchema }),
    },
    errors: [],
    example: () => ({}),
    async handler({ principal, services }) {
      const { partnerId } = partnerPrincipal(principal)
      const [identification, billing] = await Promise.all(
        webhookKinds.map((kind) => readWebhookConfig(services.repos, partnerId, kind)),
      )
      return { identification: presentWebhookConfig(identification), billing: presentWebhookConfig(billing) }
    },
  }),
  configRoute('identification'),
  configRoute('billing'),
  defineRoute({
    operationId: 'testWebhook',
    method: 'POST',
    path: '/partner/webhooks/test',
    auth: 'partner',
    scope: 'write',
    tenancy: 'none',
    tag: 'Partner webhooks',
    summary: 'Send a signed sample event now',
    description:
      'A sample event of the kind, built by the same code as real events with a made-up value in every ' +
      'field (`visitor.identified` for `identification`, whose `visitor.phone` is empty as in every real ' +
      "one: phones are paid data; `invoice.paid` of this server's B2B plan for `billing`), marked " +
      '`"test": true` and signed as ' +
      'every delivery is, sent at once even while the webhook is disabled, and logged. `success` ' +
      'says whether the receiver answered 2xx; `message` gives its status or why it could not be reached.',
    body: z.strictObject({ type: z.enum(webhookKinds) }),
    response: {
      status: 200,
      description: 'What the receiver answered',
      schema: z.object({ success: z.boolean(), message: z.string() }),
    },
    errors: [],
    example: () => ({ body: { type: 'identification' } }),
    async handler({ principal, body, services }) {
      return testWebhook(
        deps(services),
        partnerPrincipal(principal).partnerId,
        body.type,
        sampleWebhookPayload(body.type, services.billing.plans),
      )
    },
  }),
  defineRoute({
    operationId: 'listWebhookLogs',
    method: 'GET',
    path: '/partner/webhooks/logs',
    auth: 'partner',
    scope: 'read',
    tenancy: 'none',
    tag: 'Partner webhooks',
    summary: 'The delivery log: one entry per attempt, newest first',
    description:
      '`status`: `success`, `retrying` (failed, another try is scheduled) or `failed` (no more tries).',
    query: z.object({
      page: z.coerce.number().int().min(1).max(100_000).default(1),
      pageSize: z.coerce.number().int().min(1).max(500).default(25),
      type: z.enum(webhookKinds).optional(),
      status: z.enum(['success', 'retrying', 'failed']).optional(),
      organizationId: organizationIdField.optional(),
    }),
    response: {
      status: 200,
      description: 'One page of log entries',
      schema: z.object({
        logs: z.array(logEntrySchema),
        total: z.number().int(),
        page: z.number().int(),
        pageSize: z.number().int(),
      }),
    },
    errors: [],
    example: () => ({ query: { page: '1', pageSize: '25', type: 'identification' } }),
    async handler({ principal, query, services }) {
      const { rows, total } = await webhookLogs(services.store, partnerPrincipal(principal).partnerId, query)
      return { logs: rows.map(presentAttempt), total, page: query.page, pageSize: query.pageSize }
    },
  }),
  defineRoute({
    operationId: 'redeliverWebhook',
    method: 'POST',
    path: '/partner/webhooks/logs/{id}/redeliver',
    auth: 'partner',
    scope: 'write',
    tenancy: 'none',
    tag: 'Partner webhooks',
    summary: "Send a log entry's event again, now",
    description:
      'A new delivery of the same event (same body, same `X-Service-Event-Id`), attempted at once; ' +
      'if it fails it is retried on the schedule. Answers with its first attempt. Test deliveries ' +
      "and other partners' entries: 404.",
    params: z.object({ id: pathId('Log entry id') }),
    response: { status: 200, description: 'The new attempt', schema: logEntrySchema },
    errors: ['resource_not_found'],
    example: (ids) => ({ params: { id: ids.webhookLogId } }),
    async handler({ principal, params, services }) {
      return presentAttempt(await redeliver(deps(services), partnerPrincipal(principal).partnerId, params.id))
    },
  }),
]
