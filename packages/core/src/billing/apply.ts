// Applying what the provider says (docs/decisions.md, "Billing"): whatever path a change takes (the
// process route, an update or cancel, a Stripe webhook, a local renewal), it ends in
// `applySubscription` / `applyInvoice`, which are idempotent: the copy follows the provider, the
// organization's product type follows the plan, credits are granted once per paid period's invoice
// (ledger entry `invoice:<id>`), and billing events get ids made from what they are about, so a
// replay stores none twice.

import type { OrganizationRow } from '../accounts/rows.js'
import { grantCredits } from '../credits/ledger.js'
import { appError } from '../errors.js'
import { storedTime } from '../store/time.js'
import { type BillingEventInput, emitBillingEvents, periodReasons } from './billing-events.js'
import { isB2bPlan, planByPrice } from './plans.js'
import type { ProviderInvoice, ProviderSubscription } from './provider.js'
import {
  type BillingDeps,
  holding,
  organizationOfSubscription,
  readSubscription,
  type SubscriptionRow,
  withBillingLock,
  writeSubscription,
} from './subscriptions.js'

const iso = storedTime

/**
 * Makes the copy follow the provider's subscription, then the organization's product type follow
 * its plan, and emits what changed: `subscription.activated` (first time it holds), `.canceled`
 * (cancel requested or ended; once per period), `.updated` (anything else that changed).
 */
export async function applySubscription(
  deps: BillingDeps,
  sub: ProviderSubscription,
): Promise<SubscriptionRow> {
  return withBillingLock(deps, sub.organizationId, () => applySubscriptionLocked(deps, sub))
}

async function applySubscriptionLocked(
  deps: BillingDeps,
  sub: ProviderSubscription,
): Promise<SubscriptionRow> {
  const organization = await deps.repos.organizations.get({ id: sub.organizationId })
  if (!organization) throw appError('organization_not_found')
  const previous = await readSubscription(deps.store, sub.organizationId)
  // A webhook about an older subscription of the organization (replaced since) changes nothing.
  if (
    previous &&
    previous.subscription_id !== sub.id &&
    holding.includes(previous.status) &&
    !holding.includes(sub.status)
  ) {
    return previous
  }
  const same = previous?.subscription_id === sub.id ? previous : undefined
  const now = new Date().toISOString()
  const { row, b2bNow, wasB2b } = followingCopy(deps, sub, previous, same, now)
  const changed =
    !same ||
    same.price_id !== row.price_id ||
    same.status !== row.status ||
    same.cancel_at_period_end !== row.cancel_at_period_end ||
    iso(same.current_period_end) !== iso(row.current_period_end)
  if (!changed && (same?.b2b_until ?? null) === row.b2b_until) return same!
  await writeSubscription(deps.store, row)

  const productType =
    b2bNow || row.b2b_until ? 'plus_employee' : wasB2b || previous?.b2b_until ? 'standard' : undefined
  if (productType && organization.product_type !== productType) {
    await deps.repos.organizations.save({ ...organization, product_type: productType, updated_at: now })
  }

  await emitBillingEvents(deps, changeEvents(organization, same, row, changed))
  return row
}

/** The copy that follows `sub`, and whether the organization holds a B2B plan now and held one before. */
function followingCopy(
  deps: BillingDeps,
  sub: ProviderSubscription,
  previous: SubscriptionRow | undefined,
  same: SubscriptionRow | undefined,
  now: string,
): { row: SubscriptionRow; b2bNow: boolean; wasB2b: boolean } {
  const plan = planByPrice(deps.plans, sub.priceId)
  const previousPlan = previous ? deps.plans.find((p) => p.id === previous.plan_id) : undefined
  const b2bNow = isB2bPlan(plan) && holding.includes(sub.status)
  const wasB2b = Boolean(previous && isB2bPlan(previousPlan) && holding.includes(previous.status))
  // Leaving B2B keeps it until the end of the period paid for (an ended subscription: now).
  let b2bUntil: string | null = previous?.b2b_until ?? null
  if (b2bNow) b2bUntil = null
  else if (wasB2b) b2bUntil = previous!.current_period_end
  // An ended subscription ends the time it paid for, whatever was left of it.
  if (sub.status === 'canceled' && b2bUntil) b2bUntil = now
  const row: SubscriptionRow = {
    organization_id: sub.organizationId,
    provider: deps.provider.kind,
    customer_id: sub.customerId,
    subscription_id: sub.id,
    plan_id: plan?.id ?? '',
    price_id: sub.priceId,
    product_id: plan?.productId ?? '',
    status: sub.status,
    current_period_end: sub.currentPeriodEnd,
    cancel_at_period_end: sub.cancelAtPeriodEnd,
    b2b_until: b2bUntil && Date.parse(b2bUntil) > Date.now() ? b2bUntil : null,
    created_at: same?.created_at ?? now,
    updated_at: now,
  }
  return { row, b2bNow, wasB2b }
}

