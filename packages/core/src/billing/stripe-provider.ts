// The `stripe` billing provider (docs/decisions.md, "Billing"): the port spoken with Stripe's official SDK.
// It only translates: Stripe objects in, the port's objects out; what to do with them is the billing
// service's business. Stripe's 404s (`resource_missing`) become `undefined`; every other SDK error
// becomes `billing_provider_error` (502). The API version is pinned, so the objects' shapes are the ones the SDK's
// typings describe (and the ones `packages/testing/src/stripe-server.ts` answers with).
import Stripe from 'stripe'
import { appError } from '../errors.js'
import type { Plan } from './plans.js'
import type {
  BillingProvider,
  PostalAddress,
  ProviderCheckout,
  ProviderCustomer,
  ProviderInvoice,
  ProviderSubscription,
  ProviderWebhookEvent,
  ProviderWebhookFact,
  SubscriptionStatus,
} from './provider.js'

/**
 * The API version the installed SDK was generated for. Pinned, not left to the account's default,
 * so a change of the account's settings cannot move fields under us (it did: `current_period_end`
 * moved to the subscription items, an invoice's subscription to `parent.subscription_details`).
 */
export const stripeApiVersion = '2026-10-28.endive' satisfies Stripe.LatestApiVersion

export interface StripeProviderOptions {
  secretKey: string
  /** The endpoint's signing secret (`whsec_...`); without it, `readWebhook` throws. */
  webhookSecret?: string | undefined
  /** Another address than api.stripe.com (a test server, a proxy). */
  host?: string | undefined
  port?: number | undefined
  protocol?: 'http' | 'https' | undefined
}

/**
 * Stripe failing (down, a refused request, a key without the permission) is the provider's error
 * for the API's caller: 502 `billing_provider_error` naming Stripe's error type and code, never its
 * message (it may quote the request). The service's own errors pass as they are.
 */
function withProviderErrors(provider: BillingProvider): BillingProvider {
  const wrapped: Record<string, unknown> = { ...provider }
  for (const [name, method] of Object.entries(provider)) {
    if (typeof method !== 'function' || name === 'readWebhook') continue
    wrapped[name] = async (...args: unknown[]) => {
      try {
        return await method(...args)
      } catch (error) {
        if (!(error instanceof Stripe.errors.StripeError)) throw error
        throw appError(
          'billing_provider_error',
          `Stripe refused or failed the request (${[error.type, error.code, error.statusCode].filter(Boolean).join(', ')})`,
        )
      }
    }
  }
  return wrapped as unknown as BillingProvider
}

/**
 * The Stripe adapter of the billing provider port.
 *
 * @example
 * const provider = createStripeProvider({ secretKey: 'sk_test_...', webhookSecret: 'whsec_...' })
 * const { url } = await provider.createCheckout({ organizationId, plan, successUrl, cancelUrl })
 */
export function createStripeProvider(options: StripeProviderOptions): BillingProvider {
  const stripe = new Stripe(options.secretKey, {
    apiVersion: stripeApiVersion,
    host: options.host,
    port: options.port,
    protocol: options.protocol,
    maxNetworkRetries: 2,
    timeout: 20_000,
  })
  // Kept apart from `options` so nothing returned or thrown here holds the secret key.
  const webhookSecret = options.webhookSecret
  return withProviderErrors({
    kind: 'stripe',
    createCheckout: (input) => createCheckout(stripe, input),
    retrieveCheckout: (sessionId) => retrieveCheckout(stripe, sessionId),
    retrieveSubscription: (id) => retrieveSubscription(stripe, id),
    changePlan: (subscriptionId, plan) => changePlan(stripe, subscriptionId, plan),
    cancelAtPeriodEnd: async (subscriptionId) =>
      toSubscription(await stripe.subscriptions.update(subscriptionId, { cancel_at_period_end: true })),
    async createPortal({ customerId, returnUrl }) {
      const session = await stripe.billingPortal.sessions.create({
        customer: customerId,
        return_url: returnUrl,
      })
      return { url: session.url }
    },
    retrieveCustomer: (customerId) => retrieveCustomer(stripe, customerId),
    readWebhook: (rawBody, signature) => readWebhook(stripe, webhookSecret, rawBody, signature),
  })
}

