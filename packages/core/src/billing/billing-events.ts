// Billing events (spec "Payments"; docs/decisions.md, "Billing"): the types, the payload partners'
// billing webhooks carry, and storing them with ids made from what they are about, so a replay of
// the same change stores none twice.

import type { OrganizationRow } from '../accounts/rows.js'
import { appendNewEvents, type EventType, eventIdOf } from '../events/events.js'
import type { ProviderInvoice } from './provider.js'
import type { BillingDeps, SubscriptionRow } from './subscriptions.js'

/** Invoices that pay for a period, so grant its credits (a proration invoice does not). */
export const periodReasons = new Set(['subscription_create', 'subscription_cycle'])

const billingEventTypes = [
  'subscription.activated',
  'subscription.updated',
  'subscription.canceled',
  'payment.failed',
  'invoice.paid',
] as const satisfies readonly EventType[]
export type BillingEventType = (typeof billingEventTypes)[number]
export const isBillingEvent = (type: string): type is BillingEventType =>
  (billingEventTypes as readonly string[]).includes(type)

export interface BillingEventInput {
  type: BillingEventType
  /** What the event is about, for its id: the same subject is one event. */
  subject: string
  organization: OrganizationRow
  subscription: SubscriptionRow
  invoice?: ProviderInvoice | undefined
}

/** The billing webhook's payload (snake_case, like the identification payload). */
export function billingPayload(deps: Pick<BillingDeps, 'plans'>, input: BillingEventInput, at: string) {
  const plan = deps.plans.find((p) => p.id === input.subscription.plan_id)
  const { subscription: s, invoice } = input
  return {
    event_type: input.type,
    timestamp: at,
    organization_id: input.organization.id,
    workspace: input.organization.name,
    subscription: {
      id: s.subscription_id,
      customer_id: s.customer_id,
      status: s.status,
      plan_id: s.plan_id,
      plan_name: plan?.name ?? '',
      product_id: s.product_id,
      price_id: s.price_id,
      product_type: plan?.productType ?? 'standard',
      current_period_end: s.current_period_end,
      cancel_at_period_end: s.cancel_at_period_end,
    },
    ...(invoice
      ? {
          invoice: {
            id: invoice.id,
            amount: invoice.amount,
            currency: invoice.currency,
            reason: invoice.reason,
            period_end: invoice.periodEnd ?? null,
            url: invoice.url ?? null,
            credits_granted: periodReasons.has(invoice.reason) ? (plan?.credits ?? 0) : 0,
          },
        }
      : {}),
  }
}

export type BillingPayload = ReturnType<typeof billingPayload>

/** Stores the events not stored before (a replay must not store one again: that would send it again). */
export async function emitBillingEvents(
  deps: BillingDeps,
  events: readonly BillingEventInput[],
): Promise<void> {
  const at = new Date().toISOString()
  await appendNewEvents(
    deps.store,
    events.map((event) => ({
      event_id: eventIdOf(event.type, event.organization.id, event.subject),
      type: event.type,
      organization_id: event.organization.id,
      visitor_id: null,
      payload: JSON.stringify(billingPayload(deps, event, at)),
      created_at: at,
    })),
  )
}
