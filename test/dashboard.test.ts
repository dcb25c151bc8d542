import { readFileSync } from 'node:fs'
import type { BootstrapFile } from '@visitor-id/core/organizations'
import type { Page } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { dashboardBrowser } from './fixtures/dashboard-browser.js'

// The dashboard (/app) in a real browser against a real server filled by `seed-demo`: the app's
// serving, sign-in, the overview, companies and visitors pages with figures checked against the
// API, the profile panel, the keyboard; axe-core on every page (no serious or critical violation)
// and a screenshot of each in test-results/dashboard/. ICP configs, settings and the agency's
// organizations: dashboard-settings.test.ts; lists, audience syncs and the reconnect banner:
// dashboard-lists.test.ts.

const d = dashboardBrowser()
const { api, open, expectAccessible, screenshot, numberIn, timeZone } = d
let page: Page
let boot: BootstrapFile
let baseUrl: string

beforeAll(() => {
  ;({ page, boot } = d)
  baseUrl = d.server.url
})

describe('dashboard', { timeout: 60_000 }, () => {
  it('serves the app with a self-only CSP and cacheable hashed assets', async () => {
    const response = await fetch(`${baseUrl}/app`)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-security-policy')).toContain("script-src 'self'")
    const html = await response.text()
    const script = /src="\/app\/(app-[0-9a-f]+\.js)"/.exec(html)![1]!
    const asset = await fetch(`${baseUrl}/app/${script}`)
    expect(asset.status).toBe(200)
    expect(asset.headers.get('cache-control')).toContain('immutable')
    expect((await fetch(`${baseUrl}/app/visitors`)).status).toBe(200)
  })

  it('refuses a wrong key with a readable message, then signs in with the bootstrap keys', async () => {
    await page.goto(`${baseUrl}/app`)
    await page.getByLabel('API key').fill('bsk_live_00000000000000000000000000000000')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await expect.poll(() => page.getByRole('alert').innerText()).toContain('This API key was refused')
    await screenshot('sign-in')
    await expectAccessible('sign-in')

    await page.getByLabel('API key').fill(boot.apiKey)
    await page.getByLabel(/Partner key/).fill(boot.partnerKey)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor()
    // The key stays in sessionStorage, never in the URL.
    expect(page.url()).not.toContain(boot.apiKey)
    expect(await page.evaluate(() => JSON.stringify(sessionStorage))).toContain(boot.apiKey)
  })

  it('overview: totals, previous period and chart as the API gives them, in the browser time zone', async () => {
    const totalsUrls: URL[] = []
    const onRequest = (r: { url: () => string }) => {
      if (r.url().includes('/total?')) totalsUrls.push(new URL(r.url()))
    }
    page.on('request', onRequest)
    // A controllable clock (time still flows), to see the minute's refresh without waiting for it.
    await page.clock.install()
    const chartRequest = page.waitForRequest((r) => r.url().includes('/visitors/chart?'))
    await page.reload()
    await expect.poll(() => totalsUrls.length).toBe(2)
    const [totalsUrl, previousUrl] = totalsUrls as [URL, URL]
    // The last 30 days from local midnight, in the browser's time zone; the previous 30 just before.
    const expectedFrom = await page.evaluate(() => {
      const now = new Date()
      return new Date(now.getFullYear(), now.getMonth(), now.getDate() - 29).toISOString()
    })
    expect(totalsUrl.searchParams.get('from')).toBe(expectedFrom)
    expect(Date.parse(previousUrl.searchParams.get('to')!)).toBe(Date.parse(expectedFrom) - 1)
    const chartUrl = new URL((await chartRequest).url())
    expect(totalsUrl.searchParams.get('timezone')).toBe(timeZone)
    expect(chartUrl.searchParams.get('timezone')).toBe(timeZone)
    expect(chartUrl.searchParams.get('interval')).toBe('day')
    const totals = await api<Record<string, number>>(
      `${totalsUrl.pathname.replace('/api/v1', '')}${totalsUrl.search}`,
    )
    await page.locator('[data-figure="visitors"] .figure-value').waitFor()
    expect(totals.visitors).toBeGreaterThan(0)
    expect(await numberIn('[data-figure="visitors"] .figure-value')).toBe(totals.visitors)
    expect(await numberIn('[data-figure="identified"] .figure-value')).toBe(totals.identifiedVisitors)
    expect(await numberIn('[data-figure="companies"] .figure-value')).toBe(totals.companies)
    expect(await numberIn('[data-figure="icp"] .figure-value')).toBe(totals.icpVisitors)
    // The filtered traffic seed-demo counted: the bots first, then every reason.
    const { filtered } = totals as unknown as {
      filtered: { total: number; byReason: Record<string, number> }
    }
    expect(filtered.byReason.bot).toBeGreaterThan(0)
    expect(await numberIn('[data-filtered-bots]')).toBe(
      filtered.byReason.bot! + filtered.byReason.automation!,
    )
    for (const [reason, count] of Object.entries(filtered.byReason)) {
      expect(await numberIn(`[data-reason="${reason}"] .num`), reason).toBe(count)
    }
    const previous = await api<Record<string, number>>(
      `${previousUrl.pathname.replace('/api/v1', '')}${previousUrl.search}`,
    )
    expect(await page.locator('[data-figure="visitors"] .figure-previous').innerText()).toMatch(
      new RegExp(`^${previous.visitors} in the previous period`),
    )
    await expect.poll(() => page.locator('.chart rect.bar').count()).toBeGreaterThanOrEqual(30)
    const topCompany = await api<{ data: { name: string }[] }>(
      `/companies?organizationId=${boot.organizationId}&sort=visitors&order=desc&limit=1&from=${totalsUrl.searchParams.get('from')}&to=${totalsUrl.searchParams.get('to')}`,
    )
    await expect
      .poll(() => page.locator('#top-title + ol li').first().innerText())
      .toContain(topCompany.data[0]!.name)
    await expect.poll(() => page.locator('#latest-title + ul li').count()).toBeGreaterThan(0)
    await screenshot('overview')
    await expectAccessible('overview')

    // It reloads itself every minute.
    await page.clock.fastForward(61_000)
    await expect.poll(() => totalsUrls.length).toBe(4)
    page.off('request', onRequest)

    // Today: hourly buckets.
    const hourly = page.waitForRequest(
      (r) => r.url().includes('/visitors/chart?') && r.url().includes('interval=hour'),
    )
    await page.getByLabel('Range').selectOption('today')
    await hourly
    // Custom days: from a chosen day to today.
    const since = await page.evaluate(() => {
      const now = new Date()
      const day = new Date(now.getFullYear(), now.getMonth(), now.getDate() - 9)
      return { iso: day.toISOString(), input: day.toLocaleDateString('sv') }
    })
    await page.getByLabel('Range').selectOption('custom')
    const custom = page.waitForRequest(
      (r) => r.url().includes('/total?') && r.url().includes(encodeURIComponent(since.iso)),
    )
    await page.getByLabel('From').fill(since.input)
    await custom
  })

  it('companies: sorted by the server, paginated, CSV download, a company leads to its visitors', async () => {
    await open('Companies')
    const first = await api<{ data: { name: string; identifiedVisitors: number }[]; total: number }>(
      `/companies?organizationId=${boot.organizationId}&sort=identifiedVisitors&order=desc&limit=25`,
    )
    const sorted = page.waitForResponse((r) => r.url().includes('sort=identifiedVisitors'))
    await page.getByRole('button', { name: /^Identified/ }).click()
    await sorted
    await expect.poll(() => page.locator('th[aria-sort="descending"]').innerText()).toContain('Identified')
    await expect.poll(() => page.locator('tbody tr').first().innerText()).toContain(first.data[0]!.name)
    await expect.poll(() => page.locator('.pager').innerText()).toContain(`(${first.total} in all)`)
    const download = page.waitForEvent('download')
    await page.getByRole('button', { name: 'Download CSV' }).click()
    const file = await download
    expect(file.suggestedFilename()).toBe('companies.csv')
    expect(readFileSync((await file.path())!, 'utf8').split('\n')[0]).toContain('name')
    await screenshot('companies')
    await expectAccessible('companies')
    // A company's name leads to its visitors.
    const company = (await page.locator('tbody tr').first().locator('.sub').innerText()).trim()
    const visitorsOf = page.waitForResponse(
      (r) =>
        r.url().includes('/companies/visitors?') && r.url().includes(`domain=${encodeURIComponent(company)}`),
    )
    await page.locator('tbody tr').first().getByRole('link').click()
    await page.getByRole('heading', { level: 1, name: 'Visitors' }).waitFor()
    const ofCompany = (await (await visitorsOf).json()) as { total: number }
    expect(ofCompany.total).toBeGreaterThan(0)
    expect(page.url()).toContain(`/app/visitors?domain=${encodeURIComponent(company)}`)
    await expect.poll(() => page.locator('.pager').innerText()).toContain(`(${ofCompany.total} in all)`)
    await expect.poll(() => page.locator('.chip').innerText()).toContain(company)
    await page.goBack()
    await page.getByRole('heading', { level: 1, name: 'Companies' }).waitFor()
  })

  it('visitors: ICP filter, the profile panel with contact, company, sessions and a phone search', async () => {
    await open('Visitors')
    const icpOnly = page.waitForResponse(
      (r) => r.url().includes('/companies/visitors?') && r.url().includes('ICPOnly=1'),
    )
    await page.getByLabel('ICP matches only').check()
    const filtered = (await (await icpOnly).json()) as { total: number }
    await expect.poll(() => page.locator('.pager').innerText()).toContain(`(${filtered.total} in all)`)
    const all = page.waitForResponse(
      (r) => r.url().includes('/companies/visitors?') && !r.url().includes('ICPOnly'),
    )
    await page.getByLabel('ICP matches only').uncheck()
    // An identified visitor of the page shown (the page's own answer says which).
    const shown = (await (await all).json()) as { data: { id: string; identifiedAt: string | null }[] }
    const identified = shown.data.find((row) => row.identifiedAt)!
    const profile = await api<{
      contact: { email: string; linkedinUrl: string | null }
      company: { name: string }
    }>(`/visitor-tracking/${boot.organizationId}/visitors/${identified.id}`)
    // By keyboard: the name is a button.
    await page.locator(`[data-visitor="${identified.id}"]`).focus()
    await page.keyboard.press('Enter')
    const dialog = page.getByRole('dialog')
    await dialog.getByRole('heading', { name: 'Contact' }).waitFor()
    expect(await dialog.innerText()).toContain(profile.contact.email)
    if (profile.company) expect(await dialog.innerText()).toContain(profile.company.name)
    await expect.poll(() => dialog.getByRole('heading', { name: /^Sessions \(\d+\)/ }).count()).toBe(1)
    await expect.poll(() => dialog.innerText()).toContain('Costs 5 credits')
    await screenshot('visitor-profile')
    await expectAccessible('visitor profile')
    // The bootstrap organization is B2B and seeded contacts have a LinkedIn URL: the search runs.
    expect(profile.contact.linkedinUrl).toBeTruthy()
    await dialog.getByRole('button', { name: 'Search phone number' }).click()
    await expect.poll(() => dialog.locator('.status').getAttribute('data-status')).toBe('ongoing')
    // Opened again, the panel shows how the search stands from the profile's phoneNumberSearchStatus
    // (or from the API's 409 to a new start).
    await page.keyboard.press('Escape')
    await page.locator(`[data-visitor="${identified.id}"]`).click()
    await dialog.getByRole('heading', { name: 'Phone number' }).waitFor()
    await expect
      .poll(
        async () => {
          if ((await dialog.locator('.status').getAttribute('data-status')) === 'found') return 'found'
          await dialog.getByRole('button', { name: /Search/ }).click()
          await page.waitForTimeout(500)
          return dialog.locator('.status').getAttribute('data-status')
        },
        { timeout: 20_000, interval: 1000 },
      )
      .toMatch(/^(found|not_found)$/)
    const after = await api<{ phoneNumber?: string }>(
      `/visitor-tracking/${boot.organizationId}/visitors/${identified.id}`,
    )
    expect(await dialog.locator('.status').getAttribute('data-status')).toBe(
      after.phoneNumber ? 'found' : 'not_found',
    )
    await page.keyboard.press('Escape')
    await expect.poll(() => dialog.count()).toBe(0)
    await screenshot('visitors')
    await expectAccessible('visitors')
  })

  it('works from the keyboard: a skip link first, links followed with Enter, a visible focus', async () => {
    await page.goto(`${baseUrl}/app/`)
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor()
    await page.keyboard.press('Tab')
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content')
    await page.keyboard.press('Enter')
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('main')
    await page.getByRole('link', { name: 'Lists', exact: true }).focus()
    // The focus ring: an outline of its own, not the browser's default.
    expect(await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle)).toBe('solid')
    await page.keyboard.press('Enter')
    await page.getByRole('heading', { level: 1, name: 'Lists' }).waitFor()
    expect(page.url()).toBe(`${baseUrl}/app/lists`)
  })

  it('raised no page error and no CSP violation', () => {
    d.expectNoPageErrors()
  })
})
