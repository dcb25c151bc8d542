// The public face of core's billing domain: what other packages import as @visitor-id/core/billing.
export { applyInvoice, applySubscription } from './apply.js'
export { approveCheckout, pendingApprovals } from './approval.js'
export { type BillingEventType, type BillingPayload, isBillingEvent } from './billing-events.js'
export {
  createLocalProvider,
  type LocalBillingProvider,
  type LocalProviderOptions,
  type PendingApproval,
} from './local-provider.js'
export {
  type CustomerInfo,
  cancelSubscription,
  customerInfo,
  customerPortal,
  presentSubscription,
  processCheckout,
  startCheckout,
  updateSubscriptionPlan,
} from './operations.js'
export {
  defaultPlans,
  isB2bPlan,
  loadPlans,
  type Plan,
  planByPrice,
  planPriceLabel,
} from './plans.js'
export type {
  BillingProvider,
  PostalAddress,
  ProviderCheckout,
  ProviderCustomer,
  ProviderInvoice,
  ProviderSubscription,
  ProviderWebhookEvent,
  ProviderWebhookFact,
  SubscriptionStatus,
} from './provider.js'
export { billingSweep, handleProviderWebhook } from './provider-sync.js'
export { createStripeProvider, type StripeProviderOptions } from './stripe-provider.js'
export { type BillingDeps, planOf, readSubscription, type SubscriptionRow } from './subscriptions.js'
