// Referrer domain, search engine and search term. Most engines no longer pass the query, so the
// term is often empty while the engine is known.
import { createBoundedCache } from '@visitor-id/core/bounded-cache'

export interface ReferrerInfo {
  referrerDomain: string
  searchEngine: string
  searchTerm: string
}

/** Engine name, a host test, and the query parameters that may hold the search term. */
const engines: [string, RegExp, string[]][] = [
  ['Google', /(^|\.)google\.[a-z.]+$/, ['q', 'query']],
  ['Bing', /(^|\.)bing\.com$/, ['q']],
  ['DuckDuckGo', /(^|\.)duckduckgo\.com$/, ['q']],
  ['Yahoo', /(^|\.)search\.yahoo\.(com|co\.jp)$|(^|\.)yahoo\.[a-z.]+$/, ['p', 'q']],
  ['Yandex', /(^|\.)yandex\.[a-z.]+$|(^|\.)ya\.ru$/, ['text']],
  ['Baidu', /(^|\.)baidu\.com$/, ['wd', 'word']],
  ['Ecosia', /(^|\.)ecosia\.org$/, ['q']],
  ['Qwant', /(^|\.)qwant\.com$/, ['q']],
  ['Startpage', /(^|\.)startpage\.com$/, ['query', 'q']],
  ['Brave', /^search\.brave\.com$/, ['q']],
  ['Naver', /(^|\.)naver\.com$/, ['query']],
  ['Seznam', /(^|\.)seznam\.cz$/, ['q']],
  ['Sogou', /(^|\.)sogou\.com$/, ['query']],
  ['So.com', /(^|\.)so\.com$/, ['q']],
  ['Ask', /(^|\.)ask\.com$/, ['q']],
  ['AOL', /(^|\.)search\.aol\.com$/, ['q']],
  ['Yahoo Japan', /(^|\.)yahoo\.co\.jp$/, ['p']],
]

const none: ReferrerInfo = { referrerDomain: '', searchEngine: '', searchTerm: '' }

// Referrers repeat (search engines, the site's own pages): parse each one once.
const cache = createBoundedCache<ReferrerInfo>(20_000)

/** Parses a referrer URL; an unparsable one yields empty fields. */
export function parseReferrer(referrer: string): ReferrerInfo {
  if (!referrer) return none
  return cache.get(referrer) ?? cache.set(referrer, parse(referrer))
}

function parse(referrer: string): ReferrerInfo {
  let url: URL
  try {
    url = new URL(referrer)
  } catch {
    return none
  }
  const host = url.hostname.toLowerCase().replace(/^www\./, '')
  for (const [name, pattern, params] of engines) {
    if (!pattern.test(host)) continue
    const term = params.map((param) => url.searchParams.get(param)).find((value) => value)
    return { referrerDomain: host, searchEngine: name, searchTerm: (term ?? '').trim().slice(0, 256) }
  }
  return { referrerDomain: host, searchEngine: '', searchTerm: '' }
}
