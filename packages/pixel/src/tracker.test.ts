import { webcrypto } from 'node:crypto'
import { readFileSync } from 'node:fs'
import vm from 'node:vm'
import { describe, expect, it } from 'vitest'
import { renderSnippet } from './snippets.js'

// The built tracker run in a bare VM with a fake browser: fast checks of what it sends and of
// the one-global promise. The real browser tests live in test/browser.test.ts.
const bundle = readFileSync(new URL('../dist/p.js', import.meta.url), 'utf8')
const key = 'pk_0123456789abcdef01234567'

function fakeBrowser(options: { gpc?: boolean; config?: object; storageThrows?: boolean } = {}) {
  const sent: Record<string, unknown>[] = []
  const listeners: Record<string, (() => void)[]> = {}
  const store = new Map<string, string>()
  const storage = {
    getItem: (k: string) => {
      if (options.storageThrows) throw new Error('SecurityError')
      return store.get(k) ?? null
    },
    setItem: (k: string, v: string) => {
      if (options.storageThrows) throw new Error('SecurityError')
      store.set(k, v)
    },
  }
  const on = (type: string, fn: () => void) => {
    listeners[type] = [...(listeners[type] ?? []), fn]
  }
  const location = { href: 'https://site.test/a?utm_source=news', pathname: '/a' }
  const context: Record<string, unknown> = {
    document: {
      cookie: '',
      referrer: 'https://www.google.com/',
      title: 'Home',
      hidden: false,
      documentElement: { scrollHeight: 1600 },
      addEventListener: on,
    },
    navigator: {
      language: 'en-GB',
      webdriver: false,
      globalPrivacyControl: options.gpc ?? false,
      sendBeacon: (url: string, body: string) => {
        sent.push({ url, ...JSON.parse(body) })
        return true
      },
    },
    location,
    history: {
      pushState(_state: unknown, _title: string, url: string) {
        location.href = `https://site.test${url}`
        location.pathname = url.split('?')[0]!
      },
      replaceState() {},
    },
    screen: { width: 1280, height: 800 },
    localStorage: storage,
    crypto: webcrypto,
    Intl,
    fetch: async () => ({ json: async () => options.config ?? {} }),
    addEventListener: on,
    scrollY: 0,
    innerHeight: 800,
    setInterval,
  }
  context.window = context
  vm.createContext(context)
  return { context, sent, listeners, location, store }
}

function install(browser: ReturnType<typeof fakeBrowser>, before = '', initOptions = '') {
  const snippet = renderSnippet('jsSnippet', { host: 'https://t.test', trackingKey: key })
  const stub = /<script>(.*?)<\/script>/.exec(snippet)![1]!
  vm.runInContext(initOptions ? stub.replace('"}', `",${initOptions}}`) : stub + before, browser.context)
  if (initOptions) vm.runInContext(before, browser.context)
  vm.runInContext(bundle, browser.context)
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 10))

