// Bot filter, in two reasons an organization sees apart (dropped_hits):
// - `automation`: the tracker's report that the page runs under automation (`navigator.webdriver`),
//   an empty or very short user agent, or a headless / automation browser's name;
// - `bot`: a known crawler or tool by its user agent (`isbot`).
// Automation is judged first: a headless browser's agent is also one `isbot` knows.

import { createBoundedCache } from '@visitor-id/core/bounded-cache'
import { isbot } from 'isbot'

export type BotVerdict = 'bot' | 'automation'

const cache = createBoundedCache<BotVerdict | 'human'>(10_000)
const headless = /headless|phantomjs|puppeteer|playwright|selenium|webdriver|electron\//i

const verdictOf = (userAgent: string): BotVerdict | 'human' => {
  if (headless.test(userAgent)) return 'automation'
  return isbot(userAgent) ? 'bot' : 'human'
}

/** Why a hit must be dropped as automated, or undefined for a person's browser. */
export function botVerdict(
  userAgent: string,
  webdriver: boolean | number | undefined,
): BotVerdict | undefined {
  if (webdriver === true || webdriver === 1) return 'automation'
  if (userAgent.length < 10) return 'automation'
  const verdict = cache.get(userAgent) ?? cache.set(userAgent, verdictOf(userAgent))
  return verdict === 'human' ? undefined : verdict
}
