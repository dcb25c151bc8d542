// The Stripe adapter against the local Stripe server: real SDK calls over HTTP, so what is checked is
// what Stripe would receive (form fields, the pinned version) and how its answers are read.

import { parseStripeForm, type StripeServer, startStripeServer } from '@visitor-id/testing/stripe-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AppError } from '../errors.js'
import { defaultPlans } from './plans.js'
import type { BillingProvider } from './provider.js'
import { createStripeProvider, stripeApiVersion } from './stripe-provider.js'

const [standard, b2b] = defaultPlans as [(typeof defaultPlans)[number], (typeof defaultPlans)[number]]
const webhookSecret = 'whsec_test_secret'
const organizationId = '7f1c3a52-4d0e-4a8b-9c11-2b5e8f0a6d93'
const urls = {
  successUrl: 'https://app.example.com/billing/done?session={CHECKOUT_SESSION_ID}',
  cancelUrl: 'https://app.example.com/billing',
}

let server: StripeServer
let provider: BillingProvider

beforeAll(async () => {
  server = await startStripeServer()
  provider = createStripeProvider({ ...server, webhookSecret })
})
afterAll(() => server.close())

const lastRequest = () => server.requests.at(-1)!
const iso = (unixSeconds: number) => new Date(unixSeconds * 1000).toISOString()

/** A checkout of the plan, paid by a customer. */
async function subscribed(plan = standard, options: Parameters<StripeServer['completeCheckout']>[1] = {}) {
  const { id } = await provider.createCheckout({ organizationId, plan, ...urls })
  return server.completeCheckout(id, options)
}

describe('the Stripe provider: checkout', () => {
  it('creates a subscription checkout of the plan for the organization, at the pinned API version', async () => {
    const checkout = await provider.createCheckout({ organizationId, plan: standard, ...urls })
    expect(checkout.id).toMatch(/^cs_test_/)
    expect(checkout.url).toBe(`https://checkout.stripe.com/c/pay/${checkout.id}`)
    const request = lastRequest()
    expect(request).toMatchObject({
      method: 'POST',
      path: '/v1/checkout/sessions',
      apiVersion: stripeApiVersion,
    })
    expect(request.body).toEqual({
      mode: 'subscription',
      line_items: [{ price: standard.priceId, quantity: '1' }],
      client_reference_id: organizationId,
      subscription_data: { metadata: { organization_id: organizationId } },
      metadata: { organization_id: organizationId },
      success_url: urls.successUrl,
      cancel_url: urls.cancelUrl,
    })
  })

  it('names the customer of a former subscription', async () => {
    const { customer } = await subscribed()
    await provider.createCheckout({ organizationId, plan: b2b, customerId: customer.id, ...urls })
    expect(lastRequest().body).toMatchObject({ customer: customer.id, line_items: [{ price: b2b.priceId }] })
  })

  it('is incomplete until paid, then complete with its subscription', async () => {
    const { id } = await provider.createCheckout({ organizationId, plan: standard, ...urls })
    expect(await provider.retrieveCheckout(id)).toEqual({
      id,
      organizationId,
      complete: false,
      subscription: undefined,
    })
    expect(lastRequest()).toMatchObject({
      method: 'GET',
      path: `/v1/checkout/sessions/${id}`,
      query: { expand: ['subscription'] },
    })

    const { subscription, customer } = server.completeCheckout(id)
    expect(await provider.retrieveCheckout(id)).toEqual({
      id,
      organizationId,
      complete: true,
      subscription: {
        id: subscription.id,
        customerId: customer.id,
        organizationId,
        priceId: standard.priceId,
        status: 'active',
        currentPeriodEnd: iso(subscription.items.data[0]!.current_period_end),
        cancelAtPeriodEnd: false,
      },
    })
  })

  it('answers undefined for an unknown session, subscription or customer', async () => {
    expect(await provider.retrieveCheckout('cs_test_unknown')).toBeUndefined()
    expect(await provider.retrieveSubscription('sub_unknown')).toBeUndefined()
    expect(await provider.retrieveCustomer('cus_unknown')).toBeUndefined()
  })
})

