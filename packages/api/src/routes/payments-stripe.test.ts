// Payments with BILLING_PROVIDER=stripe, end to end through the real `stripe` SDK against a local
// server that speaks the Stripe endpoints used (packages/testing/src/stripe-server.ts): checkout, process,
// Stripe's webhooks signed with the SDK's test header helper (a duplicated event acted on once,
// events out of order), card and address in customer-info, proration on update, cancel, portal,
// a failed payment, the end of the subscription.
import { creditBalance } from '@visitor-id/core/credits'
import { readEvents } from '@visitor-id/core/events'
import { errorBody, type Harness, startHarness } from '@visitor-id/testing/harness'
import { type StripeServer, startStripeServer } from '@visitor-id/testing/stripe-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

let h: Harness
let stripe: StripeServer
const webhookSecret = 'whsec_test_secret_of_the_local_endpoint'

beforeAll(async () => {
  stripe = await startStripeServer()
  h = await startHarness({
    BILLING_PROVIDER: 'stripe',
    STRIPE_SECRET_KEY: stripe.secretKey,
    STRIPE_WEBHOOK_SECRET: webhookSecret,
    STRIPE_API_URL: `http://${stripe.host}:${stripe.port}`,
  })
})

afterAll(async () => {
  await h?.stop()
  await stripe?.close().catch(() => {})
})

const b2b = { priceId: 'price_b2b_monthly', productId: 'prod_b2b' }
const standard = { priceId: 'price_standard_monthly', productId: 'prod_standard' }
const post = (url: string, payload: object) =>
  h.request({ method: 'POST', url: `/api/v1/payment/${url}`, payload })
const process = (sessionId: string) =>
  h.request({ method: 'POST', url: `/api/v1/payment/subscription-process?secret=${sessionId}` })
const productType = async (organizationId: string) =>
  (await h.repos.organizations.get({ id: organizationId }))?.product_type

async function subOrganization(name: string): Promise<string> {
  const created = await h.request({
    method: 'POST',
    url: '/api/v1/organization',
    payload: { organizationName: name },
  })
  return created.json().id
}

/** Sends a Stripe event about the object to the webhook route, signed as Stripe signs. */
async function webhook(type: string, object: { id: string }) {
  const { body, signature } = stripe.signedWebhook(stripe.event(type, object), webhookSecret)
  const response = await h.server.app.inject({
    method: 'POST',
    url: '/billing/stripe/webhook',
    headers: { 'content-type': 'application/json', 'stripe-signature': signature },
    payload: body,
  })
  return {
    response,
    resend: () =>
      h.server.app.inject({
        method: 'POST',
        url: '/billing/stripe/webhook',
        headers: { 'content-type': 'application/json', 'stripe-signature': signature },
        payload: body,
      }),
  }
}

/** A checkout through the API, completed at Stripe (as the customer paying). */
async function paidCheckout(organizationId: string, plan = b2b) {
  const checkout = await post('subscription-checkout', { organizationId, ...plan })
  expect(checkout.statusCode, checkout.body).toBe(200)
  const url: string = checkout.json().url
  expect(url).toMatch(/^https:\/\/checkout\.stripe\.com\/c\/pay\/cs_/)
  const sessionId = url.split('/').pop()!
  return { sessionId, completed: () => stripe.completeCheckout(sessionId, { last4: '4242' }) }
}

