import { describe, expect, it } from 'vitest'
import { botVerdict } from './bot.js'
import { campaignParams } from './campaign.js'
import { isAllowedOrigin } from './origin.js'
import { parseReferrer } from './referrer.js'
import { parseUserAgent } from './user-agent.js'

const chrome =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36'
const iphone =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1'

describe('origin check', () => {
  const config = (verified: string[], referrers: string[] = []) => ({
    verified_domains: verified,
    allowed_referrers: referrers,
  })

  it('accepts everything while nothing is configured', () => {
    expect(isAllowedOrigin(config([]), 'anything.test', 'https://other.test', undefined)).toBe(true)
  })

  it('accepts verified domains and their subdomains, in the page URL and the Origin header', () => {
    const c = config(['example.com'])
    expect(isAllowedOrigin(c, 'example.com', 'https://example.com', undefined)).toBe(true)
    expect(isAllowedOrigin(c, 'shop.example.com', 'https://shop.example.com', undefined)).toBe(true)
    expect(isAllowedOrigin(c, 'example.com', undefined, 'https://example.com/page')).toBe(true)
    expect(isAllowedOrigin(c, 'notexample.com', undefined, undefined)).toBe(false)
    expect(isAllowedOrigin(c, 'example.com', 'https://evil.test', undefined)).toBe(false)
    expect(isAllowedOrigin(c, 'example.com.evil.test', undefined, undefined)).toBe(false)
  })

  it('reads allowed referrers given as URLs or wildcards', () => {
    const c = config([], ['https://app.example.org/dashboard', '*.shop.test'])
    expect(isAllowedOrigin(c, 'app.example.org', 'https://app.example.org', undefined)).toBe(true)
    expect(isAllowedOrigin(c, 'eu.shop.test', undefined, undefined)).toBe(true)
    expect(isAllowedOrigin(c, 'example.org', undefined, undefined)).toBe(false)
  })
})

describe('bot filter', () => {
  it('tells known bots from automation, and lets browsers through', () => {
    expect(botVerdict('Googlebot/2.1 (+http://www.google.com/bot.html)', undefined)).toBe('bot')
    expect(botVerdict('curl/8.5.0', undefined)).toBe('bot')
    expect(botVerdict(chrome.replace('Chrome/', 'HeadlessChrome/'), undefined)).toBe('automation')
    expect(botVerdict(`${chrome} Puppeteer`, undefined)).toBe('automation')
    expect(botVerdict('', undefined)).toBe('automation')
    expect(botVerdict('curl/8', undefined)).toBe('automation')
    expect(botVerdict(chrome, true)).toBe('automation')
    expect(botVerdict(chrome, 1)).toBe('automation')
    // The flag wins over the agent: a crawler's agent under webdriver is automation.
    expect(botVerdict('Googlebot/2.1 (+http://www.google.com/bot.html)', 1)).toBe('automation')
    expect(botVerdict(chrome, false)).toBeUndefined()
    expect(botVerdict(iphone, undefined)).toBeUndefined()
    // Cached verdicts answer the same.
    expect(botVerdict('Googlebot/2.1 (+http://www.google.com/bot.html)', undefined)).toBe('bot')
    expect(botVerdict(chrome, undefined)).toBeUndefined()
  })
})

describe('user agent', () => {
  it('parses desktop and mobile browsers', () => {
    expect(parseUserAgent(chrome)).toEqual({
      deviceType: 'desktop',
      browser: 'Chrome',
      browserVersion: '124.0.0.0',
      os: 'Windows',
      osVersion: '10',
      deviceModel: '',
    })
    expect(parseUserAgent(iphone)).toMatchObject({
      deviceType: 'mobile',
      browser: 'Mobile Safari',
      os: 'iOS',
      osVersion: '17.4',
      deviceModel: 'Apple iPhone',
    })
    expect(parseUserAgent('???')).toMatchObject({ deviceType: '', browser: '' })
  })
})

describe('referrer', () => {
  it('names search engines and keeps the term when there is one', () => {
    expect(parseReferrer('https://www.google.com/')).toEqual({
      referrerDomain: 'google.com',
      searchEngine: 'Google',
      searchTerm: '',
    })
    expect(parseReferrer('https://www.bing.com/search?q=visitor+identification')).toMatchObject({
      searchEngine: 'Bing',
      searchTerm: 'visitor identification',
    })
    expect(parseReferrer('https://duckduckgo.com/?q=b2b')).toMatchObject({
      searchEngine: 'DuckDuckGo',
      searchTerm: 'b2b',
    })
    expect(parseReferrer('https://yandex.ru/search/?text=crm')).toMatchObject({
      searchEngine: 'Yandex',
      searchTerm: 'crm',
    })
    expect(parseReferrer('https://news.ycombinator.com/item?id=1')).toEqual({
      referrerDomain: 'news.ycombinator.com',
      searchEngine: '',
      searchTerm: '',
    })
    expect(parseReferrer('not a url')).toEqual({ referrerDomain: '', searchEngine: '', searchTerm: '' })
  })
})

describe('campaign', () => {
  it('splits UTM columns from click ids and other utm_ params', () => {
    const url = new URL(
      'https://x.test/?utm_source=news&UTM_MEDIUM=email&utm_campaign=spring&utm_id=42&gclid=abc&fbclid=def&msclkid=m&li_fat_id=l&ttclid=t&page=2',
    )
    expect(campaignParams(url)).toEqual({
      utm: { utm_source: 'news', utm_medium: 'email', utm_campaign: 'spring', utm_term: '', utm_content: '' },
      trackingParams: {
        utm_id: '42',
        gclid: 'abc',
        fbclid: 'def',
        msclkid: 'm',
        li_fat_id: 'l',
        ttclid: 't',
      },
    })
  })
})
