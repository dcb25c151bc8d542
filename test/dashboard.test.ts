import { mkdirSync, readFileSync } from 'node:fs'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import type { BootstrapFile } from '@visitor-id/core/organizations'
import { closeChromium, findChromium, launchChromium } from '@visitor-id/testing/chromium'
import { startZoneServer } from '@visitor-id/testing/dns-zone-server'
import {
  killServerProcess,
  repoRoot,
  runCli,
  type ServerProcess,
  startServerProcess,
} from '@visitor-id/testing/server-process'
import { tempDir } from '@visitor-id/testing/temp-dir'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

// The dashboard (/app) in a real browser against a real server filled by `seed-demo`: sign-in,
// every page with figures checked against the API, the profile panel, an ICP config, partner
// rules (live validation, preview), a list, a key created and revoked; axe-core on every page
// (no serious or critical violation) and a screenshot of each in test-results/dashboard/.

const data = tempDir('vid-dashboard-')
const shots = path.join(repoRoot, 'test-results', 'dashboard')
const timeZone = 'America/New_York'
let server: ServerProcess | undefined
let boot: BootstrapFile
let browser: Browser
let context: BrowserContext
let page: Page
const pageErrors: string[] = []
/** The partner's webhook receiver: every request it got. */
const received: { headers: IncomingHttpHeaders; body: string }[] = []
let receiver: Server
let dns: Awaited<ReturnType<typeof startZoneServer>>
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

const api = async <T = Record<string, unknown>>(route: string, init: RequestInit = {}, partner = false) => {
  const response = await fetch(`${server!.url}/api/v1${route}`, {
    ...init,
    headers: {
      ...(partner ? { 'x-partner-api-key': boot.partnerKey } : { 'x-api-key': boot.apiKey }),
      ...(init.body ? { 'content-type': 'application/json' } : {}),
    },
  })
  expect(response.status, route).toBeLessThan(300)
  const text = await response.text()
  return (text ? JSON.parse(text) : undefined) as T
}

/** Goes to a page of the app by its navigation link, as a person would. */
async function open(title: string) {
  if (await page.locator('dialog[open]').count()) await page.keyboard.press('Escape')
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: title, exact: true }).click()
  await page.getByRole('heading', { level: 1, name: title }).waitFor()
}

/** axe-core in the page (its CSP stays on: evaluated through the driver, not a script tag). */
async function expectAccessible(name: string) {
  await page.evaluate(axeSource)
  const violations = await page.evaluate(async () => {
    const axe = (
      window as unknown as { axe: { run: (context: Document) => Promise<{ violations: unknown[] }> } }
    ).axe
    const result = await axe.run(document)
    return (result.violations as { id: string; impact: string; nodes: { target: string[] }[] }[]).map(
      (v) => ({
        id: v.id,
        impact: v.impact,
        targets: v.nodes.slice(0, 3).map((node) => node.target.join(' ')),
      }),
    )
  })
  const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
  expect(serious, `${name}: ${JSON.stringify(serious)}`).toEqual([])
}

async function screenshot(name: string) {
  await page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true })
}

const numberIn = async (selector: string) =>
  Number((await page.locator(selector).first().innerText()).replace(/[^\d]/g, ''))

