// Realistic pixel traffic for the benchmark: hits from many public IPs (IPv4 and IPv6) and
// browsers, a pool of returning visitors and sessions, UTM-tagged landings, search referrers.
import { randomUUID } from 'node:crypto'

const userAgents = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/123.0.0.0 Safari/537.36 Edg/123.0.2420.81',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Safari/605.1.15',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36',
  'Mozilla/5.0 (Linux; Android 13; SM-A546B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/24.0 Chrome/117.0.0.0 Mobile Safari/537.36',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 OPR/109.0.0.0',
]
const pages = [
  '/',
  '/pricing',
  '/features',
  '/blog/visitor-identification',
  '/docs/install',
  '/contact',
  '/about',
]
const referrers = [
  '',
  '',
  'https://www.google.com/',
  'https://www.bing.com/search?q=b2b+visitor+identification',
  'https://duckduckgo.com/?q=website+visitor+tracking',
  'https://www.linkedin.com/',
  'https://news.ycombinator.com/item?id=1',
]
const campaigns = [
  '',
  '',
  '',
  '?utm_source=google&utm_medium=cpc&utm_campaign=spring&gclid=Cj0KCQjw',
  '?utm_source=linkedin&utm_medium=social&li_fat_id=abc123',
  '?utm_source=newsletter&utm_medium=email&utm_campaign=may',
  '?fbclid=IwAR2abc',
]
// Public /8s with plenty of access, hosting and business networks (no private or reserved space).
const firstOctets = [
  3, 4, 8, 12, 13, 17, 18, 20, 23, 24, 31, 34, 35, 37, 38, 45, 46, 50, 52, 54, 62, 63, 64, 66, 67, 68, 69, 70,
  71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97,
  98, 99, 104, 107, 108, 109, 128, 129, 130, 131, 134, 136, 137, 138, 139, 140, 141, 142, 143, 144, 145, 146,
  147, 148, 149, 151, 152, 153, 154, 155, 156, 157, 158, 159, 160, 161, 162, 163, 164, 165, 166, 167, 168,
  170, 171, 173, 174, 175, 176, 177, 178, 179, 180, 181, 182, 183, 184, 185, 186, 187, 188, 189, 190, 193,
  194, 195, 196, 197, 198, 199, 200, 201, 202, 203, 204, 205, 206, 207, 208, 209, 210, 211, 212, 213, 216,
  217, 218, 219, 220, 221, 222, 223,
]
const pick = (list) => list[Math.floor(Math.random() * list.length)]
const octet = () => Math.floor(Math.random() * 256)

function randomIp() {
  if (Math.random() < 0.1) {
    const group = () => Math.floor(Math.random() * 0x10000).toString(16)
    return `2a0${Math.floor(Math.random() * 10)}:${group()}:${group()}::${group()}`
  }
  return `${pick(firstOctets)}.${octet()}.${octet()}.${1 + Math.floor(Math.random() * 254)}`
}

/** A pool of visitors, each with an IP, a browser and a current session. */
export function createVisitorPool(size) {
  return Array.from({ length: size }, () => ({
    visitor: randomUUID(),
    session: randomUUID(),
    ip: randomIp(),
    userAgent: pick(userAgents),
    language: pick(['en-US', 'en-GB', 'de-DE', 'fr-FR', 'es-ES', 'ja-JP']),
  }))
}

/** One request: headers and body of a hit numbered `n` (its path is `/b/<n>`, unique). */
export function hitRequest(pool, trackingKey, n) {
  const who = pool[n % pool.length]
  const event = Math.random() < 0.25 ? 'en' : 'pv'
  const hit = {
    k: trackingKey,
    e: event,
    v: who.visitor,
    s: who.session,
    u: `https://shop.example/b/${n}${pick(pages)}${event === 'pv' ? pick(campaigns) : ''}`,
    ts: Date.now(),
    ...(event === 'pv'
      ? { r: pick(referrers), ti: 'Example shop', sw: 1920, sh: 1080, la: who.language, tz: 'Europe/Berlin' }
      : { d: 5000 + Math.floor(Math.random() * 60_000), sc: Math.floor(Math.random() * 100) }),
  }
  return {
    headers: {
      'content-type': 'text/plain;charset=UTF-8',
      'user-agent': who.userAgent,
      'x-forwarded-for': who.ip,
      origin: 'https://shop.example',
    },
    body: JSON.stringify(hit),
  }
}
