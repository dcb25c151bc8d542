import { readFileSync } from 'node:fs'
import path from 'node:path'
import { closeChromium, findChromium, launchChromium } from '@visitor-id/testing/chromium'
import {
  killServerProcess,
  runCli,
  type ServerProcess,
  startServerProcess,
} from '@visitor-id/testing/server-process'
import { tempDir } from '@visitor-id/testing/temp-dir'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { BootstrapKeys } from './fixtures/hits.js'

// The local billing provider in a real browser: a checkout made through the API opens this
// server's checkout page, the customer confirms, the browser lands on the success URL with the
// session id in it, which says the plan waits for the operator's approval (a plan with a price);
// the operator approves it with the CLI, and processing that id answers the organization B2B with
// the plan's credits. The customer portal page then cancels at the period end.

const data = tempDir('vid-billing-browser-')
let server: ServerProcess
let browser: Browser
let keys: BootstrapKeys

async function api(method: string, route: string, body?: object) {
  const response = await fetch(`${server.url}/api/v1${route}`, {
    method,
    headers: { 'x-api-key': keys.apiKey, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

beforeAll(async () => {
  server = await startServerProcess({ DATA_DIR: data.dir })
  keys = JSON.parse(readFileSync(path.join(data.dir, 'bootstrap.json'), 'utf8'))
  browser = await launchChromium(await findChromium())
}, 120_000)

afterAll(async () => {
  await closeChromium(browser)
  await killServerProcess(server)
  data.remove()
})

describe('local checkout in Chromium', () => {
  it('confirm on the page, back to the success URL, waiting; approved with the CLI, process: B2B with its credits; the portal cancels', async () => {
    const created = await api('POST', '/organization', { organizationName: 'Browser Buyer' })
    expect(created.status).toBe(200)
    const organizationId = String(created.body.id)
    expect(created.body.productType).toBe('standard')
    const credits = Number(created.body.identificationCredits)

    const checkout = await api('POST', '/payment/subscription-checkout', {
      organizationId,
      priceId: 'price_b2b_monthly',
      productId: 'prod_b2b',
      successUrl: `${server.url}/billing/done?session_id={CHECKOUT_SESSION_ID}`,
      cancelUrl: `${server.url}/billing/done?canceled=1`,
    })
    expect(checkout.status).toBe(200)
    // Without PUBLIC_URL the page's address is a guess at this host; the path is what counts.
    const checkoutPath = new URL(String(checkout.body.url)).pathname
    const page = await browser.newPage()
    await page.goto(`${server.url}${checkoutPath}`)
    expect(await page.locator('h1').textContent()).toBe('Subscribe to B2B')
    expect(await page.locator('body').textContent()).toContain('$199.00 / month')
    expect(await page.locator('body').textContent()).toContain('asks its operator to approve')
    await Promise.all([
      page.waitForURL(/\/billing\/done\?session_id=/),
      page.getByRole('button', { name: 'Confirm subscription' }).click(),
    ])
    const sessionId = new URL(page.url()).searchParams.get('session_id')
    expect(sessionId).toBe(checkoutPath.split('/').pop())
    expect(await page.locator('h1').textContent()).toBe("Waiting for the operator's approval")
    expect(await page.locator('#approve-command').textContent()).toBe(
      `npm run cli -- billing approve ${sessionId}`,
    )
    const waiting = await api('POST', `/payment/subscription-process?secret=${sessionId}`)
    expect(waiting.body).toMatchObject({ statusCode: 409, code: 'checkout_pending_approval' })
    expect((await api('GET', `/organization/${organizationId}`)).body.productType).toBe('standard')

    const approved = await runCli(['billing', 'approve', String(sessionId)], { DATA_DIR: data.dir })
    expect(approved.code, approved.stderr).toBe(0)
    await page.reload()
    expect(await page.locator('h1').textContent()).toBe('All done')
    const processed = await api('POST', `/payment/subscription-process?secret=${sessionId}`)
    expect(processed.status, JSON.stringify(processed.body)).toBe(200)
    const organization = (await api('GET', `/organization/${organizationId}`)).body
    expect(organization.productType).toBe('plus_employee')
    expect(organization.identificationCredits).toBe(credits + 10000)

    const portal = await api('POST', '/payment/customer-portal', { organizationId })
    expect(portal.status).toBe(200)
    await page.goto(`${server.url}${new URL(String(portal.body.url)).pathname}`)
    expect(await page.locator('#state').textContent()).toMatch(/^Active: renews on \d{4}-\d\d-\d\d\.$/)
    await Promise.all([
      page.waitForURL(/\/billing\/portal\//),
      page.getByRole('button', { name: 'Cancel subscription' }).click(),
    ])
    await page.waitForSelector('text=Canceled: runs until')
    expect(await page.getByRole('button', { name: 'Cancel subscription' }).count()).toBe(0)
    const info = (await api('GET', `/payment/customer-info?organizationId=${organizationId}`)).body
    expect(info).toMatchObject({ status: 'active', cancelAtPeriodEnd: true, activeProductId: 'prod_b2b' })
    await page.close()
  }, 120_000)
})
