// The `local` billing provider's objects (checkouts, subscriptions, portal sessions) and how they are
// kept: one row each in `billing_local_objects`, the object as JSON, a newer version replacing the
// older. Shaped like the provider port's, as Stripe's are in Stripe.
import { randomBytes } from 'node:crypto'
import { nextVersion } from '../ids.js'
import type { Store } from '../store/client.js'
import type { Plan } from './plans.js'
import type { ProviderInvoice, ProviderSubscription } from './provider.js'

/** Open checkouts and portal sessions stop working after this long. */
export const sessionTtlMs = 24 * 60 * 60_000

export interface LocalCheckout {
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

export interface LocalSubscription extends ProviderSubscription {
  interval: Plan['interval']
  /** Paid periods so far: each is one invoice. */
  invoices: ProviderInvoice[]
}

export interface LocalPortal {
  id: string
  organizationId: string
  customerId: string
  returnUrl: string
  expiresAt: string
}

export type LocalObject =
  | { kind: 'checkout'; data: LocalCheckout }
  | { kind: 'subscription'; data: LocalSubscription }
  | { kind: 'portal'; data: LocalPortal }

/** What every operation of the local provider works with. */
export interface LocalProviderContext {
  store: Store
  /** Where browsers reach this server, without a trailing slash: the pages' links start with it. */
  base: string
  /** Whether confirming a checkout of the plan waits for the operator. */
  needsApproval(plan: Plan): boolean
}

/** A new object id: the prefix, then 36 random hex digits (`cs_local_...`). */
export const newObjectId = (prefix: string) => `${prefix}_${randomBytes(18).toString('hex')}`

/** The end of a period of `interval` started at `from`. */
export function periodEnd(from: Date, interval: Plan['interval']): Date {
  const end = new Date(from)
  if (interval === 'year') end.setUTCFullYear(end.getUTCFullYear() + 1)
  else end.setUTCMonth(end.getUTCMonth() + 1)
  return end
}

/** When a session opened now stops working. */
export const sessionExpiry = (from = Date.now()) => new Date(from + sessionTtlMs).toISOString()

/** The stored object of that kind and id; undefined when there is none. */
export async function readObject<K extends LocalObject['kind']>(
  store: Store,
  kind: K,
  id: string,
): Promise<Extract<LocalObject, { kind: K }>['data'] | undefined> {
  const [row] = await store.query<{ data: string }>(
    'SELECT data FROM billing_local_objects FINAL WHERE id = {id:String} AND kind = {kind:String}',
    { id, kind },
  )
  return row ? JSON.parse(row.data) : undefined
}

/** Stores the object, replacing the one with its id. */
export async function writeObject(store: Store, object: LocalObject, organizationId: string): Promise<void> {
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

/** The session while it has not expired; undefined after. */
export const unexpired = <T extends { expiresAt: string }>(session: T | undefined) =>
  session && Date.parse(session.expiresAt) > Date.now() ? session : undefined

/** The subscription as the port reports it: without the fields only the local provider keeps. */
export const asProviderSubscription = ({
  interval: _,
  invoices: __,
  ...subscription
}: LocalSubscription): ProviderSubscription => subscription
