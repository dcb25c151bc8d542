// Events and their webhook deliveries, signed as Stripe signs them.
import Stripe from 'stripe'
import { newId, now } from './state.js'

/** An Event of the pinned API version, as a webhook delivers it. */
export const event = <T extends { id: string }>(type: string, object: T) => ({
  id: newId('evt'),
  object: 'event' as const,
  // The version the SDK pins, which core's provider speaks (its stripeApiVersion satisfies
  // Stripe.LatestApiVersion, the type of this constant).
  api_version: Stripe.API_VERSION,
  created: now(),
  data: { object },
  livemode: false,
  pending_webhooks: 1,
  request: { id: null, idempotency_key: null },
  type,
})

/** The body and `Stripe-Signature` header Stripe would send for the event to an endpoint with this secret. */
export function signedWebhook(payload: { id: string; type: string }, webhookSecret: string) {
  const body = JSON.stringify(payload, null, 2)
  return {
    body,
    signature: Stripe.webhooks.generateTestHeaderString({ payload: body, secret: webhookSecret }),
  }
}
