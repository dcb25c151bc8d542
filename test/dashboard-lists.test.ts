import { readFileSync } from 'node:fs'
import type { BootstrapFile } from '@visitor-id/core/organizations'
import type { Page } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { adsSteps } from './fixtures/ads-platforms.js'
import { dashboardBrowser } from './fixtures/dashboard-browser.js'

// The dashboard's lists and integrations in a real browser against a real server filled by
// `seed-demo`, both integration types installed through a real OAuth 2.0 server and syncing to the
// local neutral ads API: a list counted, saved, refreshed and exported; the audience syncs of lists
// as the API gives them; the banner of an integration to reconnect and its Reconnect. axe-core on
// every page and a screenshot of each in test-results/dashboard/.

const d = dashboardBrowser({ adsPlatforms: true, signIn: true })
const { api, open, expectAccessible, screenshot } = d
let page: Page
let boot: BootstrapFile
let baseUrl: string

beforeAll(() => {
  ;({ page, boot } = d)
  baseUrl = d.server.url
})

const day = 24 * 3600

/** A new sub-organization with socialAds installed, its grant lasting `seconds` (no refresh token); its id. */
async function withSocialAds(name: string, seconds: number) {
  const { id } = await api<{ id: string }>('/organization', {
    method: 'POST',
    body: JSON.stringify({ organizationName: name }),
  })
  d.platforms.grantLifetime(seconds)
  try {
    await adsSteps(baseUrl, boot.apiKey).install(id, 'socialAds')
  } finally {
    d.platforms.grantLifetime(undefined)
  }
  return id
}

/** The organization's socialAds integration, as the API lists it. */
const socialAds = async (organizationId: string) =>
  (await api<{ type: string; status: string; expiresAt: string }[]>(`/integrations/${organizationId}`)).find(
    (integration) => integration.type === 'socialAds',
  )!

/**
 * Waits for the organization's integrations, asked for after `action`, to be read and shown: the
 * banners' box says so, and no banner then means none is due.
 */
async function shown(organizationId: string, action: () => Promise<unknown>) {
  const read = page.waitForResponse((r) => r.url().endsWith(`/integrations/${organizationId}`))
  await action()
  await read
  await expect.poll(() => page.locator('[data-integrations]').getAttribute('data-integrations')).toBe('read')
}

/** Picks the organization in the header and waits for its integrations to be shown. */
const pick = (organizationId: string) =>
  shown(organizationId, () => page.getByLabel('Organization', { exact: true }).selectOption(organizationId))

