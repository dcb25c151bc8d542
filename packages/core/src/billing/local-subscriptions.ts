// The `local` billing provider's subscriptions: started by a checkout, changed, canceled at the end
// of their period, and renewed at each period end with a zero-cost invoice (nobody pays here).
import { appError } from '../errors.js'
import type { Store } from '../store/client.js'
import {
  asProviderSubscription,
  type LocalCheckout,
  type LocalSubscription,
  newObjectId,
  periodEnd,
  readObject,
  writeObject,
} from './local-objects.js'
import type { Plan } from './plans.js'
import type { ProviderCustomer, ProviderInvoice, ProviderSubscription } from './provider.js'

/** The subscription; `subscription_not_found` when there is none. */
export async function requireSubscription(store: Store, id: string): Promise<LocalSubscription> {
  const found = await readObject(store, 'subscription', id)
  if (!found) throw appError('subscription_not_found')
  return found
}

/** The zero-cost invoice of the subscription's current period, numbered after its earlier ones. */
function periodInvoice(sub: LocalSubscription, reason: string): ProviderInvoice {
  return {
    id: `in_local_${sub.id.slice('sub_local_'.length)}_${sub.invoices.length + 1}`,
    subscriptionId: sub.id,
    customerId: sub.customerId,
    priceId: sub.priceId,
    amount: 0,
    currency: 'usd',
    periodEnd: sub.currentPeriodEnd,
    reason,
  }
}

/** A confirmed (and, for a paid plan, approved) checkout's subscription: one invoice paid. */
export async function startSubscription(
  store: Store,
  checkout: LocalCheckout,
  plan: Plan,
): Promise<LocalSubscription> {
  const now = new Date()
  const sub: LocalSubscription = {
    id: newObjectId('sub_local'),
    customerId: checkout.customerId ?? newObjectId('cus_local'),
    organizationId: checkout.organizationId,
    priceId: plan.priceId,
    status: 'active',
    currentPeriodEnd: periodEnd(now, plan.interval).toISOString(),
    cancelAtPeriodEnd: false,
    interval: plan.interval,
    invoices: [],
  }
  sub.invoices.push(periodInvoice(sub, 'subscription_create'))
  // The subscription first: a crash between the two leaves the checkout as it was, done again.
  await writeObject(store, { kind: 'subscription', data: sub }, sub.organizationId)
  await writeObject(
    store,
    { kind: 'checkout', data: { ...checkout, status: 'complete', subscriptionId: sub.id } },
    checkout.organizationId,
  )
  return sub
}

/** The subscription moved to the plan now; choosing a plan undoes a pending cancellation. */
export async function changeSubscriptionPlan(
  store: Store,
  sub: LocalSubscription,
  plan: Plan,
): Promise<LocalSubscription> {
  const changed = { ...sub, priceId: plan.priceId, interval: plan.interval, cancelAtPeriodEnd: false }
  await writeObject(store, { kind: 'subscription', data: changed }, sub.organizationId)
  return changed
}

export async function cancelSubscriptionAtPeriodEnd(store: Store, id: string): Promise<ProviderSubscription> {
  const sub = await requireSubscription(store, id)
  const changed = { ...sub, cancelAtPeriodEnd: true }
  await writeObject(store, { kind: 'subscription', data: changed }, sub.organizationId)
  return asProviderSubscription(changed)
}

/** A customer is known while a subscription names it; it has no card and no address: nothing is charged. */
export async function retrieveLocalCustomer(store: Store, id: string): Promise<ProviderCustomer | undefined> {
  const [row] = await store.query<{ n: number }>(
    `SELECT count() AS n FROM billing_local_objects FINAL
     WHERE kind = 'subscription' AND JSONExtractString(data, 'customerId') = {id:String}`,
    { id },
  )
  return Number(row?.n ?? 0) > 0 ? { id, email: null, address: null, defaultCardLast4: null } : undefined
}

/** The subscription after its period end passed at `now`: ended when canceled, else renewed. */
function afterPeriodEnd(sub: LocalSubscription, now: Date): LocalSubscription {
  if (sub.cancelAtPeriodEnd) return { ...sub, status: 'canceled' }
  // Every period missed is one renewal (a server stopped for two months renews twice).
  const next = { ...sub, invoices: [...sub.invoices] }
  while (Date.parse(next.currentPeriodEnd) <= now.getTime()) {
    next.currentPeriodEnd = periodEnd(new Date(next.currentPeriodEnd), next.interval).toISOString()
    next.invoices.push(periodInvoice(next, 'subscription_cycle'))
  }
  return next
}

/** Subscriptions whose period ended by `now`: renewed (a new invoice) or, when canceled, ended. */
export async function renewDueSubscriptions(store: Store, now: Date): Promise<ProviderSubscription[]> {
  const due = await store.query<{ data: string }>(
    `SELECT data FROM billing_local_objects FINAL
     WHERE kind = 'subscription'
       AND JSONExtractString(data, 'status') IN ('active', 'trialing', 'past_due')
       AND parseDateTime64BestEffort(JSONExtractString(data, 'currentPeriodEnd'), 3) <= {now:DateTime64(3)}`,
    { now: now.toISOString().replace('T', ' ').replace('Z', '') },
  )
  const changed: ProviderSubscription[] = []
  for (const { data } of due) {
    const next = afterPeriodEnd(JSON.parse(data) as LocalSubscription, now)
    await writeObject(store, { kind: 'subscription', data: next }, next.organizationId)
    changed.push(asProviderSubscription(next))
  }
  return changed
}