describe('the Stripe provider: subscriptions', () => {
  it('reads a subscription, its period end from its item', async () => {
    const { subscription } = await subscribed()
    const read = await provider.retrieveSubscription(subscription.id)
    expect(read).toMatchObject({
      id: subscription.id,
      organizationId,
      priceId: standard.priceId,
      status: 'active',
    })
    const end = subscription.items.data[0]!.current_period_end
    expect(end).toBeGreaterThan(Date.now() / 1000 + 27 * 86_400)
    expect(read!.currentPeriodEnd).toBe(iso(end))
  })

  it('changes the plan of its item, prorated, undoing a pending cancellation', async () => {
    const { subscription } = await subscribed()
    await provider.cancelAtPeriodEnd(subscription.id)
    const changed = await provider.changePlan(subscription.id, b2b)
    expect(changed).toMatchObject({ id: subscription.id, priceId: b2b.priceId, cancelAtPeriodEnd: false })
    expect(lastRequest()).toMatchObject({ method: 'POST', path: `/v1/subscriptions/${subscription.id}` })
    expect(lastRequest().body).toEqual({
      items: [{ id: subscription.items.data[0]!.id, price: b2b.priceId }],
      proration_behavior: 'create_prorations',
      cancel_at_period_end: 'false',
    })
  })

  it('cancels at the period end', async () => {
    const { subscription } = await subscribed()
    const canceled = await provider.cancelAtPeriodEnd(subscription.id)
    expect(lastRequest().body).toEqual({ cancel_at_period_end: 'true' })
    expect(canceled).toMatchObject({ id: subscription.id, status: 'active', cancelAtPeriodEnd: true })
  })

  it("maps Stripe's statuses to the port's five", async () => {
    const { subscription } = await subscribed()
    const status = async () => (await provider.retrieveSubscription(subscription.id))!.status
    for (const [stripe, ours] of [
      ['trialing', 'trialing'],
      ['past_due', 'past_due'],
      ['unpaid', 'past_due'],
      ['paused', 'past_due'],
      ['incomplete', 'incomplete'],
      ['incomplete_expired', 'canceled'],
      ['active', 'active'],
    ] as const) {
      server.setSubscriptionStatus(subscription.id, stripe)
      expect(await status(), stripe).toBe(ours)
    }
    server.failedInvoice(subscription.id)
    expect(await status()).toBe('past_due')
    server.paidInvoice(subscription.id)
    expect(await status()).toBe('active')
    server.endSubscription(subscription.id)
    expect(await status()).toBe('canceled')
  })
})

