// The store's copy of each organization's subscription (docs/decisions.md, "Billing"): what every
// billing path reads and writes, and the lock that makes one organization's changes take turns.
import type { Locks } from '../coordination/ports.js'
import { withLock } from '../coordination/with-lock.js'
import { appError } from '../errors.js'
import { nextVersion } from '../ids.js'
import type { Repositories } from '../repositories.js'
import type { Store } from '../store/client.js'
import { storedTime } from '../store/time.js'
import { type Plan, planByPrice } from './plans.js'
import type { BillingProvider, SubscriptionStatus } from './provider.js'

export interface BillingDeps {
  store: Store
  repos: Repositories
  locks: Locks
  provider: BillingProvider
  plans: readonly Plan[]
  /** Where browsers reach this server: the default success and cancel pages. */
  publicUrl: string
}

/** The store's copy of an organization's subscription. */
export interface SubscriptionRow {
  organization_id: string
  provider: string
  customer_id: string
  subscription_id: string
  plan_id: string
  price_id: string
  product_id: string
  status: SubscriptionStatus
  current_period_end: string
  cancel_at_period_end: boolean
  /** Set when the organization left a B2B plan: it stays `plus_employee` until then. */
  b2b_until: string | null
  created_at: string
  updated_at: string
}

/** A subscription that holds the organization (a second checkout is refused while it does). */
export const holding: readonly SubscriptionStatus[] = ['active', 'trialing', 'past_due']

const iso = storedTime

/** The organization's subscription copy, if it ever had one. */
export async function readSubscription(
  store: Store,
  organizationId: string,
): Promise<SubscriptionRow | undefined> {
  const [row] = await store.query<SubscriptionRow & { organization: string }>(
    `SELECT toString(organization_id) AS organization, provider, customer_id, subscription_id, plan_id, price_id,
       product_id, status, current_period_end, cancel_at_period_end, b2b_until, created_at, updated_at
     FROM subscriptions FINAL WHERE organization_id = {organizationId:UUID}`,
    { organizationId },
  )
  if (!row) return undefined
  const { organization, ...rest } = row
  return {
    ...rest,
    organization_id: organization,
    cancel_at_period_end: Boolean(Number(row.cancel_at_period_end)),
    current_period_end: iso(row.current_period_end),
    b2b_until: row.b2b_until === null ? null : iso(row.b2b_until),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  }
}

export async function writeSubscription(store: Store, row: SubscriptionRow): Promise<void> {
  await store.insert('subscriptions', [
    { ...row, cancel_at_period_end: row.cancel_at_period_end ? 1 : 0, version: nextVersion() },
  ])
}

/** The organization of a provider subscription we hold a copy of. */
export async function organizationOfSubscription(
  store: Store,
  subscriptionId: string,
): Promise<string | undefined> {
  const [row] = await store.query<{ organization: string }>(
    `SELECT toString(organization_id) AS organization FROM subscriptions FINAL
     WHERE subscription_id = {subscriptionId:String} LIMIT 1`,
    { subscriptionId },
  )
  return row?.organization
}

/** Changes of one organization's billing take turns (a process racing its own webhook). */
export const withBillingLock = <T>(
  deps: BillingDeps,
  organizationId: string,
  work: () => Promise<T>,
): Promise<T> => withLock(deps.locks, `billing:${organizationId}`, { leaseMs: 60_000, waitMs: 30_000 }, work)

/** The plan of a checkout, update: both ids must name the same plan (else 400 `unknown_plan`). */
export function planOf(plans: readonly Plan[], priceId: string, productId: string): Plan {
  const plan = planByPrice(plans, priceId)
  if (!plan || plan.productId !== productId) {
    throw appError(
      'unknown_plan',
      `No plan has price ${JSON.stringify(priceId.slice(0, 100))} and product ${JSON.stringify(productId.slice(0, 100))}; GET /payment/subscription-plans lists them`,
    )
  }
  return plan
}
