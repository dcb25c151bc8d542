// The operator's consent to a paid plan with the `local` provider (docs/decisions.md, "Billing": no tenant
// obtains a paid plan, credits or `plus_employee` without paying or the operator's consent). A
// checkout of a plan with a price, once confirmed on its page, and an upgrade of a running
// subscription wait as pending sessions until the operator approves them (`billing approve`, which
// calls `approveCheckout`); with Stripe, paying is the consent and nothing waits.
import { appError } from '../errors.js'
import type { LocalBillingProvider, PendingApproval } from './local-provider.js'
import { processCheckout } from './operations.js'
import { type BillingDeps, withBillingLock } from './subscriptions.js'

function localProviderOf(deps: BillingDeps): LocalBillingProvider {
  if (deps.provider.kind !== 'local') {
    throw appError(
      'invalid_request',
      'Only checkouts of the local billing provider wait for approval (BILLING_PROVIDER=stripe: paying is the consent)',
    )
  }
  return deps.provider as LocalBillingProvider
}

/**
 * Approves a pending checkout or plan change and applies it at once, as processing it would: the
 * subscription starts (or changes plan), a B2B plan makes the organization `plus_employee`, and the
 * first period grants the plan's credits. Approving again changes nothing more.
 * @example await approveCheckout(billing, 'cs_local_0123...') // { organizationId, subscription, ... }
 */
export async function approveCheckout(deps: BillingDeps, sessionId: string) {
  const local = localProviderOf(deps)
  const checkout = await local.retrieveCheckout(sessionId)
  if (!checkout) throw appError('checkout_not_found')
  // Two approvals of one session at once would start two subscriptions: they take turns.
  await withBillingLock(deps, checkout.organizationId, () => local.approve(sessionId, deps.plans))
  return processCheckout(deps, sessionId)
}

/** The checkouts and plan changes waiting for the operator, oldest first. */
export async function pendingApprovals(deps: BillingDeps): Promise<PendingApproval[]> {
  return localProviderOf(deps).listPendingApprovals()
}
