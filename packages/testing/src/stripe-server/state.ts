// What the fake Stripe keeps between requests: its objects by id, in the fields Stripe's objects are
// made of, and the requests it received. Every resource module reads and changes this one state.
import { randomBytes } from 'node:crypto'
import type Stripe from 'stripe'

/** A request the server received, its form body (or query) read into nested objects. */
export interface StripeServerRequest {
  method: string
  path: string
  query: Record<string, unknown>
  body: Record<string, unknown>
  /** The `Stripe-Version` header: the adapter's pinned version. */
  apiVersion: string | undefined
}

export interface SessionState {
  id: string
  created: number
  mode: string
  price: string
  quantity: number
  clientReferenceId: string | null
  metadata: Record<string, string>
  subscriptionMetadata: Record<string, string>
  successUrl: string
  cancelUrl: string | null
  customer: string | null
  status: 'open' | 'complete'
  paymentStatus: 'unpaid' | 'paid'
  subscription: string | null
}

export interface SubscriptionState {
  id: string
  created: number
  customer: string
  metadata: Record<string, string>
  itemId: string
  price: string
  status: Stripe.Subscription.Status
  periodStart: number
  periodEnd: number
  cancelAtPeriodEnd: boolean
  canceledAt: number | null
  endedAt: number | null
  defaultPaymentMethod: string | null
}

export interface CustomerState {
  id: string
  created: number
  email: string | null
  address: Stripe.Address | null
  defaultPaymentMethod: string | null
  deleted: boolean
}

export interface PaymentMethodState {
  id: string
  created: number
  customer: string
  last4: string
}

export interface StripeState {
  requests: StripeServerRequest[]
  sessions: Map<string, SessionState>
  subscriptions: Map<string, SubscriptionState>
  customers: Map<string, CustomerState>
  paymentMethods: Map<string, PaymentMethodState>
}

export function createStripeState(): StripeState {
  return {
    requests: [],
    sessions: new Map(),
    subscriptions: new Map(),
    customers: new Map(),
    paymentMethods: new Map(),
  }
}

/**
 * A fragment of a Stripe object: any field it has must exist, with its type, in the pinned API
 * version's typings; so a field that moved (as `current_period_end` did) fails the build here.
 */
export type Shape<T> = T extends readonly (infer U)[]
  ? Shape<U>[]
  : T extends object
    ? { [K in keyof T]?: Shape<T[K]> }
    : T

/** An id as Stripe writes them: its object's prefix, then random characters. */
export const newId = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`

/** Stripe's timestamps are Unix seconds. */
export const now = () => Math.floor(Date.now() / 1000)
