// Subscription billing (docs/decisions.md, "Billing"; spec "Payments"): the routes' operations over a
// provider (local or Stripe) and the store's copy of each organization's subscription. Whatever
// path a change takes (the process route, an update or cancel, a Stripe webhook, a local renewal),
// it ends in `applySubscription` / `applyInvoice`, which are idempotent: the copy follows the
// provider, the organization's product type follows the plan, credits are granted once per paid
// period's invoice (ledger entry `invoice:<id>`), and billing events get ids made from what they are
// about, so a replay stores none twice.
import type { Locks } from '../coordination/ports.js'
import { withLock } from '../coordination/with-lock.js'
import { grantCredits } from '../credits/ledger.js'
import { appError } from '../errors.js'
import { appendNewEvents, type EventType, eventIdOf } from '../events/events.js'
import { nextVersion } from '../ids.js'
import type { Store } from '../store/client.js'
import type { OrganizationRow, Repositories } from '../store/entities.js'
import { storedTime } from '../store/time.js'
import type { LocalBillingProvider } from './local-provider.js'
import { isB2bPlan, type Plan, planByPrice } from './plans.js'
import type {
  BillingProvider,
  PostalAddress,
  ProviderInvoice,
  ProviderSubscription,
  ProviderWebhookEvent,
  SubscriptionStatus,
} from './provider.js'

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
const holding: readonly SubscriptionStatus[] = ['active', 'trialing', 'past_due']
/** Invoices that pay for a period, so grant its credits (a proration invoice does not). */
const periodReasons = new Set(['subscription_create', 'subscription_cycle'])

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

const toDateTime = (iso: string) => iso.replace('T', ' ').replace('Z', '')
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

async function writeSubscription(store: Store, row: SubscriptionRow): Promise<void> {
  await store.insert('subscriptions', [
    { ...row, cancel_at_period_end: row.cancel_at_period_end ? 1 : 0, version: nextVersion() },
  ])
}

/** The organization of a provider subscription we hold a copy of. */
async function organizationOfSubscription(store: Store, subscriptionId: string): Promise<string | undefined> {
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

// --- Events ---------------------------------------------------------------------------------------

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
async function emit(deps: BillingDeps, events: readonly BillingEventInput[]): Promise<void> {
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

// --- Applying what the provider says ---------------------------------------------------------------

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
  const plan = planByPrice(deps.plans, sub.priceId)
  const now = new Date().toISOString()
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
  await emit(deps, events)
  return row
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
    await emit(deps, [
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
async function applyLocalInvoices(deps: BillingDeps, subscriptionId: string): Promise<void> {
  const provider = deps.provider as Partial<{ listInvoices(id: string): Promise<ProviderInvoice[]> }>
  if (!provider.listInvoices) return
  for (const invoice of await provider.listInvoices(subscriptionId)) await applyInvoice(deps, invoice, 'paid')
}

// --- The routes' operations ------------------------------------------------------------------------

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

// --- Provider webhooks and the periodic sweep -------------------------------------------------------

/**
 * A provider's webhook, verified and read by the provider: acted on once per event id (recorded
 * after it was acted on, so a failure is retried by the provider's redelivery). Subscriptions are
 * asked again from the provider rather than taken from the event, so events arriving out of order
 * leave the latest state.
 */
export async function handleProviderWebhook(
  deps: BillingDeps,
  rawBody: Buffer,
  signature: string,
): Promise<{ received: true; duplicate: boolean; type: string }> {
  if (!deps.provider.readWebhook)
    throw appError('resource_not_found', 'This billing provider has no webhooks')
  const event: ProviderWebhookEvent = deps.provider.readWebhook(rawBody, signature)
  const [seen] = await deps.store.query<{ n: number }>(
    'SELECT count() AS n FROM billing_webhook_events WHERE event_id = {id:String}',
    { id: event.id },
  )
  if (Number(seen?.n ?? 0) > 0) return { received: true, duplicate: true, type: event.type }
  // Only subscriptions made by our checkouts name an organization; one that names none, or an
  // organization deleted since, is not ours to act on (answered 200, so the provider stops sending).
  const ours = async (sub: ProviderSubscription | undefined) =>
    sub?.organizationId
      ? (await deps.repos.organizations.get({ id: sub.organizationId })) !== undefined
      : false
  const fact = event.fact
  if (fact?.kind === 'checkout.completed') {
    const checkout = await deps.provider.retrieveCheckout(fact.sessionId)
    if (checkout?.complete && (await ours(checkout.subscription)))
      await applySubscription(deps, checkout.subscription!)
  } else if (fact?.kind === 'subscription.changed') {
    const sub = await deps.provider.retrieveSubscription(fact.subscriptionId)
    if (await ours(sub)) await applySubscription(deps, sub!)
  } else if (fact?.kind === 'invoice.paid' || fact?.kind === 'invoice.payment_failed') {
    const sub = await deps.provider.retrieveSubscription(fact.invoice.subscriptionId)
    if (await ours(sub)) {
      await applyInvoice(deps, fact.invoice, fact.kind === 'invoice.paid' ? 'paid' : 'failed', sub)
      // A failed payment moves the subscription (past_due): its copy follows what was just read.
      if (fact.kind === 'invoice.payment_failed') await applySubscription(deps, sub!)
    }
  }
  await deps.store.insert('billing_webhook_events', [
    { event_id: event.id, type: event.type, received_at: new Date().toISOString() },
  ])
  return { received: true, duplicate: false, type: event.type }
}

/**
 * The periodic pass: the local provider's renewals (and ends) of the periods over by `now`, and the
 * organizations whose B2B time after leaving the plan is over become `standard`.
 */
export async function billingSweep(deps: BillingDeps, now = new Date()): Promise<void> {
  const provider = deps.provider as Partial<{ renewDue(now: Date): Promise<ProviderSubscription[]> }>
  for (const sub of (await provider.renewDue?.(now)) ?? []) {
    await applySubscription(deps, sub)
    await applyLocalInvoices(deps, sub.id)
  }
  const ended = await deps.store.query<{ organization: string }>(
    `SELECT toString(organization_id) AS organization FROM subscriptions FINAL
     WHERE b2b_until IS NOT NULL AND b2b_until <= {now:DateTime64(3)}`,
    { now: toDateTime(now.toISOString()) },
  )
  for (const { organization: organizationId } of ended) {
    await withBillingLock(deps, organizationId, async () => {
      const row = await readSubscription(deps.store, organizationId)
      if (!row?.b2b_until || Date.parse(row.b2b_until) > now.getTime()) return
      await writeSubscription(deps.store, { ...row, b2b_until: null, updated_at: new Date().toISOString() })
      const organization = await deps.repos.organizations.get({ id: organizationId })
      const plan = deps.plans.find((p) => p.id === row.plan_id)
      const stillB2b = isB2bPlan(plan) && holding.includes(row.status)
      if (organization && !stillB2b && organization.product_type !== 'standard') {
        await deps.repos.organizations.save({
          ...organization,
          product_type: 'standard',
          updated_at: new Date().toISOString(),
        })
      }
    })
  }
}