beforeAll(async () => {
  mkdirSync(shots, { recursive: true })
  // Bootstrap, then seed the demo organization with the server stopped (seed-demo opens the store).
  server = await startServerProcess({ DATA_DIR: data.dir })
  boot = JSON.parse(readFileSync(path.join(data.dir, 'bootstrap.json'), 'utf8')) as BootstrapFile
  server.child.kill('SIGTERM')
  await server.exit
  const seeded = await runCli(['seed-demo', '--visitors', '150'], { DATA_DIR: data.dir })
  expect(seeded.code, seeded.stderr).toBe(0)
  receiver = createServer((request, response) => {
    let body = ''
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString()
    })
    request.on('end', () => {
      received.push({ headers: request.headers, body })
      response.end('ok')
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  // The custom domain's CNAME, as the partner would create it, in a DNS zone of the test's own.
  dns = await startZoneServer({ 'track.example.com': { CNAME: 'cname.visitor-id.test' } })
  // The webhook receiver is on loopback; custom domains point their CNAME at a test name.
  server = await startServerProcess({
    DATA_DIR: data.dir,
    WEBHOOK_ALLOW_PRIVATE: '1',
    CUSTOM_DOMAIN_TARGET: 'cname.visitor-id.test',
    DNS_SERVERS: dns.address,
  })
  browser = await launchChromium(await findChromium())
  context = await browser.newContext({
    viewport: { width: 1280, height: 900 },
    timezoneId: timeZone,
    acceptDownloads: true,
  })
  page = await context.newPage()
  page.setDefaultTimeout(10_000)
  page.on('pageerror', (error) => pageErrors.push(error.message))
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy/i.test(message.text()))
      pageErrors.push(message.text())
  })
  page.on('dialog', (dialog) => void dialog.accept())
}, 120_000)

afterAll(async () => {
  await closeChromium(browser)
  await killServerProcess(server)
  await new Promise((resolve) => receiver?.close(resolve))
  await dns?.close()
  data.remove()
})

