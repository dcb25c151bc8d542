// Spec section "Payments": plans, checkout, its processing, plan changes, cancelation, the customer's
// details and portal (docs/decisions.md, "Billing"). The work is core's (billing/operations.ts) over the
// provider BILLING_PROVIDER names; these routes shape it.
import {
  cancelSubscription,
  customerInfo,
  customerPortal,
  type Plan,
  planPriceLabel,
  processCheckout,
  startCheckout,
  updateSubscriptionPlan,
} from '@visitor-id/core/billing'
import { z } from 'zod'
import { defineRoute, type Route } from '../route-definition.js'
import { httpUrl, organizationIdField, timestamp } from '../schemas/common.js'
import { addressed } from './context.js'

const priceIdField = z
  .string()
  .min(1)
  .max(200)
  .describe("The plan's `priceId` (GET /payment/subscription-plans)")
const productIdField = z.string().min(1).max(200).describe("The plan's `productId`; must be the same plan's")
const statusSchema = z.enum(['active', 'trialing', 'past_due', 'canceled', 'incomplete'])
const productTypeSchema = z.enum(['standard', 'plus_employee'])

const planSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    productId: z.string(),
    priceId: z.string(),
    productType: productTypeSchema.describe(
      '`plus_employee`: the B2B product (phone search, auto enrichment)',
    ),
    credits: z.number().int().describe('Identification credits granted for each paid period'),
    pricing: z.object({
      amount: z.number().int().describe("In the currency's minor unit (cents)"),
      currency: z.string().describe('ISO 4217, lowercase'),
      interval: z.enum(['month', 'year']),
      display: z.string().describe('For people, e.g. "$199.00 / month"'),
    }),
    features: z.array(z.string()),
  })
  .describe('SubscriptionPlan')

const subscriptionSchema = z
  .object({
    id: z.string().describe("The provider's subscription id"),
    status: statusSchema,
    planId: z.string().nullable(),
    productId: z.string().nullable(),
    priceId: z.string(),
    productType: productTypeSchema,
    credits: z.number().int(),
    currentPeriodEnd: timestamp,
    cancelAtPeriodEnd: z.boolean(),
  })
  .describe('Subscription')

const addressSchema = z
  .object({
    line1: z.string().nullable(),
    line2: z.string().nullable(),
    city: z.string().nullable(),
    state: z.string().nullable(),
    postalCode: z.string().nullable(),
    country: z.string().nullable(),
  })
  .describe('PostalAddress')

const customerSchema = z
  .object({
    customerId: z.string().nullable().describe("The provider's customer; null before the first checkout"),
    email: z.string().nullable(),
    address: addressSchema.nullable(),
    defaultCardLast4: z.string().nullable(),
    activeProductId: z.string().nullable().describe('The product of the subscription while it runs'),
    activePriceId: z.string().nullable(),
    planId: z.string().nullable(),
    status: statusSchema
      .nullable()
      .describe("Stripe's statuses; null when the organization never subscribed"),
    currentPeriodEnd: timestamp.nullable(),
    cancelAtPeriodEnd: z.boolean(),
  })
  .describe('CustomerInfo')

const urlSchema = z.object({ url: z.string() })
const organizationBody = z.strictObject({ organizationId: organizationIdField })
const planBody = z.strictObject({
  organizationId: organizationIdField,
  priceId: priceIdField,
  productId: productIdField,
})

function presentPlan(plan: Plan): z.input<typeof planSchema> {
  return {
    id: plan.id,
    name: plan.name,
    description: plan.description,
    productId: plan.productId,
    priceId: plan.priceId,
    productType: plan.productType,
    credits: plan.credits,
    pricing: {
      amount: plan.amount,
      currency: plan.currency,
      interval: plan.interval,
      display: planPriceLabel(plan),
    },
    features: plan.features,
  }
}

const b2b = { priceId: 'price_b2b_monthly', productId: 'prod_b2b' }
/** The update's example moves down to the standard plan: an upgrade may wait for the operator (`local`). */
const standard = { priceId: 'price_standard_monthly', productId: 'prod_standard' }