/**
 * What a change of the copy emits: `subscription.activated` (first time it holds), `.canceled`
 * (cancel requested or ended; once per period), `.updated` (anything else that changed).
 */
function changeEvents(
  organization: OrganizationRow,
  same: SubscriptionRow | undefined,
  row: SubscriptionRow,
  changed: boolean,
): BillingEventInput[] {
  const events: BillingEventInput[] = []
  const base = { organization, subscription: row }
  const holdsNow = holding.includes(row.status)
  const canceledNow = row.status === 'canceled' || row.cancel_at_period_end
  if (holdsNow && (!same || !holding.includes(same.status)) && row.status !== 'past_due') {
    events.push({ ...base, type: 'subscription.activated', subject: row.subscription_id })
  } else if (canceledNow && !(same && (same.status === 'canceled' || same.cancel_at_period_end))) {
    events.push({
      ...base,
      type: 'subscription.canceled',
      subject: `${row.subscription_id}:${iso(row.current_period_end)}`,
    })
  } else if (changed && same) {
    const state = `${row.price_id}:${row.status}:${row.cancel_at_period_end}:${iso(row.current_period_end)}`
    events.push({ ...base, type: 'subscription.updated', subject: `${row.subscription_id}:${state}` })
  }
  return events
}

/**
 * A paid invoice grants its plan's credits once (a period's invoice only) and emits `invoice.paid`;
 * a failed one emits `payment.failed`. The organization comes from our copy of the subscription,
 * else from the provider (an invoice webhook may come before the checkout's).
 */
export async function applyInvoice(
  deps: BillingDeps,
  invoice: ProviderInvoice,
  outcome: 'paid' | 'failed',
  /** The invoice's subscription, when the caller has just read it from the provider. */
  retrieved?: ProviderSubscription,
): Promise<void> {
  let organizationId = await organizationOfSubscription(deps.store, invoice.subscriptionId)
  if (!organizationId) {
    const sub = retrieved ?? (await deps.provider.retrieveSubscription(invoice.subscriptionId))
    if (!sub) return
    await applySubscription(deps, sub)
    organizationId = sub.organizationId
  }
  await withBillingLock(deps, organizationId, async () => {
    const organization = await deps.repos.organizations.get({ id: organizationId })
    const subscription = await readSubscription(deps.store, organizationId)
    if (!organization || !subscription) return
    const plan = planByPrice(deps.plans, invoice.priceId ?? subscription.price_id)
    if (outcome === 'paid' && plan && plan.credits > 0 && periodReasons.has(invoice.reason)) {
      await grantCredits(deps.store, {
        organizationId,
        amount: plan.credits,
        reason: `${plan.name} plan, invoice ${invoice.id}`,
        entryId: `invoice:${invoice.id}`,
      })
    }
    await emitBillingEvents(deps, [
      {
        type: outcome === 'paid' ? 'invoice.paid' : 'payment.failed',
        subject: invoice.id,
        organization,
        subscription,
        invoice,
      },
    ])
  })
}

/** The local provider's invoices of a subscription, applied (each once). */
export async function applyLocalInvoices(deps: BillingDeps, subscriptionId: string): Promise<void> {
  const provider = deps.provider as Partial<{ listInvoices(id: string): Promise<ProviderInvoice[]> }>
  if (!provider.listInvoices) return
  for (const invoice of await provider.listInvoices(subscriptionId)) await applyInvoice(deps, invoice, 'paid')
}
