import { readFileSync } from 'node:fs'
import path from 'node:path'
import { closeChromium, findChromium, launchChromium } from '@visitor-id/testing/chromium'
import { type ServerProcess, startServerProcess } from '@visitor-id/testing/server-process'
import { tempDir } from '@visitor-id/testing/temp-dir'
import type { Browser, BrowserContext } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BootstrapKeys, chromeUserAgent, eventually } from './fixtures/hits.js'
import { hostilePrelude, type Site, startSite, tagManagerLoader } from './fixtures/site.js'

// The pixel in a real browser (driven by playwright-core; @visitor-id/testing/chromium finds one, the
// bundled @sparticuz/chromium on a machine with none): a local site loads it once with each
// install snippet, a visitor clicks through SPA routes, identifies and leaves; the API then shows
// one visitor, one session, its page views, UTMs, a duration and the email.

const data = tempDir('vid-browser-')
let server: ServerProcess
let site: Site
let browser: Browser
let keys: BootstrapKeys

const api = async (route: string) => {
  const response = await fetch(`${server.url}/api/v1${route}`, { headers: { 'x-api-key': keys.apiKey } })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

const snippet = async (type: 'jsSnippet' | 'tagManager') => {
  const { status, body } = await api(`/visitor-tracking/${keys.organizationId}/installation/script/${type}`)
  expect(status).toBe(200)
  return body.script as string
}

/** A browser profile that looks like a person: a normal user agent, no automation flag. */
async function visitorContext(options: { globalPrivacyControl?: boolean } = {}): Promise<BrowserContext> {
  const context = await browser.newContext({
    userAgent: chromeUserAgent,
    viewport: { width: 1280, height: 720 },
  })
  // Playwright sets navigator.webdriver, which our bot filter rightly drops; a visitor has none.
  await context.addInitScript((gpc) => {
    Object.defineProperty(Navigator.prototype, 'webdriver', { get: () => false, configurable: true })
    if (gpc)
      Object.defineProperty(Navigator.prototype, 'globalPrivacyControl', {
        get: () => true,
        configurable: true,
      })
  }, options.globalPrivacyControl ?? false)
  return context
}

const updatePixelConfig = async (body: Record<string, unknown>) => {
  const response = await fetch(`${server.url}/api/v1/visitor-tracking/${keys.organizationId}/pixel-config`, {
    method: 'PUT',
    headers: { 'x-api-key': keys.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  expect(response.status).toBe(200)
}

const profileOf = (visitorId: string) =>
  eventually(async () => {
    const { status, body } = await api(`/visitor-tracking/${keys.organizationId}/visitors/${visitorId}`)
    if (status !== 200) return undefined
    const sessions = body.sessions as Record<string, unknown>[]
    // Wait for the engagement beacon sent when the page was left.
    return sessions[0] && Number(sessions[0].sessionDurationSeconds) > 0 && body.contact ? body : undefined
  }, 15_000)

/** The profile once the visitor is identified and has a session (no wait for engagement). */
const identifiedProfileOf = (visitorId: string) =>
  eventually(async () => {
    const { status, body } = await api(`/visitor-tracking/${keys.organizationId}/visitors/${visitorId}`)
    return status === 200 && body.contact && (body.sessions as unknown[]).length ? body : undefined
  })

const metric = async (name: string) => {
  const text = await (await fetch(`${server.url}/metrics`)).text()
  return Number(
    text
      .split('\n')
      .find((line) => line.startsWith(`${name} `))
      ?.split(' ')[1] ?? Number.NaN,
  )
}

/** One visit: land with UTMs, scroll, two SPA links, back, identify, leave. Returns the visitor id. */
async function visit(variant: string, email: string, options: { readCookie?: boolean } = {}) {
  const context = await visitorContext()
  const page = await context.newPage()
  const pageErrors: string[] = []
  page.on('pageerror', (error) => pageErrors.push(error.message))
  const beacons: string[] = []
  page.on('request', (request) => {
    if (request.url().startsWith(`${server.url}/collect`)) beacons.push(request.postData() ?? '')
  })
  await page.goto(
    `${site.url}/${variant}/?utm_source=newsletter&utm_medium=email&utm_campaign=launch&gclid=abc123`,
  )
  await page.waitForFunction(() => typeof (window as unknown as { vid?: { l?: number } }).vid?.l === 'number')
  const hostile = await page.evaluate(() => {
    try {
      void document.cookie
      return false
    } catch {
      return Object.isFrozen(Array.prototype) && Object.isFrozen(History.prototype)
    }
  })
  await page.mouse.wheel(0, 1500)
  await page.waitForTimeout(600)
  await page.click('#to-pricing')
  await page.waitForTimeout(300)
  await page.click('#to-docs')
  await page.waitForTimeout(300)
  await page.goBack()
  await page.waitForTimeout(300)
  await page.evaluate((address) => {
    ;(window as unknown as { vid: (...args: unknown[]) => void }).vid('identify', { email: address })
  }, email)
  await page.waitForTimeout(1100)
  const cookieVisitor =
    options.readCookie === false ? undefined : (await context.cookies()).find((c) => c.name === '_vid')?.value
  const visitorId = cookieVisitor ?? JSON.parse(beacons[0] ?? '{}').v
  // Leaving the page fires pagehide / visibilitychange: the engagement beacon goes out.
  await page.goto(`${site.url}/away`)
  await page.waitForTimeout(300)
  const errors = await page.evaluate(() => (window as unknown as { __errors?: string[] }).__errors ?? [])
  await context.close()
  return { visitorId: visitorId as string, pageErrors, errors, beacons, hostile }
}

describe('pixel in a real browser', () => {
  beforeAll(async () => {
    server = await startServerProcess({ DATA_DIR: data.dir, INGEST_BATCH_MS: '20' })
    keys = JSON.parse(readFileSync(path.join(data.dir, 'bootstrap.json'), 'utf8'))
    const [jsSnippet, tagManager] = await Promise.all([snippet('jsSnippet'), snippet('tagManager')])
    site = await startSite({
      heads: {
        js: jsSnippet,
        gtm: tagManagerLoader(tagManager),
        hostile: `${hostilePrelude}${jsSnippet}`,
        // The site identifies the visitor in its own markup, right after the snippet: before the
        // tracker has loaded, so the stub's queue must carry the call.
        queued: `${jsSnippet}<script>window.__trackerLoadedFirst = !!(window.vid && window.vid.l);
vid('identify', { email: 'katherine@example.com' });</script>`,
      },
    })
    const found = await findChromium()
    console.info(`browser tests: ${found.executablePath} (${found.source})`)
    browser = await launchChromium(found)
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

  it.each([
    ['js', 'script tag snippet', 'ada@example.com'],
    ['gtm', 'tag manager snippet', 'grace@example.com'],
  ])(
    '%s: one visitor, one session, page views, UTMs, duration and the email (%s)',
    { timeout: 60_000 },
    async (variant, _name, email) => {
      const { visitorId, pageErrors } = await visit(variant, email)
      expect(pageErrors).toEqual([])
      expect(visitorId).toMatch(/^[0-9a-f-]{36}$/)
      const profile = await profileOf(visitorId)
      expect(profile.contact).toMatchObject({ email })
      const sessions = profile.sessions as Record<string, unknown>[]
      expect(sessions).toHaveLength(1)
      expect(sessions[0]).toMatchObject({
        landingPage: `${site.url}/${variant}/?utm_source=newsletter&utm_medium=email&utm_campaign=launch&gclid=abc123`,
        entryPage: `/${variant}/`,
        exitPage: `/${variant}/pricing`,
        utmSource: 'newsletter',
        utmMedium: 'email',
        utmCampaign: 'launch',
        trackingParams: { gclid: 'abc123' },
        pageViewCount: 4,
        browser: 'Chrome',
        deviceType: 'desktop',
        screenWidth: 1280,
        language: expect.any(String),
      })
      expect(Number(sessions[0]!.sessionDurationSeconds)).toBeGreaterThan(0)
      expect(Number(sessions[0]!.maxScrollPercent)).toBeGreaterThan(0)
      const pages = (profile.pageViews as { url: string }[]).map((view) => new URL(view.url).pathname).sort()
      expect(pages).toEqual([
        `/${variant}/`,
        `/${variant}/docs`,
        `/${variant}/pricing`,
        `/${variant}/pricing`,
      ])
    },
  )

  it('a hostile page (frozen prototypes, cookies and storage that throw) still works and sees no error from us', {
    timeout: 60_000,
  }, async () => {
    const { visitorId, pageErrors, errors, beacons, hostile } = await visit('hostile', 'hedy@example.com', {
      readCookie: false,
    })
    expect(hostile).toBe(true)
    expect(pageErrors).toEqual([])
    expect(errors).toEqual([])
    expect(beacons.length).toBeGreaterThanOrEqual(5)
    const profile = await profileOf(visitorId)
    expect(profile.contact).toMatchObject({ email: 'hedy@example.com' })
    const sessions = profile.sessions as Record<string, unknown>[]
    expect(sessions).toHaveLength(1)
    expect(sessions[0]).toMatchObject({ pageViewCount: 4, utmSource: 'newsletter' })
  })

  it('an identify call made before the tracker loads is queued by the stub and replayed', {
    timeout: 60_000,
  }, async () => {
    const context = await visitorContext()
    const page = await context.newPage()
    // Hold the tracker back, so the page's own call certainly runs before it.
    await page.route(`${server.url}/p.js`, async (route) => {
      await new Promise((resolve) => setTimeout(resolve, 500))
      await route.continue()
    })
    const pageErrors: string[] = []
    page.on('pageerror', (error) => pageErrors.push(error.message))
    await page.goto(`${site.url}/queued/`)
    await page.waitForFunction(
      () => typeof (window as unknown as { vid?: { l?: number } }).vid?.l === 'number',
    )
    expect(
      await page.evaluate(
        () => (window as unknown as { __trackerLoadedFirst: boolean }).__trackerLoadedFirst,
      ),
    ).toBe(false)
    await page.waitForTimeout(300)
    const visitorId = (await context.cookies()).find((c) => c.name === '_vid')!.value
    await context.close()
    expect(pageErrors).toEqual([])
    const profile = await identifiedProfileOf(visitorId)
    expect(profile.contact).toMatchObject({ email: 'katherine@example.com' })
    expect(profile.sessions as Record<string, unknown>[]).toMatchObject([
      { entryPage: '/queued/', pageViewCount: 1 },
    ])
  })

  it('opt-in form capture identifies the visitor from a submitted form', { timeout: 60_000 }, async () => {
    await updatePixelConfig({ formCapture: true })
    try {
      const context = await visitorContext()
      const page = await context.newPage()
      const config = page.waitForResponse((response) => response.url().includes('/c/'))
      await page.goto(`${site.url}/js/`)
      expect(await (await config).json()).toEqual({ f: 1 })
      await page.fill('#signup input[name=email]', 'Form.Filler@Example.com')
      await page.click('#signup button')
      await page.waitForTimeout(300)
      const visitorId = (await context.cookies()).find((c) => c.name === '_vid')!.value
      await context.close()
      const profile = await identifiedProfileOf(visitorId)
      expect(profile.contact).toMatchObject({ email: 'form.filler@example.com' })
    } finally {
      await updatePixelConfig({ formCapture: false })
    }
  })

  it('with Global Privacy Control on and honoured, nothing is sent and no cookie is set', {
    timeout: 60_000,
  }, async () => {
    await updatePixelConfig({ respectPrivacySignals: true })
    try {
      const context = await visitorContext({ globalPrivacyControl: true })
      const page = await context.newPage()
      const sent: string[] = []
      page.on('request', (request) => {
        if (request.url().startsWith(`${server.url}/collect`)) sent.push(request.url())
      })
      await page.goto(`${site.url}/js/`)
      await page.click('#to-pricing')
      await page.evaluate(() =>
        (window as unknown as { vid: (...a: unknown[]) => void }).vid('identify', { email: 'x@y.z' }),
      )
      await page.waitForTimeout(800)
      await page.goto(`${site.url}/away`)
      expect(sent).toEqual([])
      expect((await context.cookies()).find((c) => c.name === '_vid')).toBeUndefined()
      await context.close()
    } finally {
      await updatePixelConfig({ respectPrivacySignals: false })
    }
  })

  it('an automated browser (navigator.webdriver, headless user agent) is dropped as automation', {
    timeout: 60_000,
  }, async () => {
    const before = await metric('vid_ingest_hits_dropped_total{reason="automation"}')
    const context = await browser.newContext()
    const page = await context.newPage()
    await page.goto(`${site.url}/js/`)
    await page.waitForTimeout(500)
    const visitorId = (await context.cookies()).find((c) => c.name === '_vid')?.value
    await context.close()
    await eventually(async () =>
      (await metric('vid_ingest_hits_dropped_total{reason="automation"}')) > before ? true : undefined,
    )
    expect((await api(`/visitor-tracking/${keys.organizationId}/visitors/${visitorId}`)).status).toBe(404)
  })
})
