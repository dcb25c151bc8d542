// The `local` billing provider (docs/decisions.md, "Billing"): for self-hosters who do not charge. Checkout
// and the customer portal are pages of this server (packages/server, billing-pages.ts). Nobody pays
// here, so the operator's consent stands in for payment: confirming a checkout of a free plan starts
// the subscription at once, "paid" by a zero-cost invoice, but a plan with a price waits for the
// operator (`billing approve`, or BILLING_LOCAL_AUTO_APPROVE on a single-tenant install), else any
// tenant's key could grant itself a paid plan, its credits and `plus_employee`. Each period end
// renews a subscription with another zero-cost invoice (or ends it, when it was canceled). Its
// objects live in the store, as Stripe's live in Stripe, and are shaped like the port's.
import { randomBytes } from 'node:crypto'
import { appError } from '../errors.js'
import { nextVersion } from '../ids.js'
import type { Store } from '../store/client.js'
import type { Plan } from './plans.js'
import type {
  BillingProvider,
  ProviderCheckout,
  ProviderCustomer,
  ProviderInvoice,
  ProviderSubscription,
} from './provider.js'

/** Open checkouts and portal sessions stop working after this long. */
const sessionTtlMs = 24 * 60 * 60_000

interface LocalCheckout {
  id: string
  organizationId: string
  planId: string
  planName: string
  priceId: string
  successUrl: string
  cancelUrl: string
  customerId?: string | undefined
  /** `pending_approval`: confirmed by the customer, waiting for the operator (a plan with a price). */
  status: 'open' | 'pending_approval' | 'complete'
  subscriptionId?: string | undefined
  /** A plan change of this running subscription (POST /payment/subscription-update), not a new one. */
  changeOf?: string | undefined
  /** When the customer confirmed it (or asked for the change): the operator's list shows it. */
  confirmedAt?: string | undefined
  expiresAt: string
}

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

export interface LocalProviderOptions {
  /**
   * BILLING_LOCAL_AUTO_APPROVE: a single-tenant install, whose only tenant is its operator, so a
   * confirmed checkout of a paid plan applies at once.
   */
  autoApprove?: boolean | undefined
}

interface LocalSubscription extends ProviderSubscription {
  interval: Plan['interval']
  /** Paid periods so far: each is one invoice. */
  invoices: ProviderInvoice[]
}

interface LocalPortal {
  id: string
  organizationId: string
  customerId: string
  returnUrl: string
  expiresAt: string
}

type LocalObject =
  | { kind: 'checkout'; data: LocalCheckout }
  | { kind: 'subscription'; data: LocalSubscription }
  | { kind: 'portal'; data: LocalPortal }

/** The local provider, and what only it has: its pages' actions and the period-end renewals. */
export interface LocalBillingProvider extends BillingProvider {
  readonly kind: 'local'
  /** The checkout page's session; undefined when unknown or expired. */
  checkoutSession(id: string): Promise<LocalCheckout | undefined>
  /**
   * The page's confirm button: starts the subscription of a free plan (one invoice paid), or marks
   * a paid plan's checkout `pending_approval` (unless auto-approved), and answers the URL to send
   * the browser to (`successUrl`, `{CHECKOUT_SESSION_ID}` replaced). Confirming twice is one
   * subscription.
   */
  confirmCheckout(id: string, plans: readonly Plan[]): Promise<string>
  /** Whether confirming a checkout of the plan waits for the operator. */
  needsApproval(plan: Plan): boolean
  /**
   * The operator's approval (`billing approve`): a pending checkout starts its subscription; a
   * pending plan change moves the subscription to its plan. Approving twice changes nothing more.
   * An unknown id is `checkout_not_found`; a checkout the customer has not confirmed yet,
   * `checkout_incomplete`. Answers the subscription as it now is.
   */
  approve(id: string, plans: readonly Plan[]): Promise<ProviderSubscription>
  /**
   * A plan change that waits for the operator: recorded as a pending session (its id is what the
   * operator approves); the subscription is not changed until then.
   */
  requestPlanChange(subscriptionId: string, plan: Plan): Promise<{ id: string }>
  /** The checkouts and plan changes waiting for the operator, oldest first. */
  listPendingApprovals(): Promise<PendingApproval[]>
  portalSession(id: string): Promise<LocalPortal | undefined>
  /** Subscriptions whose period ended by `now`: renewed (a new invoice) or, when canceled, ended. */
  renewDue(now: Date): Promise<ProviderSubscription[]>
  /** Every invoice of the subscription, oldest first. */
  listInvoices(subscriptionId: string): Promise<ProviderInvoice[]>
}

const token = (prefix: string) => `${prefix}_${randomBytes(18).toString('hex')}`

