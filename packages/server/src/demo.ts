// `seed-demo`: realistic data for a fresh install, so a newcomer sees identified visitors, their
// companies and ICP matches at once. Everything goes through the same paths real data takes:
// companies, contacts and IP ranges as imports write them, page views as ingest writes them (the
// views build sessions and visitor facts), identification through core (contacts, credits,
// events), and an ICP config scored in ClickHouse.
import { randomUUID } from 'node:crypto'
import { type DroppedHitRow, insertDroppedHits, settleFirstHoursNow } from '@visitor-id/core/analytics'
import type { Coordination } from '@visitor-id/core/coordination'
import {
  activeOrganizationConfigIds,
  addIcpConfig,
  organizationIcpConfigs,
  scoreConfig,
} from '@visitor-id/core/icp'
import { identifyVisitors } from '@visitor-id/core/identification'
import { nextVersion } from '@visitor-id/core/ids'
import type { Repositories } from '@visitor-id/core/repositories'
import type { Store } from '@visitor-id/core/store'

export interface DemoSummary {
  organizationId: string
  companies: number
  contacts: number
  visitors: number
  pageViews: number
  /** Hits "dropped by ingest" (bots, automation, ...) over the 30 days, as ingest counts them. */
  filteredHits: number
  identified: number
  icpConfig: string
  icpMatches: number
}

const industries = [
  'SaaS',
  'Fintech',
  'Healthcare',
  'Retail',
  'Manufacturing',
  'Education',
  'Media',
  'Logistics',
]
const sizes = ['11-50', '51-200', '201-500', '501-1000', '1001-5000']
const places = [
  { country: 'US', region: 'California', city: 'San Francisco' },
  { country: 'US', region: 'New York', city: 'New York' },
  { country: 'GB', region: 'England', city: 'London' },
  { country: 'DE', region: 'Berlin', city: 'Berlin' },
  { country: 'FR', region: 'Île-de-France', city: 'Paris' },
  { country: 'NL', region: 'North Holland', city: 'Amsterdam' },
]
const words = [
  'Acme',
  'Globex',
  'Initech',
  'Umbrella',
  'Hooli',
  'Vandelay',
  'Stark',
  'Wayne',
  'Tyrell',
  'Cyberdyne',
  'Soylent',
  'Wonka',
  'Aperture',
  'Black Mesa',
  'Oscorp',
  'Massive Dynamic',
]
const suffixes = ['Labs', 'Systems', 'Analytics', 'Cloud', 'Health', 'Pay', 'Works', 'Logistics']
const firstNames = [
  'Ada',
  'Grace',
  'Alan',
  'Katherine',
  'Linus',
  'Margaret',
  'Dennis',
  'Barbara',
  'Ken',
  'Frances',
  'Tim',
  'Radia',
]
const lastNames = [
  'Lovelace',
  'Hopper',
  'Turing',
  'Johnson',
  'Torvalds',
  'Hamilton',
  'Ritchie',
  'Liskov',
  'Thompson',
  'Allen',
  'Berners-Lee',
  'Perlman',
]
const titles = [
  ['CTO', 'c-level', 'engineering'],
  ['VP Engineering', 'vp', 'engineering'],
  ['Head of Marketing', 'director', 'marketing'],
  ['Sales Director', 'director', 'sales'],
  ['CEO', 'c-level', 'executive'],
  ['Software Engineer', 'individual', 'engineering'],
  ['Product Manager', 'manager', 'product'],
] as const
const pages = [
  '/',
  '/pricing',
  '/features',
  '/docs',
  '/blog/visitor-identification',
  '/customers',
  '/demo',
  '/integrations',
]
const sources = [
  { utm_source: 'google', utm_medium: 'cpc', utm_campaign: 'brand', referrer: 'https://www.google.com/' },
  {
    utm_source: 'linkedin',
    utm_medium: 'social',
    utm_campaign: 'launch',
    referrer: 'https://www.linkedin.com/',
  },
  { utm_source: 'newsletter', utm_medium: 'email', utm_campaign: 'november', referrer: '' },
  { utm_source: '', utm_medium: '', utm_campaign: '', referrer: 'https://news.ycombinator.com/' },
  { utm_source: '', utm_medium: '', utm_campaign: '', referrer: '' },
]
const browsers = [
  {
    browser: 'Chrome',
    os: 'Mac OS',
    device_type: 'desktop',
    user_agent:
      'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36',
  },
  {
    browser: 'Firefox',
    os: 'Windows',
    device_type: 'desktop',
    user_agent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0',
  },
  {
    browser: 'Mobile Safari',
    os: 'iOS',
    device_type: 'mobile',
    user_agent:
      'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1',
  },
]

