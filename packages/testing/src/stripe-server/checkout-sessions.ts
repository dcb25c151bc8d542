// Checkout sessions: their creation and retrieval as the API answers them, and the customer paying
// (Stripe's hosted page, played by a test).
import type Stripe from 'stripe'
import { addDefaultCard, payingCustomer, renderCustomer, renderPaymentMethod } from './customers.js'
import { missingParam, parameterMissing } from './errors.js'
import { expandOf, strings, text } from './form.js'
import { newId, now, type SessionState, type Shape, type StripeState } from './state.js'
import { renderSubscription, startSubscription } from './subscriptions.js'

/** What `completeCheckout` makes up for the customer who paid. */
export interface CompleteCheckoutOptions {
  /** Of the customer's default card; 4242 by default. */
  last4?: string
  email?: string
  address?: Partial<Stripe.Address>
}

export const renderSession = (state: StripeState, session: SessionState, expand: string[]) =>
  ({
    id: session.id,
    object: 'checkout.session',
    created: session.created,
    mode: session.mode,
    client_reference_id: session.clientReferenceId,
    metadata: session.metadata,
    success_url: session.successUrl,
    cancel_url: session.cancelUrl,
    customer: session.customer,
    status: session.status,
    payment_status: session.paymentStatus,
    subscription:
      session.subscription && expand.includes('subscription')
        ? renderSubscription(state.subscriptions.get(session.subscription)!)
        : session.subscription,
    url: session.status === 'open' ? `https://checkout.stripe.com/c/pay/${session.id}` : null,
  }) satisfies Shape<Stripe.Checkout.Session>

/** `POST /v1/checkout/sessions`: an open session of one line item. */
export function createSession(state: StripeState, body: Record<string, unknown>) {
  const mode = text(body.mode)
  if (!mode) throw parameterMissing('mode')
  const successUrl = text(body.success_url)
  if (!successUrl) throw parameterMissing('success_url')
  const item = (Array.isArray(body.line_items) ? body.line_items[0] : undefined) as
    | Record<string, unknown>
    | undefined
  const price = text(item?.price)
  if (!price) throw parameterMissing('line_items[0][price]')
  const customer = text(body.customer) ?? null
  if (customer && !state.customers.get(customer)) throw missingParam('customer', customer)
  const session: SessionState = {
    id: newId('cs_test'),
    created: now(),
    mode,
    price,
    quantity: Number(text(item?.quantity) ?? 1),
    clientReferenceId: text(body.client_reference_id) ?? null,
    metadata: strings(body.metadata),
    subscriptionMetadata: strings((body.subscription_data as Record<string, unknown> | undefined)?.metadata),
    successUrl,
    cancelUrl: text(body.cancel_url) ?? null,
    customer,
    status: 'open',
    paymentStatus: 'unpaid',
    subscription: null,
  }
  state.sessions.set(session.id, session)
  return renderSession(state, session, expandOf(body))
}

/**
 * The customer pays: a customer with a default card (the session's own, when it named one), the
 * subscription with the session's `subscription_data.metadata`, the session complete and paid.
 */
export function completeCheckout(
  state: StripeState,
  sessionId: string,
  options: CompleteCheckoutOptions = {},
) {
  const session = state.sessions.get(sessionId)
  if (!session) throw new Error(`stripe server: no checkout session ${sessionId}`)
  if (session.status === 'complete') throw new Error(`stripe server: ${sessionId} is already complete`)
  const created = now()
  const customer = payingCustomer(state, session, created, options)
  const method = addDefaultCard(state, customer, created, options.last4 ?? '4242')
  const sub = startSubscription(state, session, customer.id, method.id, created)
  Object.assign(session, {
    customer: customer.id,
    status: 'complete',
    paymentStatus: 'paid',
    subscription: sub.id,
  })
  return {
    session: renderSession(state, session, []),
    subscription: renderSubscription(sub),
    customer: renderCustomer(state, customer, []),
    paymentMethod: renderPaymentMethod(method),
  }
}
