// No tenant grants itself a paid plan (docs/decisions.md, "Billing"): with the local provider nobody pays,
// so a checkout of a plan with a price, confirmed on its page, waits for the operator's approval
// (the core function `billing approve` calls), and so does an upgrade; a free plan applies at once;
// BILLING_LOCAL_AUTO_APPROVE (a single-tenant install) applies paid plans at once. Keys are a
// sub-organization's of the bootstrap agency, as an agency's customer would hold.
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { approveCheckout, defaultPlans, pendingApprovals } from '@visitor-id/core/billing'
import { creditBalance } from '@visitor-id/core/credits'
import { errorBody, type Harness, startHarness } from '@visitor-id/testing/harness'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const b2b = { priceId: 'price_b2b_monthly', productId: 'prod_b2b' }
const free = { priceId: 'price_free', productId: 'prod_free' }
const plansDir = tempDir('vid-plans-')
const plansFile = path.join(plansDir.dir, 'plans.json')
writeFileSync(
  plansFile,
  JSON.stringify([
    {
      id: 'free',
      name: 'Free',
      ...free,
      amount: 0,
      currency: 'usd',
      interval: 'month',
      credits: 100,
      productType: 'standard',
    },
    ...defaultPlans,
  ]),
)

afterAll(() => plansDir.remove())

/** A sub-organization of the bootstrap agency and a read-write key of its own. */
async function subOrganization(h: Harness, name: string): Promise<{ organizationId: string; key: string }> {
  const created = await h.request({
    method: 'POST',
    url: '/api/v1/organization',
    payload: { organizationName: name },
  })
  expect(created.statusCode, created.body).toBe(200)
  const organizationId: string = created.json().id
  const { plainKey } = await h.createKey(organizationId, ['read', 'write'])
  return { organizationId, key: plainKey }
}

/** As the tenant's key: a checkout of the plan, confirmed on its page; the session id. */
async function checkoutConfirmed(
  h: Harness,
  tenant: { organizationId: string; key: string },
  plan: { priceId: string; productId: string },
): Promise<string> {
  const checkout = await h.request({
    method: 'POST',
    url: '/api/v1/payment/subscription-checkout',
    key: tenant.key,
    payload: { organizationId: tenant.organizationId, ...plan },
  })
  expect(checkout.statusCode, checkout.body).toBe(200)
  const pagePath = new URL(checkout.json().url).pathname
  const confirmed = await h.server.app.inject({
    method: 'POST',
    url: pagePath,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: '',
  })
  expect(confirmed.statusCode).toBe(303)
  return pagePath.split('/').pop()!
}

const processAs = (h: Harness, key: string, sessionId: string) =>
  h.request({ method: 'POST', url: `/api/v1/payment/subscription-process?secret=${sessionId}`, key })
const productType = async (h: Harness, organizationId: string) =>
  (await h.repos.organizations.get({ id: organizationId }))?.product_type

