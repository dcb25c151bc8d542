// Customer portal sessions: `POST /v1/billing_portal/sessions`, the URL of Stripe's hosted portal.
import type Stripe from 'stripe'
import { missingParam, parameterMissing } from './errors.js'
import { text } from './form.js'
import { newId, now, type Shape, type StripeState } from './state.js'

export function createPortal(state: StripeState, body: Record<string, unknown>) {
  const customer = text(body.customer)
  if (!customer) throw parameterMissing('customer')
  if (!state.customers.get(customer) || state.customers.get(customer)!.deleted) {
    throw missingParam('customer', customer)
  }
  const id = newId('bps')
  return {
    id,
    object: 'billing_portal.session',
    created: now(),
    customer,
    return_url: text(body.return_url) ?? null,
    url: `https://billing.stripe.com/p/session/test_${id}`,
  } satisfies Shape<Stripe.BillingPortal.Session>
}
