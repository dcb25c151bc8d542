// A local stand-in for api.stripe.com, for tests of the Stripe billing provider with the real SDK:
// the few endpoints the adapter calls, form-encoded requests read as Stripe reads them, answers
// shaped like the pinned API version's objects (only the fields we read, checked against the SDK's
// typings), Stripe's error bodies. It keeps state, so a checkout completed here is a subscription
// the adapter can then retrieve, change and cancel; helpers play Stripe's side (a customer paying,
// a renewal, a failed payment) and sign webhooks as Stripe does.
//
// The parts live in ./stripe-server/: the state, the HTTP side and its router, and one module per
// resource (checkout sessions, subscriptions, customers, portal sessions, invoices, webhooks).
import { randomBytes } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import type Stripe from 'stripe'
import { closeLocal } from './local-http.js'
import { type CompleteCheckoutOptions, completeCheckout } from './stripe-server/checkout-sessions.js'
import { deleteCustomer } from './stripe-server/customers.js'
import { listenStripeServer } from './stripe-server/http.js'
import { failedInvoice, type InvoiceOptions, paidInvoice } from './stripe-server/invoices.js'
import { createStripeState, type StripeState } from './stripe-server/state.js'
import { endSubscription, setSubscriptionStatus } from './stripe-server/subscriptions.js'
import { event, signedWebhook } from './stripe-server/webhooks.js'

export type { CompleteCheckoutOptions } from './stripe-server/checkout-sessions.js'
export { parseStripeForm } from './stripe-server/form.js'
export type { InvoiceOptions } from './stripe-server/invoices.js'
export type { StripeServerRequest } from './stripe-server/state.js'

export interface StripeServerOptions {
  /** The key requests must bear; a random `sk_test_...` by default. */
  secretKey?: string
}

/**
 * Starts the server on 127.0.0.1 and a free port.
 *
 * @example
 * const stripe = await startStripeServer()
 * const provider = createStripeProvider({ ...stripe, webhookSecret: 'whsec_test' })
 * const { id } = await provider.createCheckout({ organizationId, plan, successUrl, cancelUrl })
 * stripe.completeCheckout(id)
 * const { body, signature } = stripe.signedWebhook(stripe.event('checkout.session.completed', ...), 'whsec_test')
 */
export async function startStripeServer(options: StripeServerOptions = {}) {
  const secretKey = options.secretKey ?? `sk_test_${randomBytes(12).toString('hex')}`
  const state = createStripeState()
  const server = await listenStripeServer(state, secretKey)
  const { port } = server.address() as AddressInfo
  return {
    host: '127.0.0.1' as const,
    port,
    protocol: 'http' as const,
    secretKey,
    requests: state.requests,
    ...stripeSide(state),
    close: () => closeLocal(server),
  }
}

export type StripeServer = Awaited<ReturnType<typeof startStripeServer>>

/** The helpers that play Stripe's side, for tests, over the server's state. */
function stripeSide(state: StripeState) {
  return {
    /**
     * The customer pays: a customer with a default card (the session's own, when it named one), the
     * subscription with the session's `subscription_data.metadata`, the session complete and paid.
     */
    completeCheckout: (sessionId: string, options?: CompleteCheckoutOptions) =>
      completeCheckout(state, sessionId, options),
    /**
     * A paid invoice of the subscription. A renewal (`subscription_cycle`, the default) first moves
     * the subscription to its next period, as Stripe does; paying makes a past-due one active again.
     */
    paidInvoice: (subscriptionId: string, reason?: Stripe.Invoice.BillingReason, options?: InvoiceOptions) =>
      paidInvoice(state, subscriptionId, reason, options),
    /** A failed payment: a renewal's by default (the new period starts all the same); the subscription is past due. */
    failedInvoice: (
      subscriptionId: string,
      reason?: Stripe.Invoice.BillingReason,
      options?: InvoiceOptions,
    ) => failedInvoice(state, subscriptionId, reason, options),
    /** The subscription is over (its period ended after a cancellation, or Stripe gave up on payment). */
    endSubscription: (subscriptionId: string) => endSubscription(state, subscriptionId),
    /** Stripe moves the subscription to another status (its dunning gives up: `unpaid`; a pause: `paused`...). */
    setSubscriptionStatus: (subscriptionId: string, status: Stripe.Subscription.Status) =>
      setSubscriptionStatus(state, subscriptionId, status),
    /** The customer is deleted in the dashboard: retrieving it answers `{ id, object, deleted: true }`. */
    deleteCustomer: (customerId: string) => deleteCustomer(state, customerId),
    event,
    signedWebhook,
  }
}
