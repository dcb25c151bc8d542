// The `local` billing provider (DESIGN.md, "Billing"): for self-hosters who do not charge. Checkout
// and the customer portal are pages of this server (packages/server, billing-pages.ts); confirming a
// checkout starts a subscription at once, "paid" by a zero-cost invoice, and each period end renews
// it with another (or ends it, when it was canceled). Its objects live in the store, as Stripe's live
// in Stripe, and are shaped like the port's, so the billing service cannot tell the two apart.
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
  status: 'open' | 'complete'
  subscriptionId?: string | undefined
  expiresAt: string
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
   * The page's confirm button: starts the subscription (one invoice paid) and answers the URL to
   * send the browser to (`successUrl`, `{CHECKOUT_SESSION_ID}` replaced). Confirming twice is one
   * subscription.
   */
  confirmCheckout(id: string, plans: readonly Plan[]): Promise<string>
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
 * @example const provider = createLocalProvider(store, 'https://id.example.com')
 */
export function createLocalProvider(store: Store, publicUrl: string): LocalBillingProvider {
  const base = publicUrl.replace(/\/+$/, '')

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
        // The subscription first: a crash between the two leaves an open checkout, confirmed again.
        await write({ kind: 'subscription', data: sub }, sub.organizationId)
        await write(
          { kind: 'checkout', data: { ...checkout, status: 'complete', subscriptionId: sub.id } },
          checkout.organizationId,
        )
      }
      return checkout.successUrl.replaceAll('{CHECKOUT_SESSION_ID}', encodeURIComponent(id))
    },

    async retrieveSubscription(id) {
      const found = await read('subscription', id)
      return found ? publicOf(found) : undefined
    },

    async changePlan(id, plan) {
      const sub = await subscription(id)
      const changed = { ...sub, priceId: plan.priceId, interval: plan.interval, cancelAtPeriodEnd: false }
      await write({ kind: 'subscription', data: changed }, sub.organizationId)
      return publicOf(changed)
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