describe('payments (Stripe provider, local Stripe server)', () => {
  it('checkout, process, the invoice webhook grants credits once, then update, cancel, portal, end', async () => {
    const organizationId = await subOrganization('Stripe Buyer')
    const { sessionId, completed } = await paidCheckout(organizationId)
    const created = stripe.requests.find((r) => r.method === 'POST' && r.path === '/v1/checkout/sessions')!
    expect(created.body).toMatchObject({
      mode: 'subscription',
      client_reference_id: organizationId,
      line_items: [{ price: b2b.priceId, quantity: '1' }],
      subscription_data: { metadata: { organization_id: organizationId } },
    })
    expect(created.apiVersion).toBe('2026-10-28.endive')
    expect((await process(sessionId)).json()).toEqual(errorBody(409, 'checkout_incomplete'))

    const { subscription, session } = completed()
    const processed = await process(sessionId)
    expect(processed.statusCode, processed.body).toBe(200)
    expect(processed.json().subscription).toMatchObject({
      id: subscription.id,
      status: 'active',
      planId: 'b2b',
    })
    expect(await productType(organizationId)).toBe('plus_employee')

    // Stripe's own events: the checkout (after the process: nothing new), the first invoice (credits
    // once, even delivered twice).
    const before = await creditBalance(h.store, organizationId)
    expect((await webhook('checkout.session.completed', session)).response.json()).toMatchObject({
      duplicate: false,
    })
    const invoice = stripe.paidInvoice(subscription.id, 'subscription_create', {
      amount: 19900,
      currency: 'usd',
    })
    const paid = await webhook('invoice.paid', invoice)
    expect(paid.response.json()).toEqual({ received: true, duplicate: false, type: 'invoice.paid' })
    expect((await paid.resend()).json()).toEqual({ received: true, duplicate: true, type: 'invoice.paid' })
    expect(await creditBalance(h.store, organizationId)).toBe(before + 10000)

    const info = (
      await h.request({ url: `/api/v1/payment/customer-info?organizationId=${organizationId}` })
    ).json()
    expect(info).toMatchObject({
      customerId: subscription.customer,
      defaultCardLast4: '4242',
      status: 'active',
      activeProductId: 'prod_b2b',
    })

    const updated = await post('subscription-update', { organizationId, ...standard })
    expect(updated.json()).toMatchObject({ subscription: { planId: 'standard' } })
    const update = stripe.requests.filter(
      (r) => r.method === 'POST' && r.path === `/v1/subscriptions/${subscription.id}`,
    )
    expect(update.at(-1)!.body).toMatchObject({
      items: [{ price: standard.priceId }],
      proration_behavior: 'create_prorations',
    })
    expect(await productType(organizationId)).toBe('plus_employee')

    expect((await post('subscription-cancel', { organizationId })).json()).toEqual({})
    expect(stripe.requests.at(-1)!.body).toMatchObject({ cancel_at_period_end: 'true' })
    const portal = (
      await post('customer-portal', { organizationId, returnUrl: 'https://app.test/billing' })
    ).json()
    expect(portal.url).toMatch(/^https:\/\/billing\.stripe\.com\/p\/session\//)

    // A renewal's payment fails, then Stripe ends the subscription: standard.
    const failed = stripe.failedInvoice(subscription.id)
    expect((await webhook('invoice.payment_failed', failed)).response.statusCode).toBe(200)
    const ended = stripe.endSubscription(subscription.id)
    expect((await webhook('customer.subscription.deleted', ended)).response.statusCode).toBe(200)
    expect(await productType(organizationId)).toBe('standard')
    const types = (await readEvents(h.store, { organizationId })).map((e) => e.type)
    expect(types).toEqual(
      expect.arrayContaining([
        'subscription.activated',
        'invoice.paid',
        'subscription.updated',
        'subscription.canceled',
        'payment.failed',
      ]),
    )
    expect(types.filter((t) => t === 'invoice.paid')).toHaveLength(1)
  }, 60_000)

  it('events out of order: the invoice before the checkout, an old subscription update after a newer one', async () => {
    const organizationId = await subOrganization('Out of order')
    const { sessionId, completed } = await paidCheckout(organizationId, standard)
    const { subscription, session } = completed()
    const before = await creditBalance(h.store, organizationId)
    // Nobody processed the checkout yet: the invoice's webhook finds the organization from Stripe.
    const invoice = stripe.paidInvoice(subscription.id, 'subscription_create', {
      amount: 4900,
      currency: 'usd',
    })
    await webhook('invoice.paid', invoice)
    expect(await creditBalance(h.store, organizationId)).toBe(before + 1000)
    const stale = { ...subscription }
    await webhook('checkout.session.completed', session)
    expect((await process(sessionId)).statusCode).toBe(200)
    expect(await creditBalance(h.store, organizationId)).toBe(before + 1000)
    // An update event carrying the old object: the subscription is read again from Stripe.
    await post('subscription-cancel', { organizationId })
    await webhook('customer.subscription.updated', stale)
    const info = (
      await h.request({ url: `/api/v1/payment/customer-info?organizationId=${organizationId}` })
    ).json()
    expect(info.cancelAtPeriodEnd).toBe(true)
  }, 60_000)

  it('refuses unsigned, wrongly signed and tampered webhooks with 400, changing nothing', async () => {
    const organizationId = await subOrganization('Forged')
    const { completed } = await paidCheckout(organizationId)
    const { subscription } = completed()
    const invoice = stripe.paidInvoice(subscription.id, 'subscription_create')
    const before = await creditBalance(h.store, organizationId)
    const { body, signature } = stripe.signedWebhook(
      stripe.event('invoice.paid', invoice),
      'whsec_not_the_secret',
    )
    for (const headers of [
      { 'content-type': 'application/json' },
      { 'content-type': 'application/json', 'stripe-signature': signature },
      {
        'content-type': 'application/json',
        'stripe-signature': stripe.signedWebhook(stripe.event('invoice.paid', invoice), webhookSecret)
          .signature,
      },
    ]) {
      const response = await h.server.app.inject({
        method: 'POST',
        url: '/billing/stripe/webhook',
        headers,
        payload: body,
      })
      expect(response.statusCode).toBe(400)
      expect(response.json()).toMatchObject({ code: 'invalid_request' })
    }
    expect(await creditBalance(h.store, organizationId)).toBe(before)
  })

  it('an event about a subscription that is not one of ours is acknowledged and changes nothing', async () => {
    const { response } = await webhook('customer.subscription.updated', {
      id: 'sub_made_in_the_dashboard',
      object: 'subscription',
    } as { id: string })
    expect(response.statusCode, response.body).toBe(200)
    expect(response.json()).toEqual({
      received: true,
      duplicate: false,
      type: 'customer.subscription.updated',
    })
    const [row] = await h.store.query<{ n: number }>(
      "SELECT count() AS n FROM subscriptions WHERE subscription_id = 'sub_made_in_the_dashboard'",
    )
    expect(Number(row?.n)).toBe(0)
  })

  // Last: it stops the Stripe server.
  it('Stripe down: 502 billing_provider_error, nothing stored', async () => {
    const organizationId = await subOrganization('Stripe down')
    await stripe.close()
    const response = await post('subscription-checkout', { organizationId, ...b2b })
    expect(response.json()).toMatchObject(errorBody(502, 'billing_provider_error'))
    expect(response.body).not.toContain(stripe.secretKey)
    expect(
      (await h.request({ url: `/api/v1/payment/customer-info?organizationId=${organizationId}` })).json(),
    ).toMatchObject({
      customerId: null,
      status: null,
    })
  }, 60_000)
})