describe('local provider, default settings: paid plans wait for the operator', () => {
  let h: Harness
  beforeAll(async () => {
    h = await startHarness({ PLANS_FILE: plansFile })
  })
  afterAll(async () => {
    await h?.stop()
  })

  it("a sub-organization's write key checks out and confirms B2B: nothing applies until the operator approves", async () => {
    const tenant = await subOrganization(h, 'Self Granter')
    const before = await creditBalance(h.store, tenant.organizationId)
    const sessionId = await checkoutConfirmed(h, tenant, b2b)

    // The page and the default done page say what happens, with the command.
    const page = await h.server.app.inject({ method: 'GET', url: `/billing/checkout/${sessionId}` })
    expect(page.body).toContain("<h1>Waiting for the operator's approval</h1>")
    expect(page.body).toContain(`npm run cli -- billing approve ${sessionId}`)
    const done = await h.server.app.inject({ method: 'GET', url: `/billing/done?session_id=${sessionId}` })
    expect(done.body).toContain(`npm run cli -- billing approve ${sessionId}`)

    const waiting = await processAs(h, tenant.key, sessionId)
    expect(waiting.json()).toEqual(errorBody(409, 'checkout_pending_approval'))
    expect(waiting.json().message).toContain('npm run cli -- billing approve')
    expect(await productType(h, tenant.organizationId)).toBe('standard')
    expect(await creditBalance(h.store, tenant.organizationId)).toBe(before)
    const info = await h.request({
      url: `/api/v1/payment/customer-info?organizationId=${tenant.organizationId}`,
      key: tenant.key,
    })
    expect(info.json()).toMatchObject({ status: null, activeProductId: null })
    // Confirming again does not apply it either.
    await h.server.app.inject({
      method: 'POST',
      url: `/billing/checkout/${sessionId}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: '',
    })
    expect((await processAs(h, tenant.key, sessionId)).statusCode).toBe(409)
    expect(await productType(h, tenant.organizationId)).toBe('standard')

    const pending = await pendingApprovals(h.billing)
    expect(pending).toContainEqual(
      expect.objectContaining({ id: sessionId, organizationId: tenant.organizationId, planId: 'b2b' }),
    )

    // The operator approves: it applies at once, once.
    const approved = await approveCheckout(h.billing, sessionId)
    expect(approved).toMatchObject({
      organizationId: tenant.organizationId,
      subscription: { planId: 'b2b', status: 'active', productType: 'plus_employee' },
    })
    expect(await productType(h, tenant.organizationId)).toBe('plus_employee')
    expect(await creditBalance(h.store, tenant.organizationId)).toBe(before + 10000)
    await approveCheckout(h.billing, sessionId)
    expect((await processAs(h, tenant.key, sessionId)).statusCode).toBe(200)
    expect(await creditBalance(h.store, tenant.organizationId)).toBe(before + 10000)
    expect((await pendingApprovals(h.billing)).map((p) => p.id)).not.toContain(sessionId)
  })

  it('the operator cannot approve a checkout the customer has not confirmed, nor an unknown one', async () => {
    const tenant = await subOrganization(h, 'Unconfirmed')
    const checkout = await h.request({
      method: 'POST',
      url: '/api/v1/payment/subscription-checkout',
      key: tenant.key,
      payload: { organizationId: tenant.organizationId, ...b2b },
    })
    const sessionId = new URL(checkout.json().url).pathname.split('/').pop()!
    await expect(approveCheckout(h.billing, sessionId)).rejects.toMatchObject({ code: 'checkout_incomplete' })
    await expect(approveCheckout(h.billing, 'cs_local_nope')).rejects.toMatchObject({
      code: 'checkout_not_found',
    })
    expect(await productType(h, tenant.organizationId)).toBe('standard')
  })

  it('a free plan applies at once; an upgrade to a paid plan waits, a downgrade does not', async () => {
    const tenant = await subOrganization(h, 'Free Rider')
    const before = await creditBalance(h.store, tenant.organizationId)
    const page = await h.server.app.inject({ method: 'GET', url: '/billing/done' })
    expect(page.body).toContain('All done')
    const sessionId = await checkoutConfirmed(h, tenant, free)
    const processed = await processAs(h, tenant.key, sessionId)
    expect(processed.statusCode, processed.body).toBe(200)
    expect(processed.json().subscription).toMatchObject({ planId: 'free', status: 'active' })
    expect(await creditBalance(h.store, tenant.organizationId)).toBe(before + 100)

    const update = (plan: { priceId: string; productId: string }) =>
      h.request({
        method: 'POST',
        url: '/api/v1/payment/subscription-update',
        key: tenant.key,
        payload: { organizationId: tenant.organizationId, ...plan },
      })
    const upgrade = await update(b2b)
    expect(upgrade.json()).toEqual(errorBody(409, 'checkout_pending_approval'))
    const changeId = /billing approve (cs_local_[0-9a-f]+)/.exec(upgrade.json().message)?.[1]
    expect(changeId).toBeDefined()
    expect(await productType(h, tenant.organizationId)).toBe('standard')
    const info = async () =>
      (
        await h.request({
          url: `/api/v1/payment/customer-info?organizationId=${tenant.organizationId}`,
          key: tenant.key,
        })
      ).json()
    expect(await info()).toMatchObject({ planId: 'free', activeProductId: 'prod_free' })
    expect(await pendingApprovals(h.billing)).toContainEqual(
      expect.objectContaining({
        id: changeId,
        planId: 'b2b',
        changeOf: expect.stringMatching(/^sub_local_/),
      }),
    )

    await approveCheckout(h.billing, changeId!)
    expect(await productType(h, tenant.organizationId)).toBe('plus_employee')
    expect(await info()).toMatchObject({ planId: 'b2b', activeProductId: 'prod_b2b' })

    // Down to the free plan: no consent needed.
    const downgrade = await update(free)
    expect(downgrade.statusCode, downgrade.body).toBe(200)
    expect(downgrade.json().subscription).toMatchObject({ planId: 'free' })
  })
})

describe('BILLING_LOCAL_AUTO_APPROVE=1 (a single-tenant install)', () => {
  let h: Harness
  beforeAll(async () => {
    h = await startHarness({ PLANS_FILE: plansFile, BILLING_LOCAL_AUTO_APPROVE: '1' })
  })
  afterAll(async () => {
    await h?.stop()
  })

  it("a sub-organization's key gets the B2B plan it confirmed at once, with its credits", async () => {
    const tenant = await subOrganization(h, 'Only Tenant')
    const before = await creditBalance(h.store, tenant.organizationId)
    const sessionId = await checkoutConfirmed(h, tenant, b2b)
    const processed = await processAs(h, tenant.key, sessionId)
    expect(processed.statusCode, processed.body).toBe(200)
    expect(processed.json().subscription).toMatchObject({ planId: 'b2b', productType: 'plus_employee' })
    expect(await productType(h, tenant.organizationId)).toBe('plus_employee')
    expect(await creditBalance(h.store, tenant.organizationId)).toBe(before + 10000)
    expect(await pendingApprovals(h.billing)).toEqual([])
  })

  it('an upgrade applies at once too', async () => {
    const tenant = await subOrganization(h, 'Upgrader')
    await processAs(h, tenant.key, await checkoutConfirmed(h, tenant, free))
    const upgrade = await h.request({
      method: 'POST',
      url: '/api/v1/payment/subscription-update',
      key: tenant.key,
      payload: { organizationId: tenant.organizationId, ...b2b },
    })
    expect(upgrade.statusCode, upgrade.body).toBe(200)
    expect(await productType(h, tenant.organizationId)).toBe('plus_employee')
  })
})