describe('the Stripe provider: customers and the portal', () => {
  it('makes a portal session for the customer', async () => {
    const { customer } = await subscribed()
    const portal = await provider.createPortal({
      customerId: customer.id,
      organizationId,
      returnUrl: 'https://app.example.com/billing',
    })
    expect(portal.url).toMatch(/^https:\/\/billing\.stripe\.com\/p\/session\//)
    expect(lastRequest()).toMatchObject({
      method: 'POST',
      path: '/v1/billing_portal/sessions',
      body: { customer: customer.id, return_url: 'https://app.example.com/billing' },
    })
  })

  it('reads a customer: email, address and the last 4 digits of the default card', async () => {
    const { customer } = await subscribed(standard, {
      last4: '1881',
      email: 'ap@acme.example',
      address: { line1: '1 Main St', city: 'Springfield', postal_code: '01101', state: 'MA', country: 'US' },
    })
    expect(await provider.retrieveCustomer(customer.id)).toEqual({
      id: customer.id,
      email: 'ap@acme.example',
      address: {
        line1: '1 Main St',
        line2: null,
        city: 'Springfield',
        state: 'MA',
        postalCode: '01101',
        country: 'US',
      },
      defaultCardLast4: '1881',
    })
    expect(lastRequest().query).toEqual({ expand: ['invoice_settings.default_payment_method'] })
  })

  it('answers undefined for a deleted customer', async () => {
    const { customer } = await subscribed()
    server.deleteCustomer(customer.id)
    expect(await provider.retrieveCustomer(customer.id)).toBeUndefined()
  })
})

describe('the Stripe provider: errors other than 404 are billing_provider_error (502)', () => {
  it('a wrong secret key: 502 naming the kind of error, never the key', async () => {
    const wrong = createStripeProvider({ ...server, secretKey: 'sk_test_wrong_key_1234' })
    expect(JSON.stringify(wrong)).not.toContain('sk_test')
    const failure = await wrong.retrieveSubscription('sub_any').catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(AppError)
    expect(failure).toMatchObject({ code: 'billing_provider_error', statusCode: 502 })
    expect(String((failure as Error).message)).toContain('401')
    expect(String((failure as Error).message)).not.toContain('sk_test')
    expect(lastRequest().path).toBe('/v1/subscriptions/sub_any')
  })

  it('a reference Stripe does not know in a request (not a lookup) is an error, not undefined', async () => {
    const failure = await provider
      .createPortal({ customerId: 'cus_unknown', organizationId, returnUrl: urls.cancelUrl })
      .catch((error: unknown) => error)
    expect(failure).toMatchObject({ code: 'billing_provider_error', statusCode: 502 })
    expect(String((failure as Error).message)).toContain('resource_missing')
  })
})

describe('the Stripe provider: webhooks', () => {
  const read = (payload: { id: string; type: string }, secret = webhookSecret) => {
    const { body, signature } = server.signedWebhook(payload, secret)
    return provider.readWebhook!(Buffer.from(body), signature)
  }
  const rejection = (run: () => unknown) => {
    try {
      run()
    } catch (error) {
      return error
    }
    throw new Error('did not throw')
  }

  it('reads a completed checkout and the subscription events', async () => {
    const { session, subscription } = await subscribed()
    const completed = server.event('checkout.session.completed', session)
    expect(read(completed)).toEqual({
      id: completed.id,
      type: 'checkout.session.completed',
      fact: { kind: 'checkout.completed', sessionId: session.id },
    })
    for (const type of ['created', 'updated', 'deleted']) {
      const event = server.event(`customer.subscription.${type}`, subscription)
      expect(read(event)).toEqual({
        id: event.id,
        type: `customer.subscription.${type}`,
        fact: { kind: 'subscription.changed', subscriptionId: subscription.id },
      })
    }
  })

  it('reads a paid invoice and a failed one', async () => {
    const { subscription, customer } = await subscribed()
    const paid = server.paidInvoice(subscription.id, 'subscription_create', { amount: 4900, currency: 'usd' })
    const paidEvent = server.event('invoice.paid', paid)
    expect(read(paidEvent)).toEqual({
      id: paidEvent.id,
      type: 'invoice.paid',
      fact: {
        kind: 'invoice.paid',
        invoice: {
          id: paid.id,
          subscriptionId: subscription.id,
          customerId: customer.id,
          priceId: standard.priceId,
          amount: 4900,
          currency: 'usd',
          periodEnd: iso(subscription.items.data[0]!.current_period_end),
          url: paid.hosted_invoice_url,
          reason: 'subscription_create',
        },
      },
    })

    const failed = server.failedInvoice(subscription.id, 'subscription_cycle', { amount: 19900 })
    const failedEvent = server.event('invoice.payment_failed', failed)
    expect(read(failedEvent)).toMatchObject({
      type: 'invoice.payment_failed',
      fact: {
        kind: 'invoice.payment_failed',
        // What is due, nothing being paid; the renewal's period is the next one.
        invoice: {
          id: failed.id,
          amount: 19900,
          reason: 'subscription_cycle',
          periodEnd: iso(failed.lines.data[0]!.period.end),
        },
      },
    })
    expect(failed.lines.data[0]!.period.end).toBeGreaterThan(subscription.items.data[0]!.current_period_end)
  })

  it("an invoice's plan is its first line that is not a proration", async () => {
    const { subscription } = await subscribed()
    const invoice = server.paidInvoice(subscription.id, 'subscription_cycle')
    const plan = invoice.lines.data[0]!
    const credit = {
      ...plan,
      id: 'il_credit',
      amount: -2450,
      period: { start: plan.period.start - 86_400, end: plan.period.start },
      pricing: { ...plan.pricing, price_details: { price: 'price_old' } },
      parent: {
        ...plan.parent,
        subscription_item_details: { ...plan.parent.subscription_item_details, proration: true },
      },
    }
    const withProration = { ...invoice, lines: { ...invoice.lines, data: [credit, plan] } }
    const fact = read(server.event('invoice.paid', withProration)).fact
    expect(fact).toMatchObject({ invoice: { priceId: standard.priceId, periodEnd: iso(plan.period.end) } })
  })

  it('has no fact for an invoice of no subscription, nor for other event types', async () => {
    const { subscription, customer } = await subscribed()
    const oneOff = { ...server.paidInvoice(subscription.id, 'manual'), parent: null }
    expect(read(server.event('invoice.paid', oneOff)).fact).toBeUndefined()
    const other = server.event('customer.updated', customer)
    expect(read(other)).toEqual({ id: other.id, type: 'customer.updated', fact: undefined })
  })

  it('refuses a tampered body, another secret or no signature: invalid_request (400)', async () => {
    const { session } = await subscribed()
    const { body, signature } = server.signedWebhook(
      server.event('checkout.session.completed', session),
      webhookSecret,
    )
    const tampered = body.replace(session.id, 'cs_test_forged')
    for (const attempt of [
      () => provider.readWebhook!(Buffer.from(tampered), signature),
      () => read(server.event('checkout.session.completed', session), 'whsec_other'),
      () => provider.readWebhook!(Buffer.from(body), ''),
      () => provider.readWebhook!(Buffer.from(body), 't=1,v1=deadbeef'),
    ]) {
      const error = rejection(attempt)
      expect(error).toBeInstanceOf(AppError)
      expect(error).toMatchObject({ code: 'invalid_request', statusCode: 400 })
    }
  })

  it('says so without a webhook secret', async () => {
    const unconfigured = createStripeProvider({ ...server, webhookSecret: undefined })
    const { body, signature } = server.signedWebhook(
      server.event('customer.updated', { id: 'cus_1' }),
      webhookSecret,
    )
    expect(() => unconfigured.readWebhook!(Buffer.from(body), signature)).toThrow(/STRIPE_WEBHOOK_SECRET/)
  })
})

describe('the Stripe server', () => {
  it('reads form bodies as Stripe does', () => {
    expect(
      parseStripeForm(
        'line_items[0][price]=p&line_items[0][quantity]=1&expand[]=a&expand[]=b&items[0][id]=si&' +
          'subscription_data[metadata][organization_id]=o&success_url=https%3A%2F%2Fx.example%2F%3Fa%3D1',
      ),
    ).toEqual({
      line_items: [{ price: 'p', quantity: '1' }],
      expand: ['a', 'b'],
      items: [{ id: 'si' }],
      subscription_data: { metadata: { organization_id: 'o' } },
      success_url: 'https://x.example/?a=1',
    })
    expect(parseStripeForm('expand[0]=x&__proto__[polluted]=1')).toEqual({ expand: ['x'] })
  })
})