async function createCheckout(
  stripe: Stripe,
  {
    organizationId,
    plan,
    successUrl,
    cancelUrl,
    customerId,
  }: Parameters<BillingProvider['createCheckout']>[0],
): Promise<{ id: string; url: string }> {
  const session = await stripe.checkout.sessions.create({
    mode: 'subscription',
    line_items: [{ price: plan.priceId, quantity: 1 }],
    client_reference_id: organizationId,
    // On the subscription too: its webhooks and retrievals name the organization without the session.
    subscription_data: { metadata: { organization_id: organizationId } },
    metadata: { organization_id: organizationId },
    success_url: successUrl,
    cancel_url: cancelUrl,
    ...(customerId ? { customer: customerId } : {}),
  })
  if (!session.url) throw appError('billing_provider_error', 'Stripe returned a checkout without a URL')
  return { id: session.id, url: session.url }
}

async function retrieveCheckout(stripe: Stripe, sessionId: string): Promise<ProviderCheckout | undefined> {
  const session = await orUndefined(
    stripe.checkout.sessions.retrieve(sessionId, { expand: ['subscription'] }),
  )
  if (!session) return undefined
  const organizationId = session.client_reference_id ?? session.metadata?.organization_id ?? ''
  const complete =
    session.status === 'complete' &&
    (session.payment_status === 'paid' || session.payment_status === 'no_payment_required')
  let subscription: ProviderSubscription | undefined
  if (typeof session.subscription === 'string') {
    subscription = await retrieveSubscription(stripe, session.subscription)
  } else if (session.subscription) {
    subscription = toSubscription(session.subscription)
  }
  // A subscription made outside our checkouts lacks the metadata; the session still says whose.
  if (subscription && !subscription.organizationId) subscription.organizationId = organizationId
  return { id: session.id, organizationId, complete, subscription }
}

const retrieveSubscription = (stripe: Stripe, id: string): Promise<ProviderSubscription | undefined> =>
  orUndefined(stripe.subscriptions.retrieve(id).then((sub) => toSubscription(sub)))

async function changePlan(stripe: Stripe, subscriptionId: string, plan: Plan): Promise<ProviderSubscription> {
  const current = await stripe.subscriptions.retrieve(subscriptionId)
  const item = firstItem(current)
  const updated = await stripe.subscriptions.update(subscriptionId, {
    items: [{ id: item.id, price: plan.priceId }],
    proration_behavior: 'create_prorations',
    // Changing plan undoes a pending cancellation, as choosing a plan means staying.
    cancel_at_period_end: false,
  })
  return toSubscription(updated)
}

async function retrieveCustomer(stripe: Stripe, customerId: string): Promise<ProviderCustomer | undefined> {
  const customer = await orUndefined(
    stripe.customers.retrieve(customerId, { expand: ['invoice_settings.default_payment_method'] }),
  )
  if (!customer || customer.deleted) return undefined
  const method = customer.invoice_settings?.default_payment_method
  return {
    id: customer.id,
    email: customer.email,
    address: customer.address ? toPostalAddress(customer.address) : null,
    defaultCardLast4: typeof method === 'object' && method?.card ? method.card.last4 : null,
  }
}

function readWebhook(
  stripe: Stripe,
  webhookSecret: string | undefined,
  rawBody: Buffer,
  signature: string,
): ProviderWebhookEvent {
  if (!webhookSecret) {
    throw new Error('STRIPE_WEBHOOK_SECRET is not set: Stripe webhooks cannot be verified')
  }
  let event: Stripe.Event
  try {
    event = stripe.webhooks.constructEvent(rawBody, signature, webhookSecret)
  } catch {
    // Whatever failed (header, timestamp tolerance, HMAC, body), the request is not Stripe's.
    throw appError('invalid_request', 'The Stripe-Signature header does not verify against the body')
  }
  return { id: event.id, type: event.type, fact: webhookFact(event) }
}