describe('tracker in a fake browser', () => {
  it('adds exactly one global and sends a page view with the short keys', async () => {
    const browser = fakeBrowser()
    const before = new Set(Object.keys(browser.context))
    install(browser)
    expect(Object.keys(browser.context).filter((name) => !before.has(name))).toEqual(['vid'])
    await settle()
    expect(browser.sent).toHaveLength(1)
    const hit = browser.sent[0]!
    expect(hit).toMatchObject({
      url: 'https://t.test/collect',
      k: key,
      e: 'pv',
      u: 'https://site.test/a?utm_source=news',
      r: 'https://www.google.com/',
      ti: 'Home',
      sw: 1280,
      sh: 800,
      la: 'en-GB',
      wd: false,
    })
    expect(hit.v).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(hit.s).toMatch(/^[0-9a-f-]{36}$/)
    expect((browser.context.document as { cookie: string }).cookie).toContain(`_vid=${hit.v}`)
  })

  it('replays identify calls queued before load, counts SPA navigations, reports engagement', async () => {
    const browser = fakeBrowser()
    install(browser, "vid('identify',{email:'ada@example.com'});")
    await settle()
    vm.runInContext("history.pushState({}, '', '/pricing')", browser.context)
    vm.runInContext("history.pushState({}, '', '/pricing')", browser.context) // same path: no new view
    // Engagement is reported only when visible time has passed.
    await settle()
    ;(browser.context.document as { hidden: boolean }).hidden = true
    for (const listener of browser.listeners.visibilitychange ?? []) listener()
    await settle()
    const events = browser.sent.map((hit) => [hit.e, hit.u])
    expect(events).toEqual([
      ['pv', 'https://site.test/a?utm_source=news'],
      ['id', 'https://site.test/a?utm_source=news'],
      ['en', 'https://site.test/a?utm_source=news'],
      ['pv', 'https://site.test/pricing'],
      ['en', 'https://site.test/pricing'],
    ])
    expect(browser.sent[1]!.em).toBe('ada@example.com')
    expect(browser.sent[3]!.r).toBe('https://site.test/a?utm_source=news')
    expect(new Set(browser.sent.map((hit) => hit.s)).size).toBe(1)
    expect(new Set(browser.sent.map((hit) => hit.v)).size).toBe(1)
  })

  it('sends nothing and sets no cookie under GPC when the site honours it', async () => {
    const browser = fakeBrowser({ gpc: true, config: { p: 1 } })
    install(browser, "vid('identify',{email:'ada@example.com'});")
    await settle()
    expect(browser.sent).toEqual([])
    expect((browser.context.document as { cookie: string }).cookie).toBe('')
  })

  it('still sends under GPC when the site does not honour it', async () => {
    const browser = fakeBrowser({ gpc: true, config: {} })
    install(browser)
    await settle()
    expect(browser.sent.map((hit) => hit.e)).toEqual(['pv'])
  })

  it('works with storage that throws, and never throws itself', async () => {
    const browser = fakeBrowser({ storageThrows: true })
    install(browser)
    vm.runInContext("vid('identify', null); vid('nope'); vid(); vid('init', {key: 'again'})", browser.context)
    await settle()
    expect(browser.sent.map((hit) => hit.e)).toEqual(['pv'])
  })

  it('stays idle when loaded twice', async () => {
    const browser = fakeBrowser()
    install(browser)
    vm.runInContext(bundle, browser.context)
    await settle()
    expect(browser.sent).toHaveLength(1)
  })

  it('consent: denied stores nothing and identifies no one; a late grant stores the page ids', async () => {
    const browser = fakeBrowser()
    const denied = "consent:{analytics_storage:'denied',ad_user_data:'denied'}"
    install(browser, "vid('identify',{email:'ada@example.com'});", denied)
    await settle()
    const cookie = () => (browser.context.document as { cookie: string }).cookie
    // Engagement beacons (sent before each page view) aside.
    const sent = () => browser.sent.filter((hit) => hit.e !== 'en')
    expect(sent().map((hit) => [hit.e, hit.cn])).toEqual([['pv', 3]])
    expect(cookie()).toBe('')
    expect(browser.store.size).toBe(0)
    const pageVisitor = browser.sent[0]!.v
    // The CMP grants storage only: ids are stored from the next hit on, identification still off.
    vm.runInContext("vid('consent',{analytics_storage:'granted'}); vid('pageview')", browser.context)
    vm.runInContext("vid('identify',{email:'ada@example.com'})", browser.context)
    await settle()
    expect(sent().map((hit) => [hit.e, hit.cn])).toEqual([
      ['pv', 3],
      ['pv', 2],
    ])
    expect(new Set(browser.sent.map((hit) => hit.v))).toEqual(new Set([pageVisitor]))
    expect(sent()[1]!.v).toBe(pageVisitor)
    expect(cookie()).toContain(`_vid=${pageVisitor}`)
    expect(browser.store.get('_vid')).toBe(pageVisitor)
    vm.runInContext(
      "vid('consent',{ad_user_data:'granted'}); vid('identify',{email:'ada@example.com'})",
      browser.context,
    )
    await settle()
    expect(sent().map((hit) => [hit.e, hit.cn, hit.em])).toEqual([
      ['pv', 3, undefined],
      ['pv', 2, undefined],
      ['id', 0, 'ada@example.com'],
    ])
  })

  it('consent: without consent configuration hits carry no consent key', async () => {
    const browser = fakeBrowser()
    install(browser)
    await settle()
    expect(browser.sent[0]).not.toHaveProperty('cn')
  })
})
