// The provider's side of billing (docs/decisions.md, "Billing"): its webhooks, acted on once per
// event, and the periodic sweep (the local provider's renewals, the end of B2B time after leaving
// the plan).
import { appError } from '../errors.js'
import { applyInvoice, applyLocalInvoices, applySubscription } from './apply.js'
import { isB2bPlan } from './plans.js'
import type { ProviderSubscription, ProviderWebhookEvent } from './provider.js'
import {
  type BillingDeps,
  holding,
  readSubscription,
  withBillingLock,
  writeSubscription,
} from './subscriptions.js'

const toDateTime = (iso: string) => iso.replace('T', ' ').replace('Z', '')

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
