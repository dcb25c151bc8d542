// The billing service of a process, built from the configuration (BILLING_PROVIDER, PLANS_FILE,
// BILLING_LOCAL_AUTO_APPROVE, STRIPE_*): the API routes, the server's billing pages and the worker's sweep each build one; they
// hold nothing in memory, so any number of them agree.
import type { Config } from '../config.js'
import type { Coordination } from '../coordination/ports.js'
import type { Store } from '../store/client.js'
import type { Repositories } from '../store/entities.js'
import type { BillingDeps } from './billing.js'
import { createLocalProvider } from './local-provider.js'
import { createStripeProvider } from './stripe-provider.js'

/** The provider BILLING_PROVIDER names (Stripe's address from STRIPE_API_URL, when set). */
export function billingDeps(deps: {
  config: Config
  store: Store
  repos: Repositories
  coordination: Coordination
}): BillingDeps {
  const { config } = deps
  const publicUrl = config.publicUrl ?? `http://localhost:${config.port}`
  const { stripe } = config.billing
  const apiUrl = stripe.apiUrl ? new URL(stripe.apiUrl) : undefined
  const provider =
    config.billing.provider === 'stripe'
      ? createStripeProvider({
          secretKey: stripe.secretKey ?? '',
          webhookSecret: stripe.webhookSecret,
          ...(apiUrl
            ? {
                host: apiUrl.hostname,
                port: Number(apiUrl.port || (apiUrl.protocol === 'https:' ? 443 : 80)),
                protocol: apiUrl.protocol === 'https:' ? 'https' : 'http',
              }
            : {}),
        })
      : createLocalProvider(deps.store, publicUrl, { autoApprove: config.billing.localAutoApprove })
  return {
    store: deps.store,
    repos: deps.repos,
    locks: deps.coordination.locks,
    provider,
    plans: config.billing.plans,
    publicUrl,
  }
}