describe('dashboard', { timeout: 60_000 }, () => {
  it('serves the app with a self-only CSP and cacheable hashed assets', async () => {
    const response = await fetch(`${server!.url}/app`)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-security-policy')).toContain("script-src 'self'")
    const html = await response.text()
    const script = /src="\/app\/(app-[0-9a-f]+\.js)"/.exec(html)![1]!
    const asset = await fetch(`${server!.url}/app/${script}`)
    expect(asset.status).toBe(200)
    expect(asset.headers.get('cache-control')).toContain('immutable')
    expect((await fetch(`${server!.url}/app/visitors`)).status).toBe(200)
  })

  it('refuses a wrong key with a readable message, then signs in with the bootstrap keys', async () => {
    await page.goto(`${server!.url}/app`)
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

  it('ICP configs: creates an organization config, and partner rules validated as typed and previewed', async () => {
    const statsRequest = page.waitForRequest(
      (r) => r.url().includes('/icp-configs/stats?') && !r.url().includes('/partner/'),
    )
    await open('ICP configs')
    const statsUrl = new URL((await statsRequest).url())
    const stats = await api<{ slug: string; visitors: number; matches: number }[]>(
      `${statsUrl.pathname.replace('/api/v1', '')}${statsUrl.search}`,
    )
    const demo = page.locator(`tr[data-slug="${stats[0]!.slug}"]`)
    await expect
      .poll(() => demo.locator('td.num').allInnerTexts())
      .toEqual([stats[0]!.visitors.toLocaleString('en-US'), stats[0]!.matches.toLocaleString('en-US')])
    await page.getByRole('button', { name: 'New ICP config' }).click()
    await page.getByLabel('Name', { exact: true }).fill('Fintech buyers')
    await page.locator('#config-company-industries').fill('Fintech, SaaS')
    await page.locator('#config-contact-seniorities').fill('c-level')
    await page.getByRole('button', { name: 'Create and score' }).click()
    await page.locator('tr', { hasText: 'Fintech buyers' }).waitFor()
    const configs = await api<{ name: string; filter: unknown }[]>(
      `/organizations/${boot.organizationId}/icp-configs`,
    )
    expect(configs.find((c) => c.name === 'Fintech buyers')?.filter).toEqual({
      company: { industries: ['Fintech', 'SaaS'] },
      contact: { seniorities: ['c-level'] },
    })
    await page.getByRole('button', { name: 'Edit Fintech buyers' }).click()
    await page.getByLabel('Priority (lower first)').fill('2')
    await page.getByRole('button', { name: 'Save changes' }).click()
    await expect
      .poll(() => page.locator('tr', { hasText: 'Fintech buyers' }).innerText())
      .toContain('priority 2')
    const edited = await api<{ priority: number }>(
      `/organizations/${boot.organizationId}/icp-configs/fintech-buyers`,
    )
    expect(edited.priority).toBe(2)
    const recalculated = page.waitForResponse((r) => r.url().endsWith('/recalculate'))
    await page.getByRole('button', { name: 'Recalculate Fintech buyers' }).click()
    expect((await recalculated).status()).toBe(202)

    await page.getByRole('button', { name: 'New partner rules' }).click()
    await page.getByLabel('Label').fill('Engaged SaaS')
    // Every comparator of the rule language, each with a type it applies to: the form builds rules
    // icp-engine accepts.
    const sweep: [type: string, comparator: string, value?: string | [string, string]][] = [
      ['industry', 'equals', 'SaaS'],
      ['industry', 'not_equals', 'Retail'],
      ['job_title', 'contains', 'VP'],
      ['job_title', 'not_contains', 'Intern'],
      ['domain', 'starts_with', 'acme'],
      ['domain', 'ends_with', '.example'],
      ['company_size', 'gt', '50'],
      ['page_view_count', 'gte', '2'],
      ['last_seen_days', 'lt', '30'],
      ['session_count', 'lte', '10'],
      ['country', 'in', 'US, GB'],
      ['country', 'not_in', 'FR'],
      ['utm_source', 'has_any', 'google, linkedin'],
      ['utm_source', 'has_all', 'google'],
      ['icp_score', 'between', ['50', '100']],
      ['linkedin_url', 'exists'],
      ['seniority', 'not_exists'],
      ['is_hosting', 'equals', 'false'],
    ]
    for (const [type, comparator, value] of sweep) {
      await page.locator('#g0c0-type').selectOption(type)
      await page.locator('#g0c0-comparator').selectOption(comparator)
      if (Array.isArray(value)) {
        await page.locator('#g0c0-value-low').fill(value[0])
        await page.locator('#g0c0-value-high').fill(value[1])
      } else if (type === 'is_hosting') await page.locator('#g0c0-value').selectOption(value!)
      else if (value !== undefined) await page.locator('#g0c0-value').fill(value)
      await expect
        .poll(() => page.locator('[data-validity]').getAttribute('data-validity'), {
          message: `${type} ${comparator}`,
        })
        .toBe('valid')
    }
    await page.locator('#g0c0-type').selectOption('company_size')
    await page.locator('#g0c0-comparator').selectOption('between')
    await page.locator('#g0c0-value-low').fill('500')
    await page.locator('#g0c0-value-high').fill('10')
    // icp-engine's own message, as the API would give it, while typing.
    await expect.poll(() => page.locator('[data-validity]').getAttribute('data-validity')).toBe('invalid')
    await expect.poll(() => page.locator('[data-condition="g0c0"] .issues').innerText()).toMatch(/\S/)
    await page.locator('#g0c0-value-high').fill('100000')
    await expect.poll(() => page.locator('[data-validity]').getAttribute('data-validity')).toBe('valid')
    await page.getByRole('button', { name: 'Add condition to group 1' }).click()
    await page.locator('#g0c1-type').selectOption('page_view_count')
    await page.locator('#g0c1-comparator').selectOption('gte')
    await page.locator('#g0c1-value').fill('1')
    await page.getByRole('button', { name: 'Add group' }).click()
    await page.locator('#g1c0-type').selectOption('utm_source')
    await page.locator('#g1c0-comparator').selectOption('in')
    await page.locator('#g1c0-value').fill('google, linkedin')
    await expect.poll(() => page.locator('[data-validity]').getAttribute('data-validity')).toBe('valid')
    // Preview against a visitor's facts.
    const options = await page.locator('#preview-visitor option').count()
    expect(options).toBeGreaterThan(1)
    await page.locator('#preview-visitor').selectOption({ index: 1 })
    await expect.poll(() => page.locator('[data-preview]').count()).toBe(1)
    expect(await page.locator('[data-preview]').innerText()).toMatch(/score \d+/)
    await screenshot('icp-partner-rules')
    await expectAccessible('ICP partner rules')
    await page.getByRole('button', { name: 'Create and score' }).click()
    await page.locator('li.card', { hasText: 'Engaged SaaS' }).waitFor()
    const partner = await api<{ icpConfigs: { label: string; rules: { groups: unknown[] } }[] }>(
      `/partner/organizations/${boot.organizationId}/icp-configs`,
      {},
      true,
    )
    expect(partner.icpConfigs.find((c) => c.label === 'Engaged SaaS')?.rules.groups).toHaveLength(2)
    await screenshot('icp')
    await expectAccessible('ICP configs')
    await page.getByRole('button', { name: 'Delete Fintech buyers' }).click()
    await expect.poll(() => page.locator('tr', { hasText: 'Fintech buyers' }).count()).toBe(0)
    const left = await api<{ slug: string }[]>(`/organizations/${boot.organizationId}/icp-configs`)
    expect(left.map((config) => config.slug)).not.toContain('fintech-buyers')
  })

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
    expect(await row.locator('td.num').innerText()).toBe(saved.contactsNum.toLocaleString('en-US'))
    await screenshot('lists')
    await expectAccessible('lists')
  })

  it('settings: snippets, a key created with scopes and revoked, webhooks, domain, email preferences', async () => {
    await open('Settings')
    const snippet = await api<{ script: string }>(
      `/visitor-tracking/${boot.organizationId}/installation/script/jsSnippet`,
    )
    await expect.poll(() => page.locator('.snippet pre').first().innerText()).toBe(snippet.script)
    // The pixel's configuration, saved and read back.
    await page.getByLabel(/Verified domains/).fill('example.com\nshop.example.com')
    await page.getByLabel(/Respect privacy signals/).check()
    await page.getByRole('button', { name: 'Save pixel settings' }).click()
    await expect.poll(() => page.getByRole('status').first().innerText()).toContain('Saved')
    const { pixelConfig } = await api<{
      pixelConfig: { verifiedDomains: string[]; respectPrivacySignals: boolean }
    }>(`/visitor-tracking/${boot.organizationId}`)
    expect(pixelConfig).toMatchObject({
      verifiedDomains: ['example.com', 'shop.example.com'],
      respectPrivacySignals: true,
    })
    await page.getByLabel('Name', { exact: true }).fill('Reporting')
    await page.getByRole('group', { name: 'Scopes' }).getByLabel('write', { exact: true }).check()
    await page.getByRole('button', { name: 'Create key' }).click()
    const plainKey = await page.locator('[data-plain-key]').innerText()
    expect(plainKey).toMatch(/^bsk_live_[0-9a-f]{32}$/)
    expect((await fetch(`${server!.url}/api/v1/ping`, { headers: { 'x-api-key': plainKey } })).status).toBe(
      200,
    )
    await page.getByRole('button', { name: 'Revoke Reporting' }).click()
    await expect.poll(() => page.locator('tr[data-key="Reporting"]').innerText()).toContain('Revoked')
    expect((await fetch(`${server!.url}/api/v1/ping`, { headers: { 'x-api-key': plainKey } })).status).toBe(
      401,
    )

    // Partner: the identification webhook, saved, then tested against the receiver; the attempt is logged.
    const identification = page.getByRole('form', { name: 'Identification webhook' })
    const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`
    await identification.getByLabel('URL', { exact: true }).fill(receiverUrl)
    await identification.getByLabel(/Signing secret/).fill('a-signing-secret-for-the-test')
    await identification.getByLabel('Enabled').check()
    await identification.getByRole('button', { name: 'Save', exact: true }).click()
    await expect.poll(() => identification.getByText(/Signing secret \(set/).count()).toBe(1)
    expect((await api<{ identification: unknown }>('/partner/webhooks', {}, true)).identification).toEqual({
      url: receiverUrl,
      enabled: true,
      hasSecret: true,
    })
    await identification.getByRole('button', { name: 'Send a test event' }).click()
    await expect
      .poll(() => identification.getByRole('status').innerText())
      .toMatch(/^Test: The receiver answered 200/)
    expect(received).toHaveLength(1)
    expect(JSON.parse(received[0]!.body)).toMatchObject({ event_type: 'visitor.identified' })
    await page.getByRole('button', { name: 'Reload' }).click()
    await expect
      .poll(() => page.getByRole('table', { name: 'Webhook deliveries' }).innerText())
      .toMatch(/visitor\.identified[\s\S]*success \(HTTP 200/)
    // The custom domain: its DNS record to create, then verified against the zone.
    await page.getByLabel('Domain', { exact: true }).fill('track.example.com')
    await page.getByRole('button', { name: 'Set domain' }).click()
    const records = page.getByRole('table', { name: 'DNS records to create' })
    await expect
      .poll(() => records.innerText())
      .toMatch(/CNAME\s+track\.example\.com\s+cname\.visitor-id\.test/)
    await page.getByRole('button', { name: 'Verify now' }).click()
    await expect.poll(() => page.locator('#domain-title + p').innerText()).toBe('track.example.com: verified')
    expect((await api<{ verified: boolean }>('/partner/domain/verification', {}, true)).verified).toBe(true)
    // Email preferences: a partner default off, then this organization's own override and reset.
    const defaults = page.getByRole('form', { name: 'Email preferences: defaults' })
    await defaults.getByLabel('Renewal receipt').uncheck()
    await defaults.getByRole('button', { name: 'Save preferences' }).click()
    await expect
      .poll(
        async () =>
          (await api<{ preferences: Record<string, boolean> }>('/partner/email-preferences', {}, true))
            .preferences.renewal_receipt,
      )
      .toBe(false)
    type Effective = { preferences: Record<string, { enabled: boolean; inherited: boolean }> }
    const organizationPreferences = () =>
      api<Effective>(`/partner/organizations/${boot.organizationId}/email-preferences`, {}, true)
    const own = page.getByRole('form', { name: 'Email preferences: this organization' })
    await own.getByLabel(/Payment failed/).uncheck()
    await own.getByRole('button', { name: 'Save preferences' }).click()
    await expect
      .poll(async () => (await organizationPreferences()).preferences.payment_failed)
      .toEqual({ enabled: false, inherited: false })
    await own.getByRole('button', { name: 'Back to the defaults' }).click()
    await expect
      .poll(async () => (await organizationPreferences()).preferences.payment_failed)
      .toEqual({ enabled: true, inherited: true })
    await expect.poll(() => own.getByLabel(/Payment failed/).isChecked()).toBe(true)
    await screenshot('settings')
    await expectAccessible('settings')
  })

  it('an agency key switches organizations; a new one says what to do next', async () => {
    // The bootstrap key is an agency's: a sub-organization it creates is one it may address.
    const created = await api<{ id: string }>('/organization', {
      method: 'POST',
      body: JSON.stringify({ organizationName: 'Fresh client' }),
    })
    await page.reload()
    const picker = page.getByLabel('Organization', { exact: true })
    await picker.selectOption(created.id)
    await open('Overview')
    await expect
      .poll(() => page.locator('#chart-title + .empty, .card .empty').first().innerText())
      .toContain('No visitors in this range')
    expect(await page.locator('main').innerText()).toContain('Install the snippet')
    await open('Companies')
    await expect.poll(() => page.locator('.empty').innerText()).toContain('install the snippet')
    await open('ICP configs')
    await expect.poll(() => page.locator('.empty').first().innerText()).toContain('No ICP configs yet')
    await screenshot('empty-organization')
    await expectAccessible('empty organization')
    await picker.selectOption(boot.organizationId)
    await expect.poll(() => page.locator('tr[data-slug]').count()).toBeGreaterThan(0)
  })

  it('works from the keyboard: a skip link first, links followed with Enter, a visible focus', async () => {
    await page.goto(`${server!.url}/app/`)
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
    expect(page.url()).toBe(`${server!.url}/app/lists`)
  })

  it('raised no page error and no CSP violation', () => {
    expect(pageErrors).toEqual([])
  })
})
