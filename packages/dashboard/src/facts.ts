// A visitor's ICP facts from its public profile, for previewing a rule in the browser. The server
// scores from the same data (core's icp/facts.ts): UTMs and pages of every session, counts, the
// latest session's geo, the contact, the company. icp_score is not in a profile: left missing.
import type { Facts } from '@visitor-id/icp-engine'
import type { VisitorProfile } from './types.js'

const present = (value: string | null | undefined) => (value ? value : undefined)
const distinct = (values: (string | undefined | null)[]) => [
  ...new Set(values.filter((v): v is string => !!v)),
]

const pathOf = (url: string) => {
  try {
    return new URL(url).pathname
  } catch {
    return url
  }
}

/** Facts keyed by condition type: `evaluate(rules, visitorFacts(profile))`. */
export function visitorFacts(profile: VisitorProfile, now = Date.now()): Facts {
  const sessions = profile.sessions
  const latest = [...sessions].sort((a, b) => b.startedAt.localeCompare(a.startedAt))[0]
  const contact = profile.contact
  const company = profile.company
  return {
    utm_source: distinct(sessions.map((s) => s.utmSource)),
    utm_medium: distinct(sessions.map((s) => s.utmMedium)),
    utm_campaign: distinct(sessions.map((s) => s.utmCampaign)),
    utm_term: distinct(sessions.map((s) => s.utmTerm)),
    utm_content: distinct(sessions.map((s) => s.utmContent)),
    pages: distinct(profile.pageViews.map((view) => pathOf(view.url))),
    page_view_count: profile.pageViews.length,
    session_count: sessions.length,
    last_seen_days: Math.floor((now - Date.parse(profile.lastSeenAt)) / 86_400_000),
    country: present(latest?.country),
    region: present(latest?.region),
    city: present(latest?.city),
    is_hosting: latest?.isHosting,
    is_anonymous: latest?.isAnonymous,
    job_title: present(contact?.jobTitle),
    linkedin_url: present(contact?.linkedinUrl),
    seniority: present(contact?.seniority),
    department: present(contact?.department),
    contact_country: present(contact?.country),
    industry: present(company?.industry),
    domain: present(company?.domain),
    employee_size_range: present(company?.employeeSizeRange),
    company_size: present(company?.size),
    company_city: present(company?.city),
    company_region: present(company?.region),
    company_postal_code: present(company?.postalCode),
    company_country: present(company?.country),
    revenue_range: present(company?.revenueRange),
    icp_match: profile.icp,
    persona_match: profile.personaMatch,
  }
}