describe('dashboard lists and integrations', { timeout: 60_000 }, () => {
  it('lists: counts as the filter is edited, saves, refreshes and exports', async () => {
    await open('Lists')
    const expected = await api<{ count: number }>('/contacts/count', {
      method: 'POST',
      body: JSON.stringify({ company: { industries: ['SaaS'] } }),
    })
    await page.locator('#list-company-industries').fill('SaaS')
    await expect.poll(() => page.locator('.count').getAttribute('data-count')).toBe(String(expected.count))
    await page.getByLabel(/List name/).fill('SaaS audience')
    await page.getByRole('button', { name: 'Save list' }).click()
    const row = page.locator('tr[data-list="SaaS audience"]')
    await row.waitFor()
    const refreshed = page.waitForResponse((r) => r.url().includes('/lists/refresh/'))
    await page.getByRole('button', { name: 'Refresh SaaS audience' }).click()
    expect((await refreshed).status()).toBe(200)
    const download = page.waitForEvent('download')
    await page.getByRole('button', { name: 'Export CSV of SaaS audience' }).click()
    expect(readFileSync((await (await download).path())!, 'utf8')).toContain('email_sha256')
    const lists = await api<{ name: string; contactsNum: number }[]>(`/lists/${boot.organizationId}`)
    const saved = lists.find((list) => list.name === 'SaaS audience')!
    // The list loads again after its refresh: the count shown is the refreshed one once it did.
    await expect.poll(() => row.locator('td.num').innerText()).toBe(saved.contactsNum.toLocaleString('en-US'))
    await screenshot('lists')
    await expectAccessible('lists')
  })

  it('lists: the ads platform each list syncs to, its last sync and counts, a failure’s error', async () => {
    const organizationId = boot.organizationId
    const steps = adsSteps(baseUrl, boot.apiKey)
    for (const type of ['searchAds', 'socialAds'] as const) {
      await steps.install(organizationId, type)
      await steps.select(organizationId, type, '111')
    }
    const save = (listName: string, industries: string[]) =>
      api<{ id: string }>('/lists/save', {
        method: 'POST',
        body: JSON.stringify({
          organizationId,
          listName,
          contacts_found: 0,
          filter: { company: { industries } },
        }),
      })
    const refreshed = async (listId: string, flowId: string, n: number) => {
      await api(`/lists/refresh/${listId}`, { method: 'POST' })
      return steps.run(organizationId, flowId, n)
    }
    // Google Ads: a sync, then the list narrowed (saving refreshes it): its Fintech members removed.
    const google = await save('Google audience', ['SaaS', 'Fintech'])
    const googleFlow = await steps.syncingFlow(organizationId, google.id, 'searchAds')
    expect((await refreshed(google.id, googleFlow, 1)).status).toBe('success')
    await save('Google audience', ['SaaS'])
    const narrowed = await steps.run(organizationId, googleFlow, 2)
    expect(narrowed.status, JSON.stringify(narrowed)).toBe('success')
    // Meta: the platform fails the second batch.
    const meta = await save('Meta audience', ['Fintech'])
    const metaFlow = await steps.syncingFlow(organizationId, meta.id, 'socialAds')
    d.platforms.ads.failMembers({ status: 500, afterBatches: 1, message: 'the audience is locked' })
    expect((await refreshed(meta.id, metaFlow, 1)).status).toBe('failed')

    type Sync = { status: string; audienceId: string; sent: number; removed: number; received: number }
    const lists = await api<{ name: string; lastAudienceSync: Sync }[]>(`/lists/${organizationId}`)
    const syncOf = (name: string) => lists.find((list) => list.name === name)!.lastAudienceSync
    const [googleSync, metaSync] = [syncOf('Google audience'), syncOf('Meta audience')]
    expect(googleSync).toMatchObject({ status: 'success', sent: 0 })
    expect(googleSync.removed).toBeGreaterThan(0)
    expect(metaSync).toMatchObject({ status: 'failed', sent: 10 })

    await page.goto(`${baseUrl}/app/lists`)
    const summary = (name: string) => page.locator(`tr[data-list="${name}"] .audience-sync`).innerText()
    const n = (value: number) => value.toLocaleString('en-US')
    // The lists and the integrations (the platforms' and accounts' names) load apart, in either
    // order: until both did, a row names its account by id alone. The words are read once they name it.
    await expect
      .poll(() => summary('Google audience'))
      .toContain(`Synced to Google Ads · account Acme Ads (111) · audience ${googleSync.audienceId}`)
    const googleWords = await summary('Google audience')
    expect(googleWords).toMatch(/Last sync\s+Succeeded, finished /)
    expect(googleWords).toMatch(
      new RegExp(
        `Members\\s+0 added · ${n(googleSync.removed)} removed · ${n(googleSync.received)} received · 0 invalid`,
      ),
    )
    await expect
      .poll(() => summary('Meta audience'))
      .toContain(`Not yet synced to Meta · account Acme Ads (111) · audience ${metaSync.audienceId}`)
    const metaWords = await summary('Meta audience')
    expect(metaWords).toMatch(/Last sync\s+Failed, stopped /)
    expect(metaWords).toMatch(/Members\s+10 added · 0 removed · 10 received · 0 invalid/)
    expect(metaWords).toMatch(/Error\s+the ads API answered 500: the audience is locked/)
    expect(await summary('SaaS audience')).toBe('Not connected to an ads platform')
    await screenshot('lists-audience-sync')
    await expectAccessible('lists-audience-sync')
  })

  it('an integration within a week of its end shows a banner on every page; Reconnect installs it again', async () => {
    const { platforms } = d
    const steps = adsSteps(baseUrl, boot.apiKey)
    const expiring = await withSocialAds('Expiring ads', 3 * day)
    const steady = await withSocialAds('Steady ads', 60 * day)
    const banner = page.locator('.reconnect')
    // The organization picker lists the new organizations once the app loads again.
    await page.reload()
    const lasting = await socialAds(steady)
    expect(lasting.status).toBe('connected')
    expect(Date.parse(lasting.expiresAt) - Date.now()).toBeGreaterThan(59 * day * 1000)
    await pick(steady)
    expect(await banner.count()).toBe(0)
    await open('Lists')
    expect(await banner.count()).toBe(0)

    await pick(expiring)
    const listed = await socialAds(expiring)
    expect(listed.status).toBe('reconnect_soon')
    expect(Date.parse(listed.expiresAt) - Date.now()).toBeLessThanOrEqual(3 * day * 1000)
    // The day it stops, as the browser shows it (its time zone).
    const ends = await page.evaluate(
      (iso) => new Date(iso).toLocaleDateString(undefined, { month: 'short', day: 'numeric' }),
      listed.expiresAt,
    )
    await expect.poll(() => banner.innerText()).toContain(`Meta stops working on ${ends}`)
    expect(await banner.getAttribute('data-status')).toBe('reconnect_soon')
    for (const title of ['Overview', 'Companies', 'Settings']) {
      await open(title)
      await expect.poll(() => banner.count()).toBe(1)
      expect(await banner.innerText()).toContain(`Meta stops working on ${ends}`)
    }
    // The page as a whole, once every part of it loaded.
    await expect.poll(() => page.getByText('Loading…').count()).toBe(0)
    await screenshot('reconnect-banner')
    await expectAccessible('reconnect banner')

    // Reconnect: the API's authorization page for this organization (the browser stops there, where
    // a person would authorize), then a fresh 60-day grant.
    let authorizeUrl: string | undefined
    const atAuthorize = (url: URL) => url.href.startsWith(`${platforms.authorizeUrl}?`)
    await page.route(atAuthorize, async (route) => {
      authorizeUrl = route.request().url()
      await route.fulfill({ contentType: 'text/html', body: '<title>Authorize</title>' })
    })
    await banner.getByRole('button', { name: 'Reconnect Meta' }).click()
    await expect.poll(() => authorizeUrl).toBeDefined()
    await page.unroute(atAuthorize)
    const asked = new URL(authorizeUrl!).searchParams
    expect(asked.get('client_id')).toBe('visitor-id-app')
    expect(new URL(asked.get('redirect_uri')!).pathname).toBe('/integrations/callback/socialAds')
    platforms.grantLifetime(60 * day)
    try {
      await steps.authorize(authorizeUrl!)
    } finally {
      platforms.grantLifetime(undefined)
    }
    const renewed = await socialAds(expiring)
    expect(renewed.status).toBe('connected')
    expect(Date.parse(renewed.expiresAt) - Date.now()).toBeGreaterThan(59 * day * 1000)
    // Back in the app (the session kept the organization): no banner any more.
    await shown(expiring, () => page.goto(`${baseUrl}/app/`))
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor()
    expect(await banner.count()).toBe(0)
    await pick(boot.organizationId)
  })

  it('raised no page error and no CSP violation', () => {
    d.expectNoPageErrors()
  })
})
