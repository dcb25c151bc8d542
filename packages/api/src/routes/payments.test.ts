// Payments end to end on a real server with the local provider: plans, a checkout confirmed on this
// server's page, processing (once: credits granted per invoice), plan changes, cancelation, the
// portal page, renewals and the end of a period by the billing sweep; the billing events signed to
// the partner's billing webhook and the lifecycle emails over a real SMTP server; bad input.
import { createHmac } from 'node:crypto'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { approveCheckout, billingSweep } from '@visitor-id/core/billing'
import { creditBalance } from '@visitor-id/core/credits'
import { readEvents } from '@visitor-id/core/events'
import { errorBody, type Harness, startHarness } from '@visitor-id/testing/harness'
import { type SmtpInbox, startSmtpInbox } from '@visitor-id/testing/smtp-inbox'
import { until } from '@visitor-id/testing/until'
import { simpleParser } from 'mailparser'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

let h: Harness
let smtp: SmtpInbox
let receiver: Server
const secret = 'a-billing-webhook-secret'
const deliveries: { headers: IncomingHttpHeaders; raw: string }[] = []

beforeAll(async () => {
  smtp = await startSmtpInbox()
  receiver = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      deliveries.push({ headers: request.headers, raw: Buffer.concat(chunks).toString('utf8') })
      response.end('ok')
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  h = await startHarness({
    SMTP_URL: smtp.url,
    PUBLIC_URL: 'https://billing.service.test',
  })
  const configured = await h.request({
    method: 'PUT',
    url: '/api/v1/partner/webhooks/billing',
    key: null,
    partnerKey: h.boot.partnerKey,
    payload: { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/billing`, secret },
  })
  expect(configured.statusCode).toBe(200)
})

afterAll(async () => {
  await h?.stop()
  await smtp?.close()
  receiver?.closeAllConnections()
  await new Promise((resolve) => receiver?.close(resolve))
})

/** The subjects of the emails received so far. */
const subjects = async () =>
  Promise.all(smtp.messages.map(async (raw) => (await simpleParser(raw)).subject ?? ''))

/** A sub-organization of the bootstrap agency (so the bootstrap partner manages it), `standard`. */
async function subOrganization(name: string): Promise<string> {
  const created = await h.request({
    method: 'POST',
    url: '/api/v1/organization',
    payload: { organizationName: name },
  })
  expect(created.statusCode).toBe(200)
  return created.json().id
}

const b2b = { priceId: 'price_b2b_monthly', productId: 'prod_b2b' }
const standard = { priceId: 'price_standard_monthly', productId: 'prod_standard' }
const post = (url: string, payload: object) =>
  h.request({ method: 'POST', url: `/api/v1/payment/${url}`, payload })
const productType = async (organizationId: string) =>
  (await h.repos.organizations.get({ id: organizationId }))?.product_type
const customer = async (organizationId: string) =>
  (await h.request({ url: `/api/v1/payment/customer-info?organizationId=${organizationId}` })).json()

/** Confirms a local checkout on its page, as a browser would; the page's redirect. */
async function confirmOnPage(url: string): Promise<string> {
  const path = new URL(url).pathname
  const shown = await h.server.app.inject({ method: 'GET', url: path })
  expect(shown.statusCode).toBe(200)
  expect(shown.headers['referrer-policy']).toBe('no-referrer')
  const confirmed = await h.server.app.inject({
    method: 'POST',
    url: path,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: '',
  })
  expect(confirmed.statusCode).toBe(303)
  return String(confirmed.headers.location)
}

describe('payments (local provider)', () => {
  it('lists the built-in plans', async () => {
    const plans = (
      await h.request({ url: `/api/v1/payment/subscription-plans?organizationId=${h.boot.organizationId}` })
    ).json()
    expect(plans.map((p: { id: string; productType: string }) => [p.id, p.productType])).toEqual([
      ['standard', 'standard'],
      ['b2b', 'plus_employee'],
    ])
    expect(plans[1]).toMatchObject({
      ...b2b,
      credits: 10000,
      pricing: { amount: 19900, currency: 'usd', display: '$199.00 / month' },
    })
  })

  it('refuses unknown plans, mismatched ids, bad URLs and wrong types with stable codes', async () => {
    const organizationId = h.boot.organizationId
    expect(
      (
        await post('subscription-checkout', { organizationId, priceId: 'price_x', productId: 'prod_b2b' })
      ).json(),
    ).toMatchObject(errorBody(400, 'unknown_plan'))
    expect(
      (
        await post('subscription-checkout', {
          organizationId,
          priceId: b2b.priceId,
          productId: 'prod_standard',
        })
      ).statusCode,
    ).toBe(400)
    for (const body of [
      { organizationId, ...b2b, successUrl: 'javascript:alert(1)' },
      { organizationId, ...b2b, successUrl: `https://x.test/${'a'.repeat(3000)}` },
      { organizationId, priceId: 42, productId: 'prod_b2b' },
      { organizationId, priceId: b2b.priceId },
      { organizationId, ...b2b, extra: true },
    ]) {
      expect(
        (await post('subscription-checkout', body)).json(),
        JSON.stringify(body).slice(0, 80),
      ).toMatchObject(errorBody(400, 'invalid_request'))
    }
    const unknown = await h.request({
      method: 'POST',
      url: '/api/v1/payment/subscription-process?secret=cs_local_nope',
    })
    expect(unknown.json()).toEqual(errorBody(404, 'checkout_not_found'))
    const none = await subOrganization('Never subscribed')
    expect((await post('subscription-cancel', { organizationId: none })).json()).toEqual(
      errorBody(404, 'subscription_not_found'),
    )
    expect((await post('subscription-update', { organizationId: none, ...b2b })).json()).toEqual(
      errorBody(404, 'subscription_not_found'),
    )
    expect((await post('customer-portal', { organizationId: none })).json()).toMatchObject(
      errorBody(404, 'subscription_not_found'),
    )
    expect(await customer(none)).toEqual({
      customerId: null,
      email: null,
      address: null,
      defaultCardLast4: null,
      activeProductId: null,
      activePriceId: null,
      planId: null,
      status: null,
      currentPeriodEnd: null,
      cancelAtPeriodEnd: false,
    })
    // The checkout page of an unknown session says so, and confirms nothing.
    const page = await h.server.app.inject({
      method: 'POST',
      url: '/billing/checkout/cs_local_unknown',
      payload: '',
    })
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain('not valid')
  })

  it('checkout, confirm on the page, process: B2B with its credits, once; then update, cancel, portal, period end', async () => {
    const organizationId = await subOrganization('Subscriber Inc')
    expect(await productType(organizationId)).toBe('standard')
    const before = await creditBalance(h.store, organizationId)
    const checkout = await post('subscription-checkout', {
      organizationId,
      ...b2b,
      successUrl: 'https://app.test/done?session={CHECKOUT_SESSION_ID}',
      cancelUrl: 'https://app.test/billing',
    })
    expect(checkout.statusCode, checkout.body).toBe(200)
    const { url } = checkout.json()
    expect(url).toMatch(/^https:\/\/billing\.service\.test\/billing\/checkout\/cs_local_[0-9a-f]{36}$/)
    const sessionId = url.split('/').pop()
    const early = await h.request({
      method: 'POST',
      url: `/api/v1/payment/subscription-process?secret=${sessionId}`,
    })
    expect(early.json()).toEqual(errorBody(409, 'checkout_incomplete'))

    expect(await confirmOnPage(url)).toBe(`https://app.test/done?session=${sessionId}`)
    // A plan with a price waits for the operator (`billing approve` calls approveCheckout).
    const waiting = await h.request({
      method: 'POST',
      url: `/api/v1/payment/subscription-process?secret=${sessionId}`,
    })
    expect(waiting.json()).toEqual(errorBody(409, 'checkout_pending_approval'))
    expect(await productType(organizationId)).toBe('standard')
    await approveCheckout(h.billing, sessionId)
    const processed = await h.request({
      method: 'POST',
      url: `/api/v1/payment/subscription-process?secret=${sessionId}`,
    })
    expect(processed.statusCode, processed.body).toBe(200)
    expect(processed.json()).toMatchObject({
      success: true,
      organizationId,
      subscription: {
        status: 'active',
        planId: 'b2b',
        productType: 'plus_employee',
        credits: 10000,
        cancelAtPeriodEnd: false,
      },
    })
    expect(await productType(organizationId)).toBe('plus_employee')
    expect(await creditBalance(h.store, organizationId)).toBe(before + 10000)
    // Processing again grants nothing more; a second checkout is refused while this one runs.
    expect(
      (await h.request({ method: 'POST', url: `/api/v1/payment/subscription-process?secret=${sessionId}` }))
        .statusCode,
    ).toBe(200)
    expect(await creditBalance(h.store, organizationId)).toBe(before + 10000)
    expect((await post('subscription-checkout', { organizationId, ...standard })).json()).toMatchObject(
      errorBody(409, 'subscription_active'),
    )
    const info = await customer(organizationId)
    expect(info).toMatchObject({
      status: 'active',
      activeProductId: 'prod_b2b',
      planId: 'b2b',
      cancelAtPeriodEnd: false,
    })
    expect(info.customerId).toMatch(/^cus_local_/)
    expect(info.email).toMatch(/@/)
    const periodEnd = Date.parse(info.currentPeriodEnd)
    expect(periodEnd).toBeGreaterThan(Date.now() + 27 * 86_400_000)

    // Leaving B2B: still plus_employee until the period paid for ends.
    const updated = await post('subscription-update', { organizationId, ...standard })
    expect(updated.json()).toMatchObject({
      success: true,
      subscription: { planId: 'standard', productType: 'standard' },
    })
    expect(await productType(organizationId)).toBe('plus_employee')

    expect((await post('subscription-cancel', { organizationId })).json()).toEqual({})
    expect(await customer(organizationId)).toMatchObject({
      status: 'active',
      cancelAtPeriodEnd: true,
      activeProductId: 'prod_standard',
    })

    const portal = (
      await post('customer-portal', { organizationId, returnUrl: 'https://app.test/billing' })
    ).json()
    expect(portal.url).toMatch(/^https:\/\/billing\.service\.test\/billing\/portal\/bps_local_[0-9a-f]{36}$/)
    const portalPage = await h.server.app.inject({ method: 'GET', url: new URL(portal.url).pathname })
    expect(portalPage.body).toContain('Canceled: runs until')
    expect(portalPage.body).not.toContain('Cancel subscription')

    // The period ends: the subscription ends, and with it the B2B time.
    await billingSweep(h.billing, new Date(periodEnd + 60_000))
    expect(await customer(organizationId)).toMatchObject({ status: 'canceled', activeProductId: null })
    expect(await productType(organizationId)).toBe('standard')
    expect((await post('subscription-cancel', { organizationId })).json()).toEqual(
      errorBody(404, 'subscription_not_found'),
    )

    // Every billing event once, in order, signed to the partner's billing webhook.
    const types = (await readEvents(h.store, { organizationId })).map((e) => e.type)
    expect(types).toEqual([
      'subscription.activated',
      'invoice.paid',
      'subscription.updated',
      'subscription.canceled',
      // The end of the period: status canceled.
      'subscription.updated',
    ])
    const received = await until(() => {
      const mine = deliveries.filter((d) => JSON.parse(d.raw).organization_id === organizationId)
      return mine.length >= 5 ? mine : undefined
    })
    for (const delivery of received) {
      const expected = createHmac('sha256', secret).update(delivery.raw).digest('hex')
      expect(delivery.headers['x-service-signature']).toBe(expected)
    }
    const paid = received.map((d) => JSON.parse(d.raw)).find((p) => p.event_type === 'invoice.paid')
    expect(paid).toMatchObject({
      organization_id: organizationId,
      workspace: 'Subscriber Inc',
      subscription: { plan_id: 'b2b', product_type: 'plus_employee' },
      invoice: { amount: 0, currency: 'usd', reason: 'subscription_create', credits_granted: 10000 },
    })
    await until(async () => {
      const received = await subjects()
      const expected = ['your B2B subscription is active', 'subscription is canceled']
      return expected.every((s) => received.some((subject) => subject.includes(s))) ? true : undefined
    })
  }, 60_000)

  it('a renewal grants the period credits once and mails a receipt; the portal cancels', async () => {
    const organizationId = await subOrganization('Renewer Ltd')
    const { url } = (await post('subscription-checkout', { organizationId, ...standard })).json()
    const sessionId = url.split('/').pop()
    expect(await confirmOnPage(url)).toBe(`https://billing.service.test/billing/done?session_id=${sessionId}`)
    await approveCheckout(h.billing, sessionId)
    await h.request({ method: 'POST', url: `/api/v1/payment/subscription-process?secret=${sessionId}` })
    const before = await creditBalance(h.store, organizationId)
    const { currentPeriodEnd } = await customer(organizationId)
    const renewal = new Date(Date.parse(currentPeriodEnd) + 60_000)
    await billingSweep(h.billing, renewal)
    await billingSweep(h.billing, renewal)
    expect(await creditBalance(h.store, organizationId)).toBe(before + 1000)
    const after = await customer(organizationId)
    expect(Date.parse(after.currentPeriodEnd)).toBeGreaterThan(Date.parse(currentPeriodEnd))
    expect(after.status).toBe('active')
    await until(async () =>
      (await subjects()).some((subject) => subject.includes('receipt for your Standard subscription'))
        ? true
        : undefined,
    )

    const portal = (await post('customer-portal', { organizationId })).json()
    const path = new URL(portal.url).pathname
    expect((await h.server.app.inject({ method: 'GET', url: path })).body).toContain('Cancel subscription')
    const canceled = await h.server.app.inject({
      method: 'POST',
      url: `${path}/cancel`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: '',
    })
    expect(canceled.statusCode).toBe(303)
    expect(await customer(organizationId)).toMatchObject({ cancelAtPeriodEnd: true })
  }, 60_000)

  it("another organization's checkout session is 404, like an unknown one", async () => {
    const tenant = await h.createTenant()
    const sessionId = await h.completedCheckout(h.boot.organizationId)
    const response = await h.request({
      method: 'POST',
      url: `/api/v1/payment/subscription-process?secret=${sessionId}`,
      key: tenant.key,
    })
    expect(response.json()).toEqual(errorBody(404, 'checkout_not_found'))
  })
})
