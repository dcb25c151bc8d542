// Invoices: Stripe bills a subscription (a renewal, a failed payment) and a test hands the invoice
// to the webhook. The server serves no invoice endpoint: the provider reads invoices from events.
import type Stripe from 'stripe'
import { newId, now, type Shape, type StripeState, type SubscriptionState } from './state.js'
import { nextPeriod, subscriptionOf } from './subscriptions.js'

export interface InvoiceOptions {
  /** In cents; 4900 by default. */
  amount?: number
  currency?: string
}

/**
 * A paid invoice of the subscription. A renewal (`subscription_cycle`, the default) first moves
 * the subscription to its next period, as Stripe does; paying makes a past-due one active again.
 */
export function paidInvoice(
  state: StripeState,
  subscriptionId: string,
  reason: Stripe.Invoice.BillingReason = 'subscription_cycle',
  options: InvoiceOptions = {},
) {
  const sub = subscriptionOf(state, subscriptionId)
  if (reason === 'subscription_cycle') nextPeriod(sub)
  if (sub.status === 'past_due' || sub.status === 'incomplete') sub.status = 'active'
  return renderInvoice(sub, 'paid', reason, options)
}

/** A failed payment: a renewal's by default (the new period starts all the same); the subscription is past due. */
export function failedInvoice(
  state: StripeState,
  subscriptionId: string,
  reason: Stripe.Invoice.BillingReason = 'subscription_cycle',
  options: InvoiceOptions = {},
) {
  const sub = subscriptionOf(state, subscriptionId)
  if (reason === 'subscription_cycle') nextPeriod(sub)
  sub.status = 'past_due'
  return renderInvoice(sub, 'failed', reason, options)
}

function renderInvoice(
  sub: SubscriptionState,
  outcome: 'paid' | 'failed',
  reason: Stripe.Invoice.BillingReason,
  { amount = 4900, currency = 'usd' }: InvoiceOptions,
) {
  const id = newId('in')
  return {
    id,
    object: 'invoice',
    created: now(),
    customer: sub.customer,
    currency,
    status: outcome === 'paid' ? 'paid' : 'open',
    amount_due: amount,
    amount_paid: outcome === 'paid' ? amount : 0,
    amount_remaining: outcome === 'paid' ? 0 : amount,
    attempt_count: 1,
    billing_reason: reason,
    hosted_invoice_url: `https://invoice.stripe.com/i/${id}`,
    // Where the subscription is since API version 2025-03-31.basil (no more `invoice.subscription`).
    parent: {
      type: 'subscription_details',
      quote_details: null,
      subscription_details: { subscription: sub.id, metadata: sub.metadata },
    },
    lines: {
      object: 'list',
      data: [renderInvoiceLine(sub, id, amount, currency)],
      has_more: false,
      url: `/v1/invoices/${id}/lines`,
    },
  } satisfies Shape<Stripe.Invoice>
}

/** The invoice's one line: the subscription's item over its current period. */
const renderInvoiceLine = (sub: SubscriptionState, invoice: string, amount: number, currency: string) =>
  ({
    id: newId('il'),
    object: 'line_item',
    invoice,
    amount,
    currency,
    quantity: 1,
    period: { start: sub.periodStart, end: sub.periodEnd },
    pricing: {
      type: 'price_details',
      price_details: { price: sub.price },
      unit_amount_decimal: null,
    },
    parent: {
      type: 'subscription_item_details',
      invoice_item_details: null,
      subscription_item_details: {
        subscription: sub.id,
        subscription_item: sub.itemId,
        invoice_item: null,
        proration: false,
        proration_details: { credited_items: null },
      },
    },
  }) satisfies Shape<Stripe.InvoiceLineItem>
