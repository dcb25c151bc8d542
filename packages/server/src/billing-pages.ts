// The billing pages a browser sees (docs/decisions.md, "Billing"): with the `local` provider, the
// checkout page (confirm, then back to the success URL; a plan with a price then waits for the
// operator's approval, which the page and the default "done" page say, with the command to run) and
// the customer portal (the subscription, a cancel button); with `stripe`, the Stripe webhook route
// (raw body, signature checked by the provider); and the default "done" page of both. The session ids
// in the URLs are the credentials: long random tokens, never logged (the routes log at `warn` only),
// kept out of Referer headers.
import {
  type BillingDeps,
  cancelSubscription,
  handleProviderWebhook,
  type LocalBillingProvider,
  type Plan,
  planPriceLabel,
  readSubscription,
  type SubscriptionRow,
} from '@visitor-id/core/billing'
import { escapeHtml } from '@visitor-id/core/email'
import type { EndpointDoc } from '@visitor-id/core/endpoint-doc'
import { appError } from '@visitor-id/core/errors'
import { toErrorBody } from '@visitor-id/core/http-errors'
import type { FastifyInstance, FastifyReply } from 'fastify'
import { z } from 'zod'
import { page } from './html-page.js'

const sessionParams = z.object({
  id: z.string().max(200).describe('The session id, from the URL the API answered'),
})
const doneQuery = z.object({
  session_id: z
    .string()
    .max(200)
    .optional()
    .describe('The checkout session id (the default `successUrl` carries it)'),
})
const formBody = {
  contentTypes: ['application/x-www-form-urlencoded'],
  schema: z.object({}).describe("The page's form: no fields"),
}
const formErrors = ['invalid_request', 'payload_too_large', 'unsupported_media_type'] as const
const htmlPage = (description: string) => ({ status: 200, description, contentType: 'text/html' })
const exampleSession = { id: 'cs_local_0123456789abcdef0123456789abcdef0123' }

const donePageDoc: EndpointDoc = {
  operationId: 'billingDonePage',
  method: 'GET',
  path: '/billing/done',
  tag: 'Payments',
  summary: 'Where a checkout or portal returns by default',
  description:
    'A page saying the browser may be closed; the default `successUrl`, `cancelUrl` and `returnUrl`. ' +
    "With `local`, when `session_id` names a checkout waiting for the operator's approval, the page " +
    'says so, with the command that approves it.',
  query: doneQuery,
  responses: [htmlPage('The page')],
  errors: [],
  example: {},
}

const stripeWebhookDoc: EndpointDoc = {
  operationId: 'stripeWebhook',
  method: 'POST',
  path: '/billing/stripe/webhook',
  tag: 'Payments',
  summary: "Stripe's events (BILLING_PROVIDER=stripe)",
  description:
    'Set this URL as a webhook endpoint in the Stripe dashboard with the events ' +
    '`checkout.session.completed`, `customer.subscription.created`, `customer.subscription.updated`, ' +
    '`customer.subscription.deleted`, `invoice.paid` and `invoice.payment_failed`, and its signing ' +
    'secret as `STRIPE_WEBHOOK_SECRET`. The `Stripe-Signature` header is checked over the raw body ' +
    '(400 `invalid_request` otherwise); an event delivered twice is acted on once.',
  headers: z.object({ 'stripe-signature': z.string().describe("Stripe's signature of the raw body") }),
  body: { contentTypes: ['application/json'], schema: z.unknown() },
  responses: [
    {
      status: 200,
      description: 'Received',
      schema: z.object({ received: z.literal(true), duplicate: z.boolean(), type: z.string() }),
    },
  ],
  errors: ['invalid_request', 'payload_too_large', 'unsupported_media_type'],
  example: {
    headers: {
      'stripe-signature': 't=1767225600,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd',
    },
    body: { id: 'evt_0123', type: 'invoice.paid', data: { object: {} } },
  },
}

const localCheckoutDocs: EndpointDoc[] = [
  {
    operationId: 'localCheckoutPage',
    method: 'GET',
    path: '/billing/checkout/{id}',
    tag: 'Payments',
    summary: 'The checkout page (BILLING_PROVIDER=local)',
    description:
      'The URL `POST /payment/subscription-checkout` answers: the plan and a button that confirms. ' +
      "A plan with a price then waits for the operator's approval (`npm run cli -- billing approve " +
      '<id>`, unless `BILLING_LOCAL_AUTO_APPROVE=1`), which the page says once confirmed. An ' +
      'unknown or expired session says so on the page.',
    params: sessionParams,
    responses: [htmlPage('The page')],
    errors: [],
    example: { params: exampleSession },
  },
  {
    operationId: 'localCheckoutConfirm',
    method: 'POST',
    path: '/billing/checkout/{id}',
    tag: 'Payments',
    summary: "The checkout page's confirm button",
    description:
      'Starts the subscription of a free plan, or marks the checkout of a plan with a price as ' +
      "waiting for the operator's approval (unless `BILLING_LOCAL_AUTO_APPROVE=1`), and redirects " +
      '(303) to the `successUrl`, with `{CHECKOUT_SESSION_ID}` replaced by the session id; the ' +
      'subscription takes effect when that id is processed (`POST /payment/subscription-process`, ' +
      '409 `checkout_pending_approval` until the operator approves) or approved. An unknown or ' +
      'expired session: a page saying so.',
    params: sessionParams,
    body: formBody,
    responses: [
      { status: 303, description: 'To the success URL', headers: { Location: 'The success URL' } },
      htmlPage('The session is not valid'),
    ],
    errors: [...formErrors],
    example: { params: exampleSession, body: {} },
  },
]