/** A small deterministic generator, so two runs with the same seed make the same data. */
function generator(seed: number) {
  let state = seed >>> 0 || 1
  const next = () => {
    state ^= state << 13
    state ^= state >>> 17
    state ^= state << 5
    return (state >>> 0) / 4294967296
  }
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick: <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!,
  }
}

export interface DemoOptions {
  organizationId: string
  visitors: number
  seed?: number
  now?: number
}

export type DemoDeps = { store: Store; repos: Repositories; coordination: Coordination }
type Random = ReturnType<typeof generator>
/** The columns every demo row shares: written now, as one import would write them. */
type Stamp = { created_at: string; updated_at: string; version: string; is_deleted: number }
type DemoCompany = ReturnType<typeof demoCompanies>[number]
type DemoContact = ReturnType<typeof demoContacts>[number]
type IdentifyHit = Parameters<typeof identifyVisitors>[1][number]

/** Fills the organization with demo companies, contacts, visitors, identifications and an ICP config. */
export async function seedDemo(deps: DemoDeps, options: DemoOptions): Promise<DemoSummary> {
  const { store, repos } = deps
  const rand = generator(options.seed ?? 42)
  const now = options.now ?? Date.now()
  const at = new Date(now).toISOString()
  const run = randomUUID().slice(0, 6)
  const stamp = { created_at: at, updated_at: at, version: nextVersion(), is_deleted: 0 }

  const companies = demoCompanies(rand, run, stamp, options.visitors)
  await store.insert('companies', companies)
  await store.insert(
    'company_ip_ranges',
    companies.map((company, i) => ({ cidr: `198.18.${i % 256}.0/24`, company_id: company.id, ...stamp })),
  )
  const contacts = demoContacts(companies, run, stamp)
  await store.insert('contacts', contacts)

  const { rows, identifyHits } = demoVisits(rand, options, now, companies, contacts)
  for (let i = 0; i < rows.length; i += 5000) await store.insert('page_views', rows.slice(i, i + 5000))
  const identified = await identifyVisitors({ store, repos }, identifyHits)
  const filtered = demoFilteredHits(rand, options, now)
  await insertDroppedHits(store, filtered, randomUUID())
  const config = await scoredDemoIcpConfig(deps, options.organizationId, run)
  // The statistics count them at once (a worker's pass would within ANALYTICS_SETTLE_INTERVAL_MS):
  // after the identifications and scores, whose flags (identified, ICP) the pass sets too.
  await settleFirstHoursNow({ store, locks: deps.coordination.locks })
  return {
    organizationId: options.organizationId,
    companies: companies.length,
    contacts: contacts.length,
    visitors: options.visitors,
    pageViews: rows.length,
    filteredHits: filtered.reduce((sum, row) => sum + row.hits, 0),
    identified: identified.firstIdentifications,
    icpConfig: config.slug,
    icpMatches: await countIcpMatches(store, options.organizationId, config.id),
  }
}

/** Companies, one per five visitors (10 to 200), with an IP range each (documentation and benchmarking address space). */
function demoCompanies(rand: Random, run: string, stamp: Stamp, visitors: number) {
  const companyCount = Math.max(10, Math.min(200, Math.ceil(visitors / 5)))
  return Array.from({ length: companyCount }, (_, i) => {
    const name = `${words[i % words.length]} ${suffixes[Math.floor(i / words.length) % suffixes.length]}${i >= words.length * suffixes.length ? ` ${i}` : ''}`
    const domain = `${name.toLowerCase().replace(/[^a-z0-9]+/g, '')}.example`
    const place = rand.pick(places)
    return {
      id: `demo-${run}-${i}`,
      name,
      domain,
      industry: rand.pick(industries),
      size: String(10 + rand.int(4000)),
      employee_size_range: rand.pick(sizes),
      revenue_range: rand.pick(['1M-10M', '10M-50M', '50M-100M', '100M+']),
      website_url: `https://${domain}`,
      description: `${name} builds things for ${rand.pick(industries).toLowerCase()} teams.`,
      city: place.city,
      region: place.region,
      country: place.country,
      source: 'import',
      ...stamp,
    }
  })
}

