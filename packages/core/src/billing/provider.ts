// The billing provider port (docs/decisions.md, "Billing"): what the billing service asks of a payment
// provider, whatever it is. Two adapters: `local` (this server's own pages, for self-hosters who do
// not charge) and `stripe` (the official SDK). The provider is the source of truth for a
// subscription; the service keeps a copy per organization and acts on the differences.
import type { Plan } from './plans.js'

/** Subscription statuses, Stripe's (an `incomplete_expired` or `unpaid` one is reported as the nearest of these). */
export const subscriptionStatuses = ['active', 'trialing', 'past_due', 'canceled', 'incomplete'] as const
export type SubscriptionStatus = (typeof subscriptionStatuses)[number]

/** A subscription as the provider reports it now. */
export interface ProviderSubscription {
  id: string
  customerId: string
  /** From the checkout (Stripe: `client_reference_id`, copied to the subscription's metadata). */
  organizationId: string
  /** The price of its (single) item. */
  priceId: string
  status: SubscriptionStatus
  /** ISO 8601. */
  currentPeriodEnd: string
  cancelAtPeriodEnd: boolean
}

/** A paid (or failed) invoice of a subscription. */
export interface ProviderInvoice {
  id: string
  subscriptionId: string
  customerId: string
  /** The subscription price it bills, when the provider says. */
  priceId?: string | undefined
  /** In the currency's minor unit (cents). */
  amount: number
  /** ISO 4217, lowercase as Stripe gives it. */
  currency: string
  /** The end of the period it pays for, ISO 8601. */
  periodEnd?: string | undefined
  /** The provider's hosted invoice page. */
  url?: string | undefined
  /** Why it was made: `subscription_create` (the first), `subscription_cycle` (a renewal), `subscription_update`... */
  reason: string
}

/** A checkout session looked up by its id. */
export interface ProviderCheckout {
  id: string
  organizationId: string
  /** Stripe: `status === 'complete'` and `payment_status` paid (or no payment required). */
  complete: boolean
  /** The local provider: confirmed by the customer, waiting for the operator's approval. */
  pendingApproval?: boolean | undefined
  /** The subscription it created, once complete. */
  subscription?: ProviderSubscription | undefined
}

export interface PostalAddress {
  line1: string | null
  line2: string | null
  city: string | null
  state: string | null
  postalCode: string | null
  country: string | null
}

export interface ProviderCustomer {
  id: string
  email: string | null
  address: PostalAddress | null
  /** The last 4 digits of the customer's default card, if it has one. */
  defaultCardLast4: string | null
}

/**
 * What a provider's webhook tells, once verified: facts the service acts on by asking the provider
 * again (subscriptions) or as they are (invoices, which do not change once paid or failed).
 */
export type ProviderWebhookFact =
  | { kind: 'checkout.completed'; sessionId: string }
  | { kind: 'subscription.changed'; subscriptionId: string }
  | { kind: 'invoice.paid'; invoice: ProviderInvoice }
  | { kind: 'invoice.payment_failed'; invoice: ProviderInvoice }

export interface ProviderWebhookEvent {
  /** The provider's event id: the same event delivered twice is acted on once. */
  id: string
  /** The provider's event type, for the logs. */
  type: string
  /** Undefined for event types the service does not act on. */
  fact?: ProviderWebhookFact | undefined
}

export interface BillingProvider {
  readonly kind: 'local' | 'stripe'
  /** A hosted checkout for a subscription to the plan; `successUrl` may hold `{CHECKOUT_SESSION_ID}`. */
  createCheckout(input: {
    organizationId: string
    plan: Plan
    successUrl: string
    cancelUrl: string
    /** The organization's customer, when it had a subscription before. */
    customerId?: string | undefined
  }): Promise<{ id: string; url: string }>
  /** Undefined when the provider knows no such session. */
  retrieveCheckout(sessionId: string): Promise<ProviderCheckout | undefined>
  retrieveSubscription(subscriptionId: string): Promise<ProviderSubscription | undefined>
  /** Moves the subscription to the plan's price now, prorated. */
  changePlan(subscriptionId: string, plan: Plan): Promise<ProviderSubscription>
  /** Cancels at the end of the period already paid. */
  cancelAtPeriodEnd(subscriptionId: string): Promise<ProviderSubscription>
  /** A hosted page where the customer manages the subscription; `returnUrl` is where it sends them back. */
  createPortal(input: {
    customerId: string
    organizationId: string
    returnUrl: string
  }): Promise<{ url: string }>
  retrieveCustomer(customerId: string): Promise<ProviderCustomer | undefined>
  /**
   * Verifies a webhook request of the provider (the raw body, its signature header) and reads it.
   * Throws `invalid_request` (400) when it does not verify. The local provider has no webhooks.
   */
  readWebhook?(rawBody: Buffer, signature: string): ProviderWebhookEvent
}
