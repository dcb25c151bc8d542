// The payment routes' operations (spec "Payments"; docs/decisions.md, "Billing"): checkout, process,
// plan update, cancel, portal and customer info, over the provider and the store's copy. Every
// change they make ends in `applySubscription` (apply.ts).

import type { OrganizationRow } from '../accounts/rows.js'
import { appError } from '../errors.js'
import type { Repositories } from '../repositories.js'
import { storedTime } from '../store/time.js'
import { applyLocalInvoices, applySubscription } from './apply.js'
import type { LocalBillingProvider } from './local-provider.js'
import { isB2bPlan, type Plan } from './plans.js'
import type { PostalAddress, SubscriptionStatus } from './provider.js'
import { type BillingDeps, holding, planOf, readSubscription, type SubscriptionRow } from './subscriptions.js'

const iso = storedTime

/** POST /payment/subscription-checkout: a hosted checkout for the plan. */
export async function startCheckout(
  deps: BillingDeps,
  organization: OrganizationRow,
  input: {
    priceId: string
    productId: string
    successUrl?: string | undefined
    cancelUrl?: string | undefined
  },
): Promise<{ url: string; id: string }> {
  const plan = planOf(deps.plans, input.priceId, input.productId)
  const current = await readSubscription(deps.store, organization.id)
  if (current && holding.includes(current.status)) {
    throw appError(
      'subscription_active',
      `The organization already has a ${current.status} subscription; change its plan with POST /payment/subscription-update`,
    )
  }
  const base = deps.publicUrl.replace(/\/+$/, '')
  return deps.provider.createCheckout({
    organizationId: organization.id,
    plan,
    successUrl: input.successUrl ?? `${base}/billing/done?session_id={CHECKOUT_SESSION_ID}`,
    cancelUrl: input.cancelUrl ?? `${base}/billing/done?canceled=1`,
    customerId: current?.customer_id || undefined,
  })
}

/** What the process, update and portal answers say about the subscription (camelCase). */
export function presentSubscription(plans: readonly Plan[], row: SubscriptionRow) {
  const plan = plans.find((p) => p.id === row.plan_id)
  return {
    id: row.subscription_id,
    status: row.status,
    planId: row.plan_id || null,
    productId: row.product_id || null,
    priceId: row.price_id,
    productType: plan?.productType ?? 'standard',
    credits: plan?.credits ?? 0,
    currentPeriodEnd: iso(row.current_period_end),
    cancelAtPeriodEnd: row.cancel_at_period_end,
  }
}

/**
 * POST /payment/subscription-process: completes a checkout (the `secret` is its session id). Only
 * a complete, paid session counts; processing it again (or after its webhook) changes nothing.
 * A session of another organization is 404 like an unknown one; a local one the operator has not
 * approved yet is 409 `checkout_pending_approval`.
 */
export async function processCheckout(deps: BillingDeps, sessionId: string, organizationId?: string) {
  const checkout = await deps.provider.retrieveCheckout(sessionId)
  if (!checkout || (organizationId !== undefined && checkout.organizationId !== organizationId)) {
    throw appError('checkout_not_found')
  }
  if (checkout.pendingApproval) throw appError('checkout_pending_approval')
  if (!checkout.complete || !checkout.subscription) throw appError('checkout_incomplete')
  const row = await applySubscription(deps, checkout.subscription)
  await applyLocalInvoices(deps, row.subscription_id)
  return {
    success: true as const,
    organizationId: checkout.organizationId,
    subscription: presentSubscription(deps.plans, row),
  }
}

async function currentSubscription(deps: BillingDeps, organizationId: string): Promise<SubscriptionRow> {
  const row = await readSubscription(deps.store, organizationId)
  if (!row || row.status === 'canceled' || row.status === 'incomplete')
    throw appError('subscription_not_found')
  return row
}

/** What a year of the plan costs, to compare plans of different intervals. */
const yearlyAmount = (plan: Plan) => plan.amount * (plan.interval === 'month' ? 12 : 1)