/** Three contacts per company: contact `3c + k` is company c's k-th. */
function demoContacts(companies: DemoCompany[], run: string, stamp: Stamp) {
  return companies.flatMap((company, c) =>
    Array.from({ length: 3 }, (_, k) => {
      const first = firstNames[(c * 3 + k) % firstNames.length]!
      const last = lastNames[(c * 7 + k) % lastNames.length]!
      const [title, seniority, department] = titles[(c + k) % titles.length]!
      const email = `${first}.${last}.${c}${k}@${company.domain}`.toLowerCase()
      return {
        id: email,
        email,
        first_name: first,
        last_name: last,
        job_title: title,
        seniority,
        department,
        linkedin_url: `https://www.linkedin.com/in/${first}-${last}-${run}${c}${k}`.toLowerCase(),
        city: company.city,
        country: company.country,
        company_id: company.id,
        ...stamp,
      }
    }),
  )
}

/** Every visitor's page views, and the identifications of those who gave an email. */
function demoVisits(
  rand: Random,
  options: DemoOptions,
  now: number,
  companies: DemoCompany[],
  contacts: DemoContact[],
) {
  const rows: DemoPageView[] = []
  const identifyHits: IdentifyHit[] = []
  for (let v = 0; v < options.visitors; v++) {
    const visit = demoVisitor(rand, options.organizationId, companies)
    const sessions = 1 + rand.int(4)
    const views = Array.from({ length: sessions }, () => demoSession(rand, visit, now)).flat()
    rows.push(...views)
    const last = views.at(-1)
    // A third of the company visitors filled a form or signed in.
    if (visit.company && last && rand.next() < 0.35) {
      const contact = contacts[visit.companyIndex * 3 + rand.int(3)]!
      identifyHits.push({
        organization_id: options.organizationId,
        visitor_id: visit.visitorId,
        session_id: last.session_id,
        email: contact.email,
        timestamp: last.timestamp,
        company_id: visit.company.id,
      })
    }
  }
  return { rows, identifyHits }
}

/** The filtered traffic of the last 30 days, per day and reason: crawlers above all, a little of the rest. */
function demoFilteredHits(rand: Random, options: DemoOptions, now: number): DroppedHitRow[] {
  const perDay = Math.max(1, Math.round(options.visitors / 10))
  const shares = { bot: 3, automation: 1, origin: 0.3, privacy: 0.5, invalid: 0.1 } as const
  return Array.from({ length: 30 }, (_, d) => new Date(now - d * 86_400_000).toISOString().slice(0, 10))
    .flatMap((day) =>
      Object.entries(shares).map(([reason, share]) => ({
        organization_id: options.organizationId,
        day,
        reason: reason as DroppedHitRow['reason'],
        hits: Math.round(perDay * share * (0.5 + rand.next())),
      })),
    )
    .filter((row) => row.hits > 0)
}

interface DemoVisitor {
  organizationId: string
  visitorId: string
  /** The company whose network the visitor browses from, for most of them; its index in the list. */
  company: DemoCompany | undefined
  companyIndex: number
  place: (typeof places)[number]
  device: (typeof browsers)[number]
}

/** A visitor: most from a company network (and its country), on one device. */
function demoVisitor(rand: Random, organizationId: string, companies: DemoCompany[]): DemoVisitor {
  const visitorId = randomUUID()
  const companyIndex = rand.next() < 0.7 ? rand.int(companies.length) : -1
  const company = companyIndex >= 0 ? companies[companyIndex]! : undefined
  const place = company
    ? (places.find((p) => p.country === company.country) ?? rand.pick(places))
    : rand.pick(places)
  return { organizationId, visitorId, company, companyIndex, place, device: rand.pick(browsers) }
}