/** Spec section "Payments". */
export const paymentRoutes: Route[] = [
  defineRoute({
    operationId: 'listSubscriptionPlans',
    method: 'GET',
    path: '/payment/subscription-plans',
    auth: 'organization',
    scope: 'read',
    tenancy: 'organization-query',
    tag: 'Payments',
    summary: 'The subscription plans',
    description:
      'From `PLANS_FILE`, else the built-in two (a standard plan and a B2B one). A B2B plan ' +
      '(`productType: plus_employee`) makes the organization `plus_employee` while it runs.',
    query: z.object({ organizationId: organizationIdField }),
    response: { status: 200, description: 'The plans', schema: z.array(planSchema) },
    errors: [],
    example: (ids) => ({ query: { organizationId: ids.organizationId } }),
    async handler({ services }) {
      return services.billing.plans.map(presentPlan)
    },
  }),
  defineRoute({
    operationId: 'startSubscriptionCheckout',
    method: 'POST',
    path: '/payment/subscription-checkout',
    auth: 'organization',
    scope: 'write',
    tenancy: 'organization-body',
    tag: 'Payments',
    summary: 'A hosted checkout for a plan',
    description:
      'Answers the URL of the checkout page: Stripe Checkout (`BILLING_PROVIDER=stripe`) or this ' +
      "server's own confirmation page (`local`). After paying, the browser goes to `successUrl`, in " +
      'which `{CHECKOUT_SESSION_ID}` is replaced by the session id: pass it as `secret` to ' +
      '`POST /payment/subscription-process`. With `local`, nobody pays, so a plan with a price ' +
      "waits for the operator's approval once confirmed on the page (`npm run cli -- billing approve " +
      '<session id>`; `BILLING_LOCAL_AUTO_APPROVE=1` on a single-tenant install applies it at once); ' +
      'a free plan (`amount` 0) applies at once. `priceId` and `productId` must name the same plan ' +
      '(400 `unknown_plan`); an organization whose subscription runs gets 409 `subscription_active` ' +
      '(change its plan with `POST /payment/subscription-update`).',
    body: z.strictObject({
      organizationId: organizationIdField,
      priceId: priceIdField,
      productId: productIdField,
      successUrl: httpUrl.optional().describe('Default: a page of this server saying it is done'),
      cancelUrl: httpUrl.optional(),
    }),
    response: { status: 200, description: 'The checkout page', schema: urlSchema },
    errors: ['unknown_plan', 'subscription_active', 'billing_provider_error'],
    example: (ids) => ({
      body: {
        organizationId: ids.organizationId,
        ...b2b,
        successUrl: 'https://app.example.com/billing/done?session_id={CHECKOUT_SESSION_ID}',
        cancelUrl: 'https://app.example.com/billing',
      },
    }),
    async handler({ organization, body, services }) {
      const { url } = await startCheckout(services.billing, addressed(organization), body)
      return { url }
    },
  }),
  defineRoute({
    operationId: 'processSubscriptionCheckout',
    method: 'POST',
    path: '/payment/subscription-process',
    auth: 'organization',
    scope: 'write',
    tenancy: 'checkout-query',
    tag: 'Payments',
    summary: 'Complete a checkout',
    description:
      'The `secret` is the checkout session id the success URL carried. Only a complete, paid session ' +
      "counts (409 `checkout_incomplete` before); with `local`, a plan with a price also needs the operator's " +
      'approval (409 `checkout_pending_approval` until `npm run cli -- billing approve <session id>`, ' +
      "which applies it by itself). Processing it again, or after the provider's " +
      'webhook did, changes nothing. The subscription takes effect: a B2B plan makes the organization ' +
      "`plus_employee`, and the paid period grants the plan's credits (once per invoice). A session " +
      'of an organization the key may not address is 404 `checkout_not_found`, like an unknown one.',
    query: z.object({ secret: z.string().min(1).max(200).describe('The checkout session id') }),
    response: {
      status: 200,
      description: 'Confirmation',
      schema: z.object({
        success: z.literal(true),
        organizationId: z.string(),
        subscription: subscriptionSchema,
      }),
    },
    errors: ['checkout_incomplete', 'checkout_pending_approval', 'billing_provider_error'],
    example: (ids) => ({ query: { secret: ids.checkoutSessionId } }),
    async handler({ organization, query, services }) {
      return processCheckout(services.billing, query.secret, addressed(organization).id)
    },
  }),
  defineRoute({
    operationId: 'updateSubscriptionPlan',
    method: 'POST',
    path: '/payment/subscription-update',
    auth: 'organization',
    scope: 'write',
    tenancy: 'organization-body',
    tag: 'Payments',
    summary: "Change the subscription's plan",
    description:
      'Now, prorated (Stripe creates the proration on the next invoice). Moving to a B2B plan makes ' +
      'the organization `plus_employee` at once; leaving one keeps it until the end of the period ' +
      'paid for. No running subscription: 404 `subscription_not_found`. With `local` (unless ' +
      '`BILLING_LOCAL_AUTO_APPROVE=1`), an upgrade to a plan with a price (dearer per year, or B2B ' +
      "from a plan that is not) waits for the operator's approval: the subscription is unchanged " +
      'and the answer is 409 `checkout_pending_approval`, whose message names the session the ' +
      'operator approves (`npm run cli -- billing approve <id>`).',
    body: planBody,
    response: {
      status: 200,
      description: 'Confirmation',
      schema: z.object({ success: z.literal(true), subscription: subscriptionSchema }),
    },
    errors: ['unknown_plan', 'subscription_not_found', 'checkout_pending_approval', 'billing_provider_error'],
    example: (ids) => ({ body: { organizationId: ids.organizationId, ...standard } }),
    async handler({ organization, body, services }) {
      return updateSubscriptionPlan(services.billing, addressed(organization), body)
    },
  }),
  defineRoute({
    operationId: 'cancelSubscription',
    method: 'POST',
    path: '/payment/subscription-cancel',
    auth: 'organization',
    scope: 'write',
    tenancy: 'organization-body',
    tag: 'Payments',
    summary: 'Cancel the subscription at the end of its period',
    description:
      'The subscription runs until the end of the period paid for (`cancelAtPeriodEnd: true` in ' +
      '`GET /payment/customer-info`), then ends. No running subscription: 404 `subscription_not_found`.',
    body: organizationBody,
    response: { status: 200, description: 'Canceled (an empty object)', schema: z.object({}).strict() },
    errors: ['subscription_not_found', 'billing_provider_error'],
    example: (ids) => ({ body: { organizationId: ids.organizationId } }),
    async handler({ organization, services }) {
      await cancelSubscription(services.billing, addressed(organization))
      return {}
    },
  }),
  defineRoute({
    operationId: 'getCustomerInfo',
    method: 'GET',
    path: '/payment/customer-info',
    auth: 'organization',
    scope: 'read',
    tenancy: 'organization-query',
    tag: 'Payments',
    summary: "The organization's billing customer and subscription",
    description:
      'Every field is null (and `cancelAtPeriodEnd` false) for an organization that never ' +
      'subscribed. `defaultCardLast4` and `address` come from the provider (null with `local`, ' +
      "which charges nothing); `email` is the provider's, else the organization owner's.",
    query: z.object({ organizationId: organizationIdField }),
    response: { status: 200, description: 'The customer', schema: customerSchema },
    errors: ['billing_provider_error'],
    example: (ids) => ({ query: { organizationId: ids.organizationId } }),
    async handler({ organization, services }) {
      return customerInfo(services.billing, addressed(organization))
    },
  }),
  defineRoute({
    operationId: 'createCustomerPortal',
    method: 'POST',
    path: '/payment/customer-portal',
    auth: 'organization',
    scope: 'write',
    tenancy: 'organization-body',
    tag: 'Payments',
    summary: 'A customer portal session',
    description:
      "The Stripe Billing Portal, or this server's page (`local`) listing the subscription with a " +
      'cancel button. 404 `subscription_not_found` before the first checkout.',
    body: z.strictObject({
      organizationId: organizationIdField,
      returnUrl: httpUrl.optional().describe('Where the portal sends the customer back'),
    }),
    response: { status: 200, description: 'The portal page', schema: urlSchema },
    errors: ['subscription_not_found', 'billing_provider_error'],
    example: (ids) => ({
      body: { organizationId: ids.organizationId, returnUrl: 'https://app.example.com/billing' },
    }),
    async handler({ organization, body, services }) {
      return customerPortal(services.billing, addressed(organization), body.returnUrl)
    },
  }),
]
