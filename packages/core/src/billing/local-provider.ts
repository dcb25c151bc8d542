// The `local` billing provider (docs/decisions.md, "Billing"): for self-hosters who do not charge. Checkout
// and the customer portal are pages of this server (packages/server, billing-pages.ts). Nobody pays
// here, so the operator's consent stands in for payment: confirming a checkout of a free plan starts
// the subscription at once, "paid" by a zero-cost invoice, but a plan with a price waits for the
// operator (`billing approve`, or BILLING_LOCAL_AUTO_APPROVE on a single-tenant install), else any
// tenant's key could grant itself a paid plan, its credits and `plus_employee`. Each period end
// renews a subscription with another zero-cost invoice (or ends it, when it was canceled). Its
// objects live in the store, as Stripe's live in Stripe, and are shaped like the port's.
import type { Store } from '../store/client.js'
import {
  approveLocalCheckout,
  confirmLocalCheckout,
  createLocalCheckout,
  listPendingApprovals,
  type PendingApproval,
  requestLocalPlanChange,
  retrieveLocalCheckout,
} from './local-checkouts.js'
import {
  asProviderSubscription,
  type LocalCheckout,
  type LocalPortal,
  type LocalProviderContext,
  newObjectId,
  readObject,
  sessionExpiry,
  unexpired,
  writeObject,
} from './local-objects.js'
import {
  cancelSubscriptionAtPeriodEnd,
  changeSubscriptionPlan,
  renewDueSubscriptions,
  requireSubscription,
  retrieveLocalCustomer,
} from './local-subscriptions.js'
import type { Plan } from './plans.js'
import type { BillingProvider, ProviderInvoice, ProviderSubscription } from './provider.js'

export type { PendingApproval } from './local-checkouts.js'

export interface LocalProviderOptions {
  /**
   * BILLING_LOCAL_AUTO_APPROVE: a single-tenant install, whose only tenant is its operator, so a
   * confirmed checkout of a paid plan applies at once.
   */
  autoApprove?: boolean | undefined
}

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

/** A portal session: the page where the customer sees its subscription and invoices. */
async function createPortalSession(
  context: LocalProviderContext,
  input: Parameters<BillingProvider['createPortal']>[0],
): Promise<{ url: string }> {
  const portal: LocalPortal = {
    id: newObjectId('bps_local'),
    organizationId: input.organizationId,
    customerId: input.customerId,
    returnUrl: input.returnUrl,
    expiresAt: sessionExpiry(),
  }
  await writeObject(context.store, { kind: 'portal', data: portal }, input.organizationId)
  return { url: `${context.base}/billing/portal/${portal.id}` }
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
  const needsApproval = (plan: Plan) => plan.amount > 0 && !options.autoApprove
  const context: LocalProviderContext = { store, base: publicUrl.replace(/\/+$/, ''), needsApproval }
  return {
    kind: 'local',
    createCheckout: (input) => createLocalCheckout(context, input),
    retrieveCheckout: (id) => retrieveLocalCheckout(store, id),
    checkoutSession: async (id) => unexpired(await readObject(store, 'checkout', id)),
    confirmCheckout: (id, plans) => confirmLocalCheckout(context, id, plans),
    needsApproval,
    approve: (id, plans) => approveLocalCheckout(store, id, plans),
    requestPlanChange: (subscriptionId, plan) => requestLocalPlanChange(context, subscriptionId, plan),
    listPendingApprovals: () => listPendingApprovals(store),
    async retrieveSubscription(id) {
      const found = await readObject(store, 'subscription', id)
      return found ? asProviderSubscription(found) : undefined
    },
    changePlan: async (id, plan) =>
      asProviderSubscription(await changeSubscriptionPlan(store, await requireSubscription(store, id), plan)),
    cancelAtPeriodEnd: (id) => cancelSubscriptionAtPeriodEnd(store, id),
    createPortal: (input) => createPortalSession(context, input),
    portalSession: async (id) => unexpired(await readObject(store, 'portal', id)),
    retrieveCustomer: (id) => retrieveLocalCustomer(store, id),
    renewDue: (now) => renewDueSubscriptions(store, now),
    listInvoices: async (id) => (await readObject(store, 'subscription', id))?.invoices ?? [],
  }
}