/** One session within the last 30 days: one to five page views, the first with the source's UTM and referrer. */
function demoSession(rand: Random, visit: DemoVisitor, now: number): DemoPageView[] {
  const session = {
    sessionId: randomUUID(),
    source: rand.pick(sources),
    start: now - rand.int(30 * 86_400_000),
  }
  const views = 1 + rand.int(5)
  return Array.from({ length: views }, (_, p) => demoPageView(rand, visit, session, p))
}

type DemoPageView = ReturnType<typeof demoPageView>

/** The session's `p`-th page view, as ingest writes it. */
function demoPageView(
  rand: Random,
  visit: DemoVisitor,
  session: { sessionId: string; source: (typeof sources)[number]; start: number },
  p: number,
) {
  const { company, device, place } = visit
  const { source } = session
  const path = rand.pick(pages)
  const timestamp = new Date(session.start + p * (20_000 + rand.int(90_000))).toISOString()
  const query = source.utm_source
    ? `?utm_source=${source.utm_source}&utm_medium=${source.utm_medium}&utm_campaign=${source.utm_campaign}`
    : ''
  return {
    event_id: randomUUID(),
    organization_id: visit.organizationId,
    visitor_id: visit.visitorId,
    session_id: session.sessionId,
    type: 'pageview',
    timestamp,
    received_at: timestamp,
    url: `https://www.yoursite.example${path}${p === 0 ? query : ''}`,
    path,
    hostname: 'www.yoursite.example',
    title: path === '/' ? 'Home' : path.slice(1),
    referrer: p === 0 ? source.referrer : '',
    utm_source: p === 0 ? source.utm_source : '',
    utm_medium: p === 0 ? source.utm_medium : '',
    utm_campaign: p === 0 ? source.utm_campaign : '',
    screen_width: device.device_type === 'mobile' ? 390 : 1440,
    screen_height: device.device_type === 'mobile' ? 844 : 900,
    language: 'en-US',
    engaged_ms: 5000 + rand.int(120_000),
    max_scroll: 20 + rand.int(80),
    ip: company ? `198.18.${visit.companyIndex % 256}.${1 + rand.int(250)}` : `192.0.2.${1 + rand.int(250)}`,
    country: place.country,
    region: place.region,
    city: place.city,
    isp: company ? company.name : 'Example Telecom',
    connection_type: company ? 'business' : 'isp',
    user_agent: device.user_agent,
    device_type: device.device_type,
    browser: device.browser,
    os: device.os,
    company_id: company?.id ?? '',
  }
}

/**
 * An ICP config that matches part of the visitors (the one an earlier run added, if any), scored
 * now, as its recalculation job would.
 */
async function scoredDemoIcpConfig(deps: DemoDeps, organizationId: string, run: string) {
  const { store, repos } = deps
  const existing = (await organizationIcpConfigs(repos, organizationId)).find((c) =>
    c.slug.startsWith('demo-saas'),
  )
  const config =
    existing ??
    (await addIcpConfig(deps, organizationId, 'organization', {
      slug: `demo-saas-${run}`,
      name: 'Demo: SaaS and fintech, 51-1000 people',
      filter: {
        company: { industries: ['SaaS', 'Fintech'], employee_size_ranges: ['51-200', '201-500', '501-1000'] },
        contact: { seniorities: ['c-level', 'vp', 'director'] },
      },
    }))
  const configs = await organizationIcpConfigs(repos, organizationId)
  await scoreConfig(store, config, { organizationConfigIds: activeOrganizationConfigIds(configs) })
  return config
}

async function countIcpMatches(store: Store, organizationId: string, configId: string): Promise<number> {
  const [matches] = await store.query<{ n: number }>(
    `SELECT count() AS n FROM icp_scores FINAL
     WHERE organization_id = {organizationId:UUID} AND config_id = {configId:String} AND matched = 1`,
    { organizationId, configId },
  )
  return Number(matches?.n ?? 0)
}