/** The end of a period of `interval` started at `from`. */
function periodEnd(from: Date, interval: Plan['interval']): Date {
  const end = new Date(from)
  if (interval === 'year') end.setUTCFullYear(end.getUTCFullYear() + 1)
  else end.setUTCMonth(end.getUTCMonth() + 1)
  return end
}

/**
 * @param publicUrl where this server is reached by browsers (the pages' links)
 * @example const provider = createLocalProvider(store, 'https://id.example.com', { autoApprove: false })
 */
export function createLocalProvider(
  store: Store,
  publicUrl: string,
  options: LocalProviderOptions = {},
): LocalBillingProvider {
  const base = publicUrl.replace(/\/+$/, '')
  const needsApproval = (plan: Plan) => plan.amount > 0 && !options.autoApprove

  async function read<K extends LocalObject['kind']>(
    kind: K,
    id: string,
  ): Promise<Extract<LocalObject, { kind: K }>['data'] | undefined> {
    const [row] = await store.query<{ data: string }>(
      'SELECT data FROM billing_local_objects FINAL WHERE id = {id:String} AND kind = {kind:String}',
      { id, kind },
    )
    return row ? JSON.parse(row.data) : undefined
  }

  async function write(object: LocalObject, organizationId: string): Promise<void> {
    await store.insert('billing_local_objects', [
      {
        id: object.data.id,
        kind: object.kind,
        organization_id: organizationId,
        data: JSON.stringify(object.data),
        created_at: new Date().toISOString(),
        version: nextVersion(),
      },
    ])
  }

  const live = <T extends { expiresAt: string }>(session: T | undefined) =>
    session && Date.parse(session.expiresAt) > Date.now() ? session : undefined

  const publicOf = ({
    interval: _,
    invoices: __,
    ...subscription
  }: LocalSubscription): ProviderSubscription => subscription

  async function subscription(id: string): Promise<LocalSubscription> {
    const found = await read('subscription', id)
    if (!found) throw appError('subscription_not_found')
    return found
  }

  function invoice(sub: LocalSubscription, reason: string): ProviderInvoice {
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
  async function startSubscription(checkout: LocalCheckout, plan: Plan): Promise<LocalSubscription> {
    const now = new Date()
    const sub: LocalSubscription = {
      id: token('sub_local'),
      customerId: checkout.customerId ?? token('cus_local'),
      organizationId: checkout.organizationId,
      priceId: plan.priceId,
      status: 'active',
      currentPeriodEnd: periodEnd(now, plan.interval).toISOString(),
      cancelAtPeriodEnd: false,
      interval: plan.interval,
      invoices: [],
    }
    sub.invoices.push(invoice(sub, 'subscription_create'))
    // The subscription first: a crash between the two leaves the checkout as it was, done again.
    await write({ kind: 'subscription', data: sub }, sub.organizationId)
    await write(
      { kind: 'checkout', data: { ...checkout, status: 'complete', subscriptionId: sub.id } },
      checkout.organizationId,
    )
    return sub
  }

  async function changeTo(sub: LocalSubscription, plan: Plan): Promise<LocalSubscription> {
    const changed = { ...sub, priceId: plan.priceId, interval: plan.interval, cancelAtPeriodEnd: false }
    await write({ kind: 'subscription', data: changed }, sub.organizationId)
    return changed
  }

  return {
    kind: 'local',

    async createCheckout(input) {
      const checkout: LocalCheckout = {
        id: token('cs_local'),
        organizationId: input.organizationId,
        planId: input.plan.id,
        planName: input.plan.name,
        priceId: input.plan.priceId,
        successUrl: input.successUrl,
        cancelUrl: input.cancelUrl,
        customerId: input.customerId,
        status: 'open',
        expiresAt: new Date(Date.now() + sessionTtlMs).toISOString(),
      }
      await write({ kind: 'checkout', data: checkout }, input.organizationId)
      return { id: checkout.id, url: `${base}/billing/checkout/${checkout.id}` }
    },

    async retrieveCheckout(id): Promise<ProviderCheckout | undefined> {
      const checkout = await read('checkout', id)
      if (!checkout) return undefined
      const sub = checkout.subscriptionId ? await read('subscription', checkout.subscriptionId) : undefined
      return {
        id,
        organizationId: checkout.organizationId,
        complete: checkout.status === 'complete',
        pendingApproval: checkout.status === 'pending_approval',
        subscription: sub ? publicOf(sub) : undefined,
      }
    },

    checkoutSession: async (id) => live(await read('checkout', id)),

    async confirmCheckout(id, plans) {
      const checkout = live(await read('checkout', id))
      if (!checkout) throw appError('checkout_not_found')
      const plan = plans.find((p) => p.priceId === checkout.priceId)
      if (!plan) throw appError('unknown_plan')
      if (checkout.status === 'open') {
        if (needsApproval(plan)) {
          const pending = {
            ...checkout,
            status: 'pending_approval' as const,
            confirmedAt: new Date().toISOString(),
          }
          await write({ kind: 'checkout', data: pending }, checkout.organizationId)
        } else await startSubscription(checkout, plan)
      }
      return checkout.successUrl.replaceAll('{CHECKOUT_SESSION_ID}', encodeURIComponent(id))
    },

    needsApproval,

    async approve(id, plans) {
      // The operator may take longer than a session lasts: approval does not look at its expiry.
      const checkout = await read('checkout', id)
      if (!checkout) throw appError('checkout_not_found')
      if (checkout.status === 'open') {
        throw appError('checkout_incomplete', 'The customer has not confirmed this checkout on its page yet')
      }
      if (checkout.status === 'complete') return publicOf(await subscription(checkout.subscriptionId ?? ''))
      const plan = plans.find((p) => p.priceId === checkout.priceId)
      if (!plan) throw appError('unknown_plan')
      if (!checkout.changeOf) return publicOf(await startSubscription(checkout, plan))
      const changed = await changeTo(await subscription(checkout.changeOf), plan)
      await write(
        { kind: 'checkout', data: { ...checkout, status: 'complete', subscriptionId: changed.id } },
        checkout.organizationId,
      )
      return publicOf(changed)
    },

    async requestPlanChange(subscriptionId, plan) {
      const sub = await subscription(subscriptionId)
      const now = new Date()
      const change: LocalCheckout = {
        id: token('cs_local'),
        organizationId: sub.organizationId,
        planId: plan.id,
        planName: plan.name,
        priceId: plan.priceId,
        successUrl: `${base}/billing/done`,
        cancelUrl: `${base}/billing/done`,
        customerId: sub.customerId,
        status: 'pending_approval',
        changeOf: sub.id,
        confirmedAt: now.toISOString(),
        expiresAt: new Date(now.getTime() + sessionTtlMs).toISOString(),
      }
      await write({ kind: 'checkout', data: change }, sub.organizationId)
      return { id: change.id }
    },

    async listPendingApprovals() {
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
    },

    async retrieveSubscription(id) {
      const found = await read('subscription', id)
      return found ? publicOf(found) : undefined
    },

    async changePlan(id, plan) {
      return publicOf(await changeTo(await subscription(id), plan))
    },

    async cancelAtPeriodEnd(id) {
      const sub = await subscription(id)
      const changed = { ...sub, cancelAtPeriodEnd: true }
      await write({ kind: 'subscription', data: changed }, sub.organizationId)
      return publicOf(changed)
    },

    async createPortal(input) {
      const portal: LocalPortal = {
        id: token('bps_local'),
        organizationId: input.organizationId,
        customerId: input.customerId,
        returnUrl: input.returnUrl,
        expiresAt: new Date(Date.now() + sessionTtlMs).toISOString(),
      }
      await write({ kind: 'portal', data: portal }, input.organizationId)
      return { url: `${base}/billing/portal/${portal.id}` }
    },

    portalSession: async (id) => live(await read('portal', id)),

    async retrieveCustomer(id): Promise<ProviderCustomer | undefined> {
      const [row] = await store.query<{ n: number }>(
        `SELECT count() AS n FROM billing_local_objects FINAL
         WHERE kind = 'subscription' AND JSONExtractString(data, 'customerId') = {id:String}`,
        { id },
      )
      // No card and no address: nothing is charged.
      return Number(row?.n ?? 0) > 0 ? { id, email: null, address: null, defaultCardLast4: null } : undefined
    },

    async renewDue(now) {
      const due = await store.query<{ data: string }>(
        `SELECT data FROM billing_local_objects FINAL
         WHERE kind = 'subscription'
           AND JSONExtractString(data, 'status') IN ('active', 'trialing', 'past_due')
           AND parseDateTime64BestEffort(JSONExtractString(data, 'currentPeriodEnd'), 3) <= {now:DateTime64(3)}`,
        { now: now.toISOString().replace('T', ' ').replace('Z', '') },
      )
      const changed: ProviderSubscription[] = []
      for (const { data } of due) {
        const sub = JSON.parse(data) as LocalSubscription
        let next: LocalSubscription
        if (sub.cancelAtPeriodEnd) next = { ...sub, status: 'canceled' }
        else {
          // Every period missed is one renewal (a server stopped for two months renews twice).
          next = { ...sub, invoices: [...sub.invoices] }
          while (Date.parse(next.currentPeriodEnd) <= now.getTime()) {
            next.currentPeriodEnd = periodEnd(new Date(next.currentPeriodEnd), next.interval).toISOString()
            next.invoices.push(invoice(next, 'subscription_cycle'))
          }
        }
        await write({ kind: 'subscription', data: next }, next.organizationId)
        changed.push(publicOf(next))
      }
      return changed
    },

    async listInvoices(id) {
      return (await read('subscription', id))?.invoices ?? []
    },
  }
}
