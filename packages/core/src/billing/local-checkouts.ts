// The `local` billing provider's checkouts: opened by the API, confirmed on this server's checkout
// page, and for a plan with a price (or a plan change asked for by the customer) approved by the
// operator before anything starts or changes.
import { appError } from '../errors.js'
import type { Store } from '../store/client.js'
import {
  asProviderSubscription,
  type LocalCheckout,
  type LocalProviderContext,
  newObjectId,
  readObject,
  sessionExpiry,
  unexpired,
  writeObject,
} from './local-objects.js'
import { changeSubscriptionPlan, requireSubscription, startSubscription } from './local-subscriptions.js'
import type { Plan } from './plans.js'
import type { BillingProvider, ProviderCheckout, ProviderSubscription } from './provider.js'

/** A checkout (or plan change) waiting for the operator, as `billing pending` lists it. */
export interface PendingApproval {
  id: string
  organizationId: string
  planId: string
  planName: string
  priceId: string
  /** Set for a plan change: the subscription it changes. */
  changeOf: string | null
  confirmedAt: string | null
}

/** The plan the checkout is for; `unknown_plan` when the plans no longer have its price. */
function planOf(checkout: LocalCheckout, plans: readonly Plan[]): Plan {
  const plan = plans.find((p) => p.priceId === checkout.priceId)
  if (!plan) throw appError('unknown_plan')
  return plan
}

export async function createLocalCheckout(
  context: LocalProviderContext,
  input: Parameters<BillingProvider['createCheckout']>[0],
): Promise<{ id: string; url: string }> {
  const checkout: LocalCheckout = {
    id: newObjectId('cs_local'),
    organizationId: input.organizationId,
    planId: input.plan.id,
    planName: input.plan.name,
    priceId: input.plan.priceId,
    successUrl: input.successUrl,
    cancelUrl: input.cancelUrl,
    customerId: input.customerId,
    status: 'open',
    expiresAt: sessionExpiry(),
  }
  await writeObject(context.store, { kind: 'checkout', data: checkout }, input.organizationId)
  return { id: checkout.id, url: `${context.base}/billing/checkout/${checkout.id}` }
}

export async function retrieveLocalCheckout(store: Store, id: string): Promise<ProviderCheckout | undefined> {
  const checkout = await readObject(store, 'checkout', id)
  if (!checkout) return undefined
  const sub = checkout.subscriptionId
    ? await readObject(store, 'subscription', checkout.subscriptionId)
    : undefined
  return {
    id,
    organizationId: checkout.organizationId,
    complete: checkout.status === 'complete',
    pendingApproval: checkout.status === 'pending_approval',
    subscription: sub ? asProviderSubscription(sub) : undefined,
  }
}

/** See `LocalBillingProvider.confirmCheckout`. */
export async function confirmLocalCheckout(
  context: LocalProviderContext,
  id: string,
  plans: readonly Plan[],
): Promise<string> {
  const checkout = unexpired(await readObject(context.store, 'checkout', id))
  if (!checkout) throw appError('checkout_not_found')
  const plan = planOf(checkout, plans)
  if (checkout.status === 'open') {
    if (context.needsApproval(plan)) {
      const pending = {
        ...checkout,
        status: 'pending_approval' as const,
        confirmedAt: new Date().toISOString(),
      }
      await writeObject(context.store, { kind: 'checkout', data: pending }, checkout.organizationId)
    } else await startSubscription(context.store, checkout, plan)
  }
  return checkout.successUrl.replaceAll('{CHECKOUT_SESSION_ID}', encodeURIComponent(id))
}

/** See `LocalBillingProvider.approve`. */
export async function approveLocalCheckout(
  store: Store,
  id: string,
  plans: readonly Plan[],
): Promise<ProviderSubscription> {
  // The operator may take longer than a session lasts: approval does not look at its expiry.
  const checkout = await readObject(store, 'checkout', id)
  if (!checkout) throw appError('checkout_not_found')
  if (checkout.status === 'open') {
    throw appError('checkout_incomplete', 'The customer has not confirmed this checkout on its page yet')
  }
  if (checkout.status === 'complete') {
    return asProviderSubscription(await requireSubscription(store, checkout.subscriptionId ?? ''))
  }
  const plan = planOf(checkout, plans)
  if (!checkout.changeOf) return asProviderSubscription(await startSubscription(store, checkout, plan))
  const changed = await changeSubscriptionPlan(
    store,
    await requireSubscription(store, checkout.changeOf),
    plan,
  )
  await writeObject(
    store,
    { kind: 'checkout', data: { ...checkout, status: 'complete', subscriptionId: changed.id } },
    checkout.organizationId,
  )
  return asProviderSubscription(changed)
}

/** See `LocalBillingProvider.requestPlanChange`. */
export async function requestLocalPlanChange(
  context: LocalProviderContext,
  subscriptionId: string,
  plan: Plan,
): Promise<{ id: string }> {
  const sub = await requireSubscription(context.store, subscriptionId)
  const now = new Date()
  const change: LocalCheckout = {
    id: newObjectId('cs_local'),
    organizationId: sub.organizationId,
    planId: plan.id,
    planName: plan.name,
    priceId: plan.priceId,
    successUrl: `${context.base}/billing/done`,
    cancelUrl: `${context.base}/billing/done`,
    customerId: sub.customerId,
    status: 'pending_approval',
    changeOf: sub.id,
    confirmedAt: now.toISOString(),
    expiresAt: sessionExpiry(now.getTime()),
  }
  await writeObject(context.store, { kind: 'checkout', data: change }, sub.organizationId)
  return { id: change.id }
}

/** The checkouts and plan changes waiting for the operator, oldest first. */
export async function listPendingApprovals(store: Store): Promise<PendingApproval[]> {
  const rows = await store.query<{ data: string }>(
    `SELECT data FROM billing_local_objects FINAL
     WHERE kind = 'checkout' AND JSONExtractString(data, 'status') = 'pending_approval'
     ORDER BY created_at, id`,
  )
  return rows.map(({ data }) => {
    const c = JSON.parse(data) as LocalCheckout
    return {
      id: c.id,
      organizationId: c.organizationId,
      planId: c.planId,
      planName: c.planName,
      priceId: c.priceId,
      changeOf: c.changeOf ?? null,
      confirmedAt: c.confirmedAt ?? null,
    }
  })
}
