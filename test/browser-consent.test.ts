import { readFileSync } from 'node:fs'
import path from 'node:path'
import { closeChromium, findChromium, launchChromium } from '@visitor-id/testing/chromium'
import { type ServerProcess, startServerProcess } from '@visitor-id/testing/server-process'
import { tempDir } from '@visitor-id/testing/temp-dir'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BootstrapKeys, chromeUserAgent, eventually } from './fixtures/hits.js'
import { type Site, startSite } from './fixtures/site.js'

// The pixel's consent in a real browser (see browser.test.ts for the setup): a site that starts
// with both Consent Mode fields denied, as a consent banner's default, stores nothing in the
// browser and identifies no one; its page views still count. A late grant stores the page's ids
// from then on and lets identify through.

const data = tempDir('vid-browser-consent-')
let server: ServerProcess
let site: Site
let browser: Browser
let keys: BootstrapKeys

type Vid = (...args: unknown[]) => void

const api = async (route: string) => {
  const response = await fetch(`${server.url}/api/v1${route}`, { headers: { 'x-api-key': keys.apiKey } })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

async function visitorContext(): Promise<BrowserContext> {
  const context = await browser.newContext({
    userAgent: chromeUserAgent,
    viewport: { width: 1280, height: 720 },
  })
  // Playwright sets navigator.webdriver, which our bot filter rightly drops; a visitor has none.
  await context.addInitScript(() => {
    Object.defineProperty(Navigator.prototype, 'webdriver', { get: () => false, configurable: true })
  })
  return context
}

/** Opens the consent page and records every hit the pixel sends (parsed bodies). */
async function openDenied(context: BrowserContext) {
  const page = await context.newPage()
  const hits: Record<string, unknown>[] = []
  const pageErrors: string[] = []
  page.on('pageerror', (error) => pageErrors.push(error.message))
  page.on('request', (request) => {
    if (request.url().startsWith(`${server.url}/collect`)) hits.push(JSON.parse(request.postData() ?? '{}'))
  })
  await page.goto(`${site.url}/denied/`)
  await page.waitForFunction(() => typeof (window as unknown as { vid?: { l?: number } }).vid?.l === 'number')
  return { page, hits, pageErrors }
}

/** What the page's origin holds: our cookie and every localStorage key. */
async function browserStorage(context: BrowserContext, page: Page) {
  return {
    cookie: (await context.cookies()).find((c) => c.name === '_vid')?.value,
    localStorage: await page.evaluate(() => Object.keys(localStorage)),
  }
}

const identify = (page: Page, email: string) =>
  page.evaluate((address) => (window as unknown as { vid: Vid }).vid('identify', { email: address }), email)

const profileOf = (visitorId: string, check: (body: Record<string, unknown>) => boolean) =>
  eventually(async () => {
    const { status, body } = await api(`/visitor-tracking/${keys.organizationId}/visitors/${visitorId}`)
    return status === 200 && check(body) ? body : undefined
  })

describe('pixel consent in a real browser', () => {
  beforeAll(async () => {
    server = await startServerProcess({ DATA_DIR: data.dir, INGEST_BATCH_MS: '20', IDENTIFY_BATCH_MS: '20' })
    keys = JSON.parse(readFileSync(path.join(data.dir, 'bootstrap.json'), 'utf8'))
    const response = await fetch(
      `${server.url}/api/v1/visitor-tracking/${keys.organizationId}/installation/script/jsSnippet`,
      { headers: { 'x-api-key': keys.apiKey } },
    )
    const snippet = ((await response.json()) as { script: string }).script
    // The site adds the consent defaults to the snippet's init call, as its banner's docs say.
    const denied = snippet.replace(
      '"});',
      `","consent":{"analytics_storage":"denied","ad_user_data":"denied"}});`,
    )
    expect(denied).not.toBe(snippet)
    site = await startSite({ heads: { denied } })
    browser = await launchChromium(await findChromium())
  }, 60_000)

  afterAll(async () => {
    await closeChromium(browser)
    await site?.close()
    if (server && server.child.exitCode === null) {
      server.child.kill('SIGTERM')
      await server.exit
    }
    data.remove()
  })

  it('denied: nothing stored in the browser, no identify hit; the page views count anonymously', {
    timeout: 60_000,
  }, async () => {
    const context = await visitorContext()
    const { page, hits, pageErrors } = await openDenied(context)
    await page.click('#to-pricing')
    await identify(page, 'denied.person@example.com')
    await page.waitForTimeout(500)
    expect(await browserStorage(context, page)).toEqual({ cookie: undefined, localStorage: [] })
    const views = hits.filter((hit) => hit.e === 'pv')
    expect(views).toHaveLength(2)
    expect(hits.map((hit) => hit.e)).not.toContain('id')
    expect(new Set(hits.map((hit) => hit.cn))).toEqual(new Set([3]))
    // One page, one page-only visitor id.
    expect(new Set(hits.map((hit) => hit.v)).size).toBe(1)
    await context.close()
    expect(pageErrors).toEqual([])
    const profile = await profileOf(
      views[0]!.v as string,
      (body) => (body.pageViews as unknown[]).length === 2,
    )
    expect(profile.contact ?? null).toBeNull()

    // The next page load is a new visitor: nothing carried the id over.
    const again = await visitorContext()
    const second = await openDenied(again)
    await second.page.waitForTimeout(300)
    expect(second.hits[0]!.v).not.toBe(views[0]!.v)
    await again.close()
  })

  it('a late grant stores the page ids from then on and identifies the visitor', {
    timeout: 60_000,
  }, async () => {
    const context = await visitorContext()
    const { page, hits } = await openDenied(context)
    await page.waitForTimeout(300)
    const pageVisitor = hits[0]!.v
    // Storage granted, identification still denied: the ids are stored, identify is still dropped.
    await page.evaluate(() =>
      (window as unknown as { vid: Vid }).vid('consent', { analytics_storage: 'granted' }),
    )
    await page.click('#to-pricing')
    await identify(page, 'too.early@example.com')
    await page.waitForTimeout(300)
    expect(await browserStorage(context, page)).toMatchObject({ cookie: pageVisitor })
    expect((await browserStorage(context, page)).localStorage.sort()).toEqual(['_vid', '_vid_s'])
    expect(hits.map((hit) => hit.e)).not.toContain('id')
    // The CMP's update, in gtag's shape (fields it does not know are ignored).
    await page.evaluate(() =>
      (window as unknown as { vid: Vid }).vid('consent', {
        ad_storage: 'granted',
        ad_user_data: 'granted',
        ad_personalization: 'granted',
      }),
    )
    await identify(page, 'late.grant@example.com')
    await page.waitForTimeout(500)
    const identifyHits = hits.filter((hit) => hit.e === 'id')
    expect(identifyHits).toMatchObject([{ em: 'late.grant@example.com', cn: 0, v: pageVisitor }])
    expect(hits.filter((hit) => hit.e === 'pv').map((hit) => hit.cn)).toEqual([3, 2])
    await context.close()
    const profile = await profileOf(pageVisitor as string, (body) => Boolean(body.contact))
    expect(profile.contact).toMatchObject({ email: 'late.grant@example.com' })
  })
})