const localPortalDocs: EndpointDoc[] = [
  {
    operationId: 'localPortalPage',
    method: 'GET',
    path: '/billing/portal/{id}',
    tag: 'Payments',
    summary: 'The customer portal (BILLING_PROVIDER=local)',
    description:
      'The URL `POST /payment/customer-portal` answers: the subscription, its period, and a button ' +
      'that cancels it at the end of the period. Sessions last 24 hours.',
    params: sessionParams,
    responses: [htmlPage('The page')],
    errors: [],
    example: { params: { id: 'bps_local_0123456789abcdef0123456789abcdef0123' } },
  },
  {
    operationId: 'localPortalCancel',
    method: 'POST',
    path: '/billing/portal/{id}/cancel',
    tag: 'Payments',
    summary: "The portal's cancel button",
    description:
      'Cancels at the end of the period (as `POST /payment/subscription-cancel`), then back to the portal (303).',
    params: sessionParams,
    body: formBody,
    responses: [
      { status: 303, description: 'Back to the portal', headers: { Location: 'The portal page' } },
      htmlPage('The session is not valid'),
    ],
    errors: [...formErrors],
    example: { params: { id: 'bps_local_0123456789abcdef0123456789abcdef0123' }, body: {} },
  },
]

/** The documentation of the pages this process serves for the provider. */
export function billingPageDocs(provider: BillingDeps['provider']['kind']): EndpointDoc[] {
  return provider === 'stripe'
    ? [donePageDoc, stripeWebhookDoc]
    : [donePageDoc, ...localCheckoutDocs, ...localPortalDocs]
}

const invalidSession = page('This link is not valid', '<p>It may have expired. Start again from the app.</p>')

/** HTML that must not be cached, framed, or leak its URL (the session id) to the next site. */
function html(reply: FastifyReply, body: string): string {
  reply
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('referrer-policy', 'no-referrer')
    .header('x-frame-options', 'DENY')
  return body
}

const day = (iso: string) => new Date(iso).toISOString().slice(0, 10)

/** What a customer sees while the operator has not approved the checkout: what happens, and how. */
const awaitingApproval = (id: string) =>
  page(
    "Waiting for the operator's approval",
    '<p>Your subscription is confirmed and waits for the approval of the operator of this server: ' +
      'no plan or credits apply until then. The operator approves it with</p>' +
      `<pre id="approve-command">npm run cli -- billing approve ${escapeHtml(id)}</pre>` +
      '<p>You can close this page.</p>',
  )

export async function billingPagesPlugin(app: FastifyInstance, billing: BillingDeps): Promise<void> {
  registerDonePage(app, billing)
  if (billing.provider.kind === 'stripe') {
    registerStripeWebhook(app, billing)
    return
  }
  const local = billing.provider as LocalBillingProvider
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: 4096 },
    (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(String(body)))),
  )
  registerLocalCheckout(app, billing, local)
  registerLocalPortal(app, billing, local)
}

function registerDonePage(app: FastifyInstance, billing: BillingDeps): void {
  app.get('/billing/done', { logLevel: 'warn' }, async (request, reply) => {
    const sessionId = doneQuery.safeParse(request.query).data?.session_id
    if (sessionId && billing.provider.kind === 'local') {
      const session = await (billing.provider as LocalBillingProvider).checkoutSession(sessionId)
      if (session?.status === 'pending_approval') return html(reply, awaitingApproval(session.id))
    }
    return html(reply, page('All done', '<p>You can close this page and go back to the app.</p>'))
  })
}

function registerStripeWebhook(app: FastifyInstance, billing: BillingDeps): void {
  // Stripe signs the exact bytes: the body is kept raw.
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'buffer', bodyLimit: 1024 * 1024 },
    (_r, body, done) => done(null, body),
  )
  app.post('/billing/stripe/webhook', { logLevel: 'warn' }, async (request, reply) => {
    const signature = request.headers['stripe-signature']
    if (typeof signature !== 'string' || !Buffer.isBuffer(request.body)) {
      return reply
        .code(400)
        .send(toErrorBody(appError('invalid_request', 'The Stripe-Signature header is missing')))
    }
    return handleProviderWebhook(billing, request.body, signature)
  })
}

