import { readFileSync } from 'node:fs'
import type { BootstrapFile } from '@visitor-id/core/organizations'
import type { Page } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { dashboardBrowser } from './fixtures/dashboard-browser.js'

// The dashboard's configuration pages in a real browser against a real server filled by
// `seed-demo`: an ICP config created, edited and recalculated, partner rules (live validation over
// every comparator, preview); settings: the pixel, a key created and revoked, a webhook tested
// against a local receiver, a custom domain verified against a local DNS zone, email preferences;
// an agency key switching to a new sub-organization. axe-core on every page and a screenshot of
// each in test-results/dashboard/.

const d = dashboardBrowser({ webhookReceiver: true, dnsZone: true, signIn: true })
const { api, open, expectAccessible, screenshot } = d
let page: Page
let boot: BootstrapFile
let baseUrl: string

beforeAll(() => {
  ;({ page, boot } = d)
  baseUrl = d.server.url
})

describe('dashboard settings', { timeout: 60_000 }, () => {
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
    expect((await fetch(`${baseUrl}/api/v1/ping`, { headers: { 'x-api-key': plainKey } })).status).toBe(200)
    await page.getByRole('button', { name: 'Revoke Reporting' }).click()
    await expect.poll(() => page.locator('tr[data-key="Reporting"]').innerText()).toContain('Revoked')
    expect((await fetch(`${baseUrl}/api/v1/ping`, { headers: { 'x-api-key': plainKey } })).status).toBe(401)

    // Partner: the identification webhook, saved, then tested against the receiver; the attempt is logged.
    const identification = page.getByRole('form', { name: 'Identification webhook' })
    const receiverUrl = d.receiverUrl
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
    expect(d.received).toHaveLength(1)
    expect(JSON.parse(d.received[0]!.body)).toMatchObject({ event_type: 'visitor.identified' })
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

  it("privacy: the retention saved and read back; a person's export downloaded, then their erasure", async () => {
    await open('Settings')
    const privacy = page.getByRole('form', { name: 'Retention and regions' })
    await expect.poll(() => privacy.locator('[data-retention]').innerText()).toContain('395 days')
    await privacy.getByLabel('Keep full IP addresses (days)').fill('14')
    await privacy.getByLabel(/Identify companies only/).check()
    await privacy.getByLabel(/Countries/).fill('de, fr')
    await privacy.getByRole('button', { name: 'Save privacy settings' }).click()
    await expect
      .poll(() => privacy.locator('[data-retention]').innerText())
      .toContain('full IP addresses 14 days')
    await expect.poll(() => privacy.locator('[data-company-only]').innerText()).toContain('for 2 countries')
    expect(await api(`/organization/${boot.organizationId}/privacy`)).toMatchObject({
      retentionDays: 395,
      ipRetentionDays: 14,
      own: { retentionDays: null, ipRetentionDays: 14 },
      companyOnly: { enabled: true, countries: ['DE', 'FR'] },
    })
    // An identified visitor of the demo, found through the API.
    const now = new Date()
    const from = new Date(now.getTime() - 30 * 86_400_000).toISOString()
    const visitors = await api<{ data: { id: string; email: string }[] }>(
      `/companies/visitors?organizationId=${boot.organizationId}&from=${from}&to=${now.toISOString()}&limit=100`,
    )
    const person = visitors.data.find((v) => v.email !== '')!
    const request = page.getByRole('form', { name: "A person's data" })
    await request.getByLabel('Value').fill(person.email)
    const download = page.waitForEvent('download')
    await request.getByRole('button', { name: 'Export' }).click()
    const exported = JSON.parse(readFileSync((await (await download).path())!, 'utf8'))
    expect(exported.found.visitorIds).toContain(person.id)
    await request.getByRole('button', { name: 'Erase…' }).click()
    await request.getByRole('button', { name: 'Erase for good' }).click()
    await expect
      .poll(() => request.locator('[data-erased]').innerText(), { timeout: 30_000 })
      .toMatch(/^Erased: 1 visitor/)
    const after = await api<{ found: { visitorIds: string[] } }>(
      `/organization/${boot.organizationId}/persons/export`,
      {
        method: 'POST',
        body: JSON.stringify({ email: person.email }),
      },
    )
    expect(after.found.visitorIds).toEqual([])
    await expectAccessible('settings, privacy')
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

  it('raised no page error and no CSP violation', () => {
    d.expectNoPageErrors()
  })
})
