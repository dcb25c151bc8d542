// Bot filter: known crawlers and tools by user agent (`isbot`), plus headless signals: an empty
// user agent, a headless browser name, or the tracker's report that the page runs under
// automation (`navigator.webdriver`).

import { createBoundedCache } from '@visitor-id/core/bounded-cache'
import { isbot } from 'isbot'

const cache = createBoundedCache<boolean>(10_000)
const headless = /headless|phantomjs|puppeteer|playwright|selenium|webdriver|electron\//i

/** True when a hit looks automated and must be dropped. */
export function isBotHit(userAgent: string, webdriver: boolean | number | undefined): boolean {
  if (webdriver === true || webdriver === 1) return true
  if (userAgent.length < 10) return true
  const cached = cache.get(userAgent)
  if (cached !== undefined) return cached
  return cache.set(userAgent, isbot(userAgent) || headless.test(userAgent))
}