/** The session id of the URL; an invalid one is no session. */
const idOf = (params: unknown) => {
  const parsed = sessionParams.safeParse(params)
  return parsed.success ? parsed.data.id : ''
}

function registerLocalCheckout(
  app: FastifyInstance,
  billing: BillingDeps,
  local: LocalBillingProvider,
): void {
  app.get('/billing/checkout/:id', { logLevel: 'warn' }, async (request, reply) => {
    const session = await local.checkoutSession(idOf(request.params))
    const plan = session && billing.plans.find((p) => p.priceId === session.priceId)
    if (!session || !plan) return html(reply, invalidSession)
    if (session.status === 'complete') {
      return html(
        reply,
        page('Already confirmed', '<p>This subscription is confirmed. You can close this page.</p>'),
      )
    }
    if (session.status === 'pending_approval') return html(reply, awaitingApproval(session.id))
    return html(reply, checkoutPage(plan, session.cancelUrl, local.needsApproval(plan)))
  })

  app.post('/billing/checkout/:id', { logLevel: 'warn' }, async (request, reply) => {
    const id = idOf(request.params)
    const session = await local.checkoutSession(id)
    if (!session) return html(reply, invalidSession)
    const next = await local.confirmCheckout(id, billing.plans)
    return reply.code(303).header('location', next).header('referrer-policy', 'no-referrer').send()
  })
}

/** The plan, what confirming does, the confirm button and the way back. */
function checkoutPage(plan: Plan, cancelUrl: string, needsApproval: boolean): string {
  const what = needsApproval
    ? 'This server charges nothing: confirming asks its operator to approve the subscription, which starts once approved.'
    : 'This server charges nothing: confirming starts the subscription.'
  const features = plan.features.map((f) => `<li>${escapeHtml(f)}</li>`).join('')
  return page(
    `Subscribe to ${escapeHtml(plan.name)}`,
    `<p>${escapeHtml(plan.description)}</p><ul>${features}</ul>` +
      `<p><strong>${escapeHtml(planPriceLabel(plan))}</strong>, ` +
      `${plan.credits.toLocaleString('en-US')} identification credits each ${plan.interval}. ` +
      `${what}</p>` +
      `<form method="post"><button type="submit">Confirm subscription</button></form>` +
      `<p><a href="${escapeHtml(cancelUrl)}">Cancel</a></p>`,
  )
}

const running = (row: SubscriptionRow) => ['active', 'trialing', 'past_due'].includes(row.status)

function registerLocalPortal(app: FastifyInstance, billing: BillingDeps, local: LocalBillingProvider): void {
  app.get('/billing/portal/:id', { logLevel: 'warn' }, async (request, reply) => {
    const portal = await local.portalSession(idOf(request.params))
    if (!portal) return html(reply, invalidSession)
    const row = await readSubscription(billing.store, portal.organizationId)
    const plan = row && billing.plans.find((p) => p.id === row.plan_id)
    const back = `<p><a href="${escapeHtml(portal.returnUrl)}">Back</a></p>`
    if (!row || !plan) return html(reply, page('Subscription', `<p>No subscription.</p>${back}`))
    return html(reply, portalPage(portal.id, row, plan, back))
  })

  app.post('/billing/portal/:id/cancel', { logLevel: 'warn' }, async (request, reply) => {
    const portal = await local.portalSession(idOf(request.params))
    if (!portal) return html(reply, invalidSession)
    const organization = await billing.repos.organizations.get({ id: portal.organizationId })
    const row = await readSubscription(billing.store, portal.organizationId)
    if (organization && row && running(row) && !row.cancel_at_period_end) {
      await cancelSubscription(billing, organization)
    }
    return reply
      .code(303)
      .header('location', `/billing/portal/${encodeURIComponent(portal.id)}`)
      .header('referrer-policy', 'no-referrer')
      .send()
  })
}

/** The subscription's plan and state, and a cancel button while it runs and is not canceled yet. */
function portalPage(portalId: string, row: SubscriptionRow, plan: Plan, back: string): string {
  const state = !running(row)
    ? `Ended (${escapeHtml(row.status)}).`
    : row.cancel_at_period_end
      ? `Canceled: runs until ${day(row.current_period_end)}.`
      : `Active: renews on ${day(row.current_period_end)}.`
  const cancel =
    running(row) && !row.cancel_at_period_end
      ? `<form method="post" action="/billing/portal/${encodeURIComponent(portalId)}/cancel">` +
        '<button type="submit">Cancel subscription</button></form>'
      : ''
  return page(
    'Subscription',
    `<p><strong>${escapeHtml(plan.name)}</strong>, ${escapeHtml(planPriceLabel(plan))}</p>` +
      `<p id="state">${state}</p>${cancel}${back}`,
  )
}