/** A move to a plan the operator has not consented to: dearer, or B2B from a plan that was not. */
const isUpgrade = (from: Plan | undefined, to: Plan) =>
  !from || yearlyAmount(to) > yearlyAmount(from) || (isB2bPlan(to) && !isB2bPlan(from))

/**
 * POST /payment/subscription-update: the subscription moves to the plan now, prorated. With the
 * local provider an upgrade to a plan with a price waits for the operator, as a checkout does: it is
 * recorded as a pending session and answered 409 `checkout_pending_approval` naming it.
 */
export async function updateSubscriptionPlan(
  deps: BillingDeps,
  organization: OrganizationRow,
  input: { priceId: string; productId: string },
) {
  const plan = planOf(deps.plans, input.priceId, input.productId)
  const current = await currentSubscription(deps, organization.id)
  const local = deps.provider as Partial<LocalBillingProvider>
  const currentPlan = deps.plans.find((p) => p.id === current.plan_id)
  if (local.requestPlanChange && local.needsApproval?.(plan) && isUpgrade(currentPlan, plan)) {
    const { id } = await local.requestPlanChange(current.subscription_id, plan)
    throw appError(
      'checkout_pending_approval',
      `The change to the ${plan.name} plan waits for the operator's approval: npm run cli -- billing approve ${id}`,
    )
  }
  const changed = await deps.provider.changePlan(current.subscription_id, plan)
  const row = await applySubscription(deps, changed)
  return { success: true as const, subscription: presentSubscription(deps.plans, row) }
}

/** POST /payment/subscription-cancel: canceled at the end of the period paid for. */
export async function cancelSubscription(deps: BillingDeps, organization: OrganizationRow): Promise<void> {
  const current = await currentSubscription(deps, organization.id)
  await applySubscription(deps, await deps.provider.cancelAtPeriodEnd(current.subscription_id))
}

/** POST /payment/customer-portal. */
export async function customerPortal(
  deps: BillingDeps,
  organization: OrganizationRow,
  returnUrl: string | undefined,
): Promise<{ url: string }> {
  const row = await readSubscription(deps.store, organization.id)
  if (!row?.customer_id)
    throw appError('subscription_not_found', 'The organization has no billing customer yet: subscribe first')
  return deps.provider.createPortal({
    customerId: row.customer_id,
    organizationId: organization.id,
    returnUrl: returnUrl ?? `${deps.publicUrl.replace(/\/+$/, '')}/billing/done`,
  })
}

export interface CustomerInfo {
  customerId: string | null
  email: string | null
  address: PostalAddress | null
  defaultCardLast4: string | null
  activeProductId: string | null
  activePriceId: string | null
  planId: string | null
  status: SubscriptionStatus | null
  currentPeriodEnd: string | null
  cancelAtPeriodEnd: boolean
}

/** GET /payment/customer-info: nulls when the organization never subscribed. */
export async function customerInfo(deps: BillingDeps, organization: OrganizationRow): Promise<CustomerInfo> {
  const row = await readSubscription(deps.store, organization.id)
  const customer = row?.customer_id ? await deps.provider.retrieveCustomer(row.customer_id) : undefined
  const active = row && holding.includes(row.status)
  return {
    customerId: row?.customer_id || null,
    email: customer?.email ?? (row ? await ownerEmail(deps.repos, organization.id) : null),
    address: customer?.address ?? null,
    defaultCardLast4: customer?.defaultCardLast4 ?? null,
    activeProductId: active ? row.product_id || null : null,
    activePriceId: active ? row.price_id : null,
    planId: row?.plan_id || null,
    status: row?.status ?? null,
    currentPeriodEnd: row ? iso(row.current_period_end) : null,
    cancelAtPeriodEnd: row?.cancel_at_period_end ?? false,
  }
}

async function ownerEmail(repos: Repositories, organizationId: string): Promise<string | null> {
  const owner = (await repos.memberships.find({ organization_id: organizationId })).find(
    (m) => m.role === 'owner',
  )
  return owner ? ((await repos.users.get({ id: owner.user_id }))?.email ?? null) : null
}
