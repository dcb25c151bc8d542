// The endpoints the billing provider calls, by method and path; any other is Stripe's 404.
import { createSession, renderSession } from './checkout-sessions.js'
import { renderCustomer, renderPaymentMethod } from './customers.js'
import { find, StripeServerError } from './errors.js'
import { expandOf } from './form.js'
import { createPortal } from './portal-sessions.js'
import type { StripeState } from './state.js'
import { renderSubscription, updateSubscription } from './subscriptions.js'

/** The answer to a request (its query and form body merged into `params`), or a thrown StripeServerError. */
export function route(
  state: StripeState,
  method: string,
  path: string,
  params: Record<string, unknown>,
): unknown {
  /** The id in `/v1/<collection>/<id>`, when the path is that. */
  const idIn = (collection: string) => {
    const id = path.startsWith(`/v1/${collection}/`) ? path.slice(collection.length + 5) : ''
    return id && !id.includes('/') ? decodeURIComponent(id) : undefined
  }
  if (method === 'POST' && path === '/v1/checkout/sessions') return createSession(state, params)
  const sessionId = idIn('checkout/sessions')
  if (method === 'GET' && sessionId) {
    return renderSession(state, find(state.sessions, sessionId, 'checkout.session'), expandOf(params))
  }
  const subscriptionId = idIn('subscriptions')
  if (subscriptionId && (method === 'GET' || method === 'POST')) {
    const sub = find(state.subscriptions, subscriptionId, 'subscription')
    return method === 'GET' ? renderSubscription(sub) : updateSubscription(sub, params)
  }
  if (method === 'POST' && path === '/v1/billing_portal/sessions') return createPortal(state, params)
  const customerId = idIn('customers')
  if (method === 'GET' && customerId) {
    return renderCustomer(state, find(state.customers, customerId, 'customer'), expandOf(params))
  }
  const paymentMethodId = idIn('payment_methods')
  if (method === 'GET' && paymentMethodId) {
    return renderPaymentMethod(find(state.paymentMethods, paymentMethodId, 'payment_method'))
  }
  throw new StripeServerError(404, {
    type: 'invalid_request_error',
    message: `Unrecognized request URL (${method}: ${path}). This test server serves only what the billing provider calls.`,
  })
}