/** The fact of an event the billing service acts on; undefined for the others. */
function webhookFact(event: Stripe.Event): ProviderWebhookFact | undefined {
  switch (event.type) {
    case 'checkout.session.completed':
      return { kind: 'checkout.completed', sessionId: event.data.object.id }
    case 'customer.subscription.created':
    case 'customer.subscription.updated':
    case 'customer.subscription.deleted':
      return { kind: 'subscription.changed', subscriptionId: event.data.object.id }
    case 'invoice.paid': {
      const invoice = toInvoice(event.data.object, 'paid')
      return invoice && { kind: 'invoice.paid', invoice }
    }
    case 'invoice.payment_failed': {
      const invoice = toInvoice(event.data.object, 'failed')
      return invoice && { kind: 'invoice.payment_failed', invoice }
    }
    default:
      return undefined
  }
}

const statuses: Record<string, SubscriptionStatus> = {
  active: 'active',
  trialing: 'trialing',
  past_due: 'past_due',
  canceled: 'canceled',
  incomplete: 'incomplete',
  incomplete_expired: 'canceled',
  unpaid: 'past_due',
  paused: 'past_due',
}

function toSubscription(sub: Stripe.Subscription): ProviderSubscription {
  const item = firstItem(sub)
  return {
    id: sub.id,
    customerId: idOf(sub.customer),
    organizationId: sub.metadata?.organization_id ?? '',
    priceId: item.price.id,
    // A status newer than this code grants nothing until someone maps it.
    status: statuses[sub.status] ?? 'incomplete',
    // Per item since API version 2025-03-31.basil; ours have one item.
    currentPeriodEnd: iso(item.current_period_end),
    cancelAtPeriodEnd: sub.cancel_at_period_end,
  }
}

function firstItem(sub: Stripe.Subscription): Stripe.SubscriptionItem {
  const item = sub.items?.data?.[0]
  if (!item) throw appError('billing_provider_error', `Stripe subscription ${sub.id} has no item`)
  return item
}

/**
 * An invoice of a subscription; undefined for one that is not (a one-off invoice is none of ours).
 * Its plan line is the first that is not a proration: after a plan change, the next invoice opens
 * with the credit for the old price, and that line's price and period are not what it pays for.
 */
function toInvoice(invoice: Stripe.Invoice, outcome: 'paid' | 'failed'): ProviderInvoice | undefined {
  const subscription = invoice.parent?.subscription_details?.subscription
  if (!subscription) return undefined
  const lines = invoice.lines?.data ?? []
  const line = lines.find((candidate) => !isProration(candidate)) ?? lines[0]
  const price = line?.pricing?.price_details?.price
  return {
    id: invoice.id,
    subscriptionId: idOf(subscription),
    customerId: invoice.customer ? idOf(invoice.customer) : '',
    priceId: price ? idOf(price) : undefined,
    amount: outcome === 'paid' ? invoice.amount_paid : invoice.amount_due,
    currency: invoice.currency,
    periodEnd: line?.period ? iso(line.period.end) : undefined,
    url: invoice.hosted_invoice_url ?? undefined,
    reason: invoice.billing_reason ?? 'manual',
  }
}

const isProration = (line: Stripe.InvoiceLineItem): boolean =>
  Boolean(line.parent?.subscription_item_details?.proration || line.parent?.invoice_item_details?.proration)

function toPostalAddress(address: Stripe.Address): PostalAddress {
  return {
    line1: address.line1 ?? null,
    line2: address.line2 ?? null,
    city: address.city ?? null,
    state: address.state ?? null,
    postalCode: address.postal_code ?? null,
    country: address.country ?? null,
  }
}

/** Stripe's 404 for an unknown id, as undefined; any other failure is the caller's. */
async function orUndefined<T>(request: Promise<T>): Promise<T | undefined> {
  try {
    return await request
  } catch (error) {
    if (
      error instanceof Stripe.errors.StripeError &&
      error.statusCode === 404 &&
      error.code === 'resource_missing'
    )
      return undefined
    throw error
  }
}

const idOf = (value: string | { id: string }): string => (typeof value === 'string' ? value : value.id)

const iso = (unixSeconds: number): string => new Date(unixSeconds * 1000).toISOString()
