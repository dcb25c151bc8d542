// Subscriptions: as the API answers them, their update (`POST /v1/subscriptions/:id`), and what
// Stripe does to them on its own (a checkout starts one, a renewal moves its period, it ends).
import type Stripe from 'stripe'
import { StripeServerError } from './errors.js'
import { strings, text } from './form.js'
import {
  newId,
  now,
  type SessionState,
  type Shape,
  type StripeState,
  type SubscriptionState,
} from './state.js'

export const renderSubscription = (sub: SubscriptionState) =>
  ({
    id: sub.id,
    object: 'subscription',
    created: sub.created,
    customer: sub.customer,
    metadata: sub.metadata,
    status: sub.status,
    cancel_at_period_end: sub.cancelAtPeriodEnd,
    canceled_at: sub.canceledAt,
    ended_at: sub.endedAt,
    default_payment_method: sub.defaultPaymentMethod,
    items: {
      object: 'list',
      data: [
        {
          id: sub.itemId,
          object: 'subscription_item',
          subscription: sub.id,
          price: { id: sub.price, object: 'price' },
          quantity: 1,
          // Per item since API version 2025-03-31.basil, not on the subscription.
          current_period_start: sub.periodStart,
          current_period_end: sub.periodEnd,
        },
      ],
      has_more: false,
      url: `/v1/subscription_items?subscription=${sub.id}`,
    },
  }) satisfies Shape<Stripe.Subscription>

export function updateSubscription(sub: SubscriptionState, body: Record<string, unknown>) {
  if (sub.status === 'canceled') {
    throw new StripeServerError(400, {
      type: 'invalid_request_error',
      message: `A canceled subscription can only update its cancellation_details and metadata (${sub.id}).`,
    })
  }
  const items = Array.isArray(body.items) ? (body.items as Record<string, unknown>[]) : []
  for (const item of items) {
    if (text(item.id) !== sub.itemId) {
      throw new StripeServerError(400, {
        type: 'invalid_request_error',
        param: 'items',
        message: `This server keeps one item per subscription; ${String(item.id)} is not ${sub.itemId}.`,
      })
    }
    const price = text(item.price)
    if (price) sub.price = price
  }
  if (body.cancel_at_period_end !== undefined) sub.cancelAtPeriodEnd = body.cancel_at_period_end === 'true'
  Object.assign(sub.metadata, strings(body.metadata))
  return renderSubscription(sub)
}

/** The subscription a completed checkout starts: the session's price and `subscription_data.metadata`. */
export function startSubscription(
  state: StripeState,
  session: SessionState,
  customer: string,
  paymentMethod: string,
  created: number,
): SubscriptionState {
  const sub: SubscriptionState = {
    id: newId('sub'),
    created,
    customer,
    metadata: { ...session.subscriptionMetadata },
    itemId: newId('si'),
    price: session.price,
    status: 'active',
    periodStart: created,
    periodEnd: addMonth(created),
    cancelAtPeriodEnd: false,
    canceledAt: null,
    endedAt: null,
    defaultPaymentMethod: paymentMethod,
  }
  state.subscriptions.set(sub.id, sub)
  return sub
}

/** The subscription of a helper's call: a test naming one that does not exist is a mistake of the test. */
export function subscriptionOf(state: StripeState, id: string): SubscriptionState {
  const sub = state.subscriptions.get(id)
  if (!sub) throw new Error(`stripe server: no subscription ${id}`)
  return sub
}

/** The subscription is over (its period ended after a cancellation, or Stripe gave up on payment). */
export function endSubscription(state: StripeState, subscriptionId: string) {
  const sub = subscriptionOf(state, subscriptionId)
  sub.status = 'canceled'
  sub.endedAt = now()
  sub.canceledAt ??= sub.endedAt
  return renderSubscription(sub)
}

/** Stripe moves the subscription to another status (its dunning gives up: `unpaid`; a pause: `paused`...). */
export function setSubscriptionStatus(
  state: StripeState,
  subscriptionId: string,
  status: Stripe.Subscription.Status,
) {
  subscriptionOf(state, subscriptionId).status = status
  return renderSubscription(subscriptionOf(state, subscriptionId))
}

/** A renewal: the next period starts where the last one ended. */
export function nextPeriod(sub: SubscriptionState) {
  sub.periodStart = sub.periodEnd
  sub.periodEnd = addMonth(sub.periodEnd)
}

/** A monthly period's end: the same day of the next month, as Stripe bills (clamped at its end). */
function addMonth(unixSeconds: number): number {
  const start = new Date(unixSeconds * 1000)
  const end = new Date(start)
  end.setUTCMonth(start.getUTCMonth() + 1)
  if (end.getUTCDate() !== start.getUTCDate()) end.setUTCDate(0)
  return Math.floor(end.getTime() / 1000)
}
