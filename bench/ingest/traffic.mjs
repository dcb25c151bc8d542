// Realistic pixel traffic for the benchmark: hits from many public IPs (IPv4 and IPv6) and
// browsers, a pool of returning visitors and sessions, UTM-tagged landings, search referrers.
import { createHash, randomUUID } from 'node:crypto'

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
  return requestAs(who, hit)
}

/** A /collect request carrying `hit`, as the browser of `who` (a pool entry) sends it. */
export function requestAs(who, hit) {
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

// Identify hits (`ingest.bench.mjs --identify SHARE`): the contacts dataset the bench writes into
// the server's store before it starts, and logged-in visitors whose pages send their email.

/** Companies of the bench's contacts dataset: contact `n` works at company `n % contactCompanies`. */
export const contactCompanies = 20_000

/** The email of contact `n` (0 <= n < contacts) of the bench's dataset. */
export const contactEmail = (n) => `person${n}@company${n % contactCompanies}.test`

/**
 * Writes `count` contacts in-engine (INSERT ... SELECT FROM numbers): contact `n` is
 * contactEmail(n), at company `n % contactCompanies` (its `company_domain`, no `companies` row); the
 * view of migration 0007 writes its keys (email and SHA-256) to contact_keys.
 */
export async function insertContacts(store, count) {
  await store.command(
    `INSERT INTO contacts (id, email, first_name, last_name, job_title, seniority, department,
       linkedin_url, city, state, country, company_domain, created_at, updated_at, version)
     SELECT
       concat('person', toString(number), '@company', toString(number % {companies:UInt32}), '.test') AS address,
       address,
       ['Jane', 'John', 'Maria', 'Wei', 'Aisha', 'Carlos', 'Olga', 'Hiro'][number % 8 + 1],
       ['Doe', 'Smith', 'Garcia', 'Müller', 'Chen', 'Okafor', 'Tanaka', 'Rossi', 'Silva'][number % 9 + 1],
       ['VP, Sales', 'Head of Marketing', 'Software Engineer', 'CFO', 'Product Manager'][number % 5 + 1],
       ['c_suite', 'vp', 'director', 'manager', 'senior', 'entry'][number % 6 + 1],
       ['sales', 'marketing', 'engineering', 'finance', 'operations'][number % 5 + 1],
       concat('https://www.linkedin.com/in/person', toString(number)),
       ['Berlin', 'Austin', 'London', 'Paris'][number % 4 + 1],
       ['Berlin', 'TX', 'England', 'Île-de-France'][number % 4 + 1],
       ['DE', 'US', 'GB', 'FR'][number % 4 + 1],
       concat('company', toString(number % {companies:UInt32}), '.test'),
       now64(3), now64(3), 1
     FROM numbers({count:UInt64})`,
    { count, companies: contactCompanies },
  )
}

const sha256 = (text) => createHash('sha256').update(text).digest('hex')

/**
 * Identify traffic over a visitor pool: every `loggedInEvery`-th visitor of the pool is logged in
 * and has an email (`contacts` share: a contact of the dataset; `hashed`: the SHA-256 of one; the
 * rest: an address no contact has). They keep sending their page views through hitRequest; an
 * identify request picks one of them at random. After a visitor's identify hit, with probability
 * `firstShare` its pool slot gets a new visitor (same IP and browser, new ids and email), whose
 * next identify hit is a first identification: in the steady state about that share of identify
 * hits identify a visitor for the first time.
 */
export function createIdentifyTraffic(pool, options) {
  const { contacts, hashed = 0.05, unknown = 0.15, firstShare = 0.1, loggedInEvery = 10 } = options
  let strangers = 0
  const emailOf = () => {
    const r = Math.random()
    const contact = contactEmail(Math.floor(Math.random() * contacts))
    if (r < hashed) return { email: sha256(contact), kind: 'hashed' }
    if (r < hashed + unknown) {
      const i = strangers++
      return { email: `guest${i}@nobody${i % 997}.test`, kind: 'unknown' }
    }
    return { email: contact, kind: 'contact' }
  }
  const slots = []
  for (let i = 0; i < pool.length; i += loggedInEvery) {
    Object.assign(pool[i], emailOf())
    slots.push(i)
  }
  return {
    loggedIn: slots.length,
    /** One identify request numbered `n` (path `/b/<n>/account`, unique) and the kind of its email. */
    request(trackingKey, n) {
      const slot = slots[Math.floor(Math.random() * slots.length)]
      const who = pool[slot]
      const hit = {
        k: trackingKey,
        e: 'id',
        v: who.visitor,
        s: who.session,
        u: `https://shop.example/b/${n}/account`,
        ts: Date.now(),
        em: who.email,
      }
      const kind = who.kind
      if (Math.random() < firstShare) {
        pool[slot] = { ...who, visitor: randomUUID(), session: randomUUID(), ...emailOf() }
      }
      return { kind, ...requestAs(who, hit) }
    },
  }
}

// Filtered traffic (`ingest.bench.mjs --bots SHARE`): hits ingest drops at its filters, a third
// each from a known crawler, a headless browser and a page under automation (navigator.webdriver).
const crawlerAgents = [
  'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
  'Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)',
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)',
]
const headlessAgent =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/124.0.0.0 Safari/537.36'

/** One filtered request numbered `n` (its path is `/bot/<n>/`, unique), from a pool entry's address. */
export function botHitRequest(pool, trackingKey, n) {
  const who = pool[n % pool.length]
  const kind = n % 3
  const hit = {
    k: trackingKey,
    e: 'pv',
    v: who.visitor,
    s: who.session,
    u: `https://shop.example/bot/${n}/`,
    ts: Date.now(),
    ...(kind === 2 ? { wd: 1 } : {}),
  }
  const userAgent = kind === 0 ? pick(crawlerAgents) : kind === 1 ? headlessAgent : who.userAgent
  return requestAs({ ...who, userAgent }, hit)
}
