// Identification-like payloads for the webhook benchmark: the shape of `visitor.identified`
// (packages/core/src/identification/payload.ts), every field present, about 2.5 KB of JSON each.
import { randomUUID } from 'node:crypto'

const firstNames = ['Ada', 'Grace', 'Alan', 'Barbara', 'Linus', 'Margaret', 'Dennis', 'Frances']
const lastNames = ['Lovelace', 'Hopper', 'Turing', 'Liskov', 'Torvalds', 'Hamilton', 'Ritchie', 'Allen']
const industries = ['Software', 'Financial Services', 'Manufacturing', 'Healthcare', 'Retail']
const pages = [
  '/',
  '/pricing',
  '/features',
  '/customers',
  '/blog/visitor-identification',
  '/contact',
  '/docs',
]

/** A visitor.identified payload for organization `organization`, visitor number `n`. */
export function identificationPayload(organization, n) {
  const at = new Date().toISOString()
  const first = firstNames[n % firstNames.length]
  const last = lastNames[(n >> 3) % lastNames.length]
  const domain = `company${n % 997}.example`
  const views = 2 + (n % 5)
  return {
    event_type: 'visitor.identified',
    timestamp: at,
    organization_id: organization.id,
    session_id: randomUUID(),
    workspace: organization.name,
    visitor: {
      id: randomUUID(),
      email: `${first}.${last}.${n}@${domain}`.toLowerCase(),
      personal_email: '',
      first_name: first,
      last_name: last,
      job_title: n % 2 ? 'VP Engineering' : 'Head of Marketing Operations',
      phone: n % 3 ? '' : `+1 415 555 ${String(n % 10_000).padStart(4, '0')}`,
      location: 'San Francisco, California, United States',
      photo_url: '',
      linkedin_url: `https://www.linkedin.com/in/${first}-${last}-${n}`.toLowerCase(),
      facebook_url: '',
      twitter_url: '',
      address: `${100 + (n % 900)} Market Street`,
      address_2: '',
      city: 'San Francisco',
      state: 'CA',
      postal_code: '94105',
      gender: null,
      age_range: '35-44',
      income_range: null,
      net_worth: null,
      homeowner: null,
      married: null,
      children: null,
      icp: n % 4 !== 0,
      icp_statuses: { 'enterprise-us': n % 4 !== 0, 'mid-market-eu': n % 7 === 0 },
      persona_match: n % 2 === 1,
      created_at: at,
      last_seen_at: at,
    },
    company: {
      id: domain,
      name: `Company ${n % 997} Inc.`,
      domain,
      industry: industries[n % industries.length],
      size: '201-500',
      employee_size_range: '201-500',
      revenue_range: '$50M-$100M',
      linkedin_url: `https://www.linkedin.com/company/company-${n % 997}`,
      website_url: `https://www.${domain}`,
      description:
        'A business software company that helps revenue teams find, qualify and reach the accounts already visiting their website.',
      logo_url: `https://logo.example/${domain}.png`,
      address: '1 Harbor Drive',
      address_2: 'Suite 400',
      city: 'Austin',
      region: 'Texas',
      postal_code: '78701',
    },
    session: {
      created_at: at,
      landing_page: `https://shop.example${pages[n % pages.length]}?utm_source=newsletter&utm_medium=email`,
      entry_page: `https://shop.example${pages[n % pages.length]}`,
      exit_page: 'https://shop.example/pricing',
      referrer: 'https://www.google.com/',
      device_type: 'desktop',
      first_visit: n % 3 === 0,
      utm_source: 'newsletter',
      utm_campaign: 'autumn-launch',
      utm_medium: 'email',
      utm_term: '',
      utm_content: 'hero-button',
      campaign_name: 'autumn-launch',
      campaign_source: 'newsletter',
      campaign_medium: 'email',
      campaign_term: '',
      campaign_content: 'hero-button',
      search_term: '',
      search_engine: '',
      country: 'US',
      region: 'California',
      city: 'San Francisco',
      ip_address: `203.0.113.${n % 254}`,
      user_agent:
        'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
      browser: 'Chrome',
      browser_version: '124.0.0.0',
      os: 'Windows',
      os_version: '10',
      device_model: '',
      timezone: 'America/Los_Angeles',
      language: 'en-US',
      screen_width: 1920,
      screen_height: 1080,
      isp: 'Example Fiber',
      asn: 'AS64500',
      connection_type: 'broadband',
      is_hosting: false,
      is_anonymous: false,
      session_duration_seconds: 30 + (n % 600),
      max_scroll_percent: n % 101,
      page_view_count: views,
      tracking_params: n % 2 ? { gclid: `Cj0KCQiA${n}` } : {},
    },
    page_views: Array.from({ length: views }, (_, i) => ({
      url: `https://shop.example${pages[(n + i) % pages.length]}`,
      visited_at: at,
    })),
  }
}
