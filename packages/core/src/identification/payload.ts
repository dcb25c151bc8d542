// The identification payload of the spec (section "Events"): what `visitor.identified` and
// `visitor.phone_revealed` carry, snake_case, every field present. Unknown strings are '',
// unknown demographics null; is_hosting and is_anonymous are always sent; ip_address is left out
// when the organization does not keep IP addresses.

import type { CompanyRow } from '../companies/rows.js'
import type { VisitorIcp } from '../icp/statuses.js'
import { storedTime } from '../store/time.js'
import type { VisitorContactFields, VisitorRow } from '../visitor-tracking/rows.js'
import type { VisitorSession } from '../visitor-tracking/visitors.js'

export type IdentificationEventType = 'visitor.identified' | 'visitor.phone_revealed'

/**
 * The visitor as identification knows it: its row's contact fields the spec's visitor object
 * carries (not the seniority, department or country). Not the row's phone: a phone is paid data,
 * carried only by `visitor.phone_revealed` (`revealedPhone` below).
 */
export type IdentifiedVisitor = Pick<VisitorRow, 'id' | 'created_at' | 'last_seen_at'> &
  Omit<VisitorContactFields, 'contact_id' | 'phone' | 'seniority' | 'department' | 'country'>

export interface IdentificationPayloadInput {
  eventType: IdentificationEventType
  timestamp: string
  organization: { id: string; name: string }
  /** False when the organization does not keep IP addresses: no ip_address. */
  ipTracking: boolean
  visitor: IdentifiedVisitor
  /**
   * The phone the organization's own search found: `visitor.phone`, on `visitor.phone_revealed`
   * only. Every other event sends it empty, whatever the visitor row holds.
   */
  revealedPhone?: string | undefined
  icp: VisitorIcp
  company: CompanyRow | undefined
  /** The session the identification happened in (the latest), if any. */
  session: VisitorSession | undefined
  /** True when that session is the visitor's first. */
  firstVisit: boolean
  pageViews: readonly { url: string; visitedAt: string }[]
}

const demographics = [
  'gender',
  'age_range',
  'income_range',
  'net_worth',
  'homeowner',
  'married',
  'children',
] as const

const iso = (value: string) => (value ? storedTime(value) : '')

function visitorObject(input: IdentificationPayloadInput) {
  const v = input.visitor
  return {
    id: v.id,
    email: v.email,
    personal_email: v.personal_email,
    first_name: v.first_name,
    last_name: v.last_name,
    job_title: v.job_title,
    phone: input.eventType === 'visitor.phone_revealed' ? (input.revealedPhone ?? '') : '',
    location: v.location,
    photo_url: v.photo_url,
    linkedin_url: v.linkedin_url,
    facebook_url: v.facebook_url,
    twitter_url: v.twitter_url,
    address: v.address,
    address_2: v.address_2,
    city: v.city,
    state: v.state,
    postal_code: v.postal_code,
    ...(Object.fromEntries(demographics.map((key) => [key, v[key] === '' ? null : v[key]])) as Record<
      (typeof demographics)[number],
      string | null
    >),
    icp: input.icp.icp,
    icp_statuses: input.icp.icpStatuses,
    persona_match: input.icp.personaMatch,
    created_at: iso(v.created_at),
    last_seen_at: iso(v.last_seen_at),
  }
}

function companyObject(company: CompanyRow | undefined) {
  const c = company
  return {
    id: c?.id ?? '',
    name: c?.name ?? '',
    domain: c?.domain ?? '',
    industry: c?.industry ?? '',
    size: c?.size ?? '',
    employee_size_range: c?.employee_size_range ?? '',
    revenue_range: c?.revenue_range ?? '',
    linkedin_url: c?.linkedin_url ?? '',
    website_url: c?.website_url ?? '',
    description: c?.description ?? '',
    logo_url: c?.logo_url ?? '',
    address: c?.address ?? '',
    address_2: c?.address_2 ?? '',
    city: c?.city ?? '',
    region: c?.region ?? '',
    postal_code: c?.postal_code ?? '',
  }
}

function sessionObject(input: IdentificationPayloadInput) {
  const s = input.session
  const text = (value: string | undefined) => value ?? ''
  return {
    created_at: s ? iso(s.startedAt) : '',
    landing_page: text(s?.landingPage),
    entry_page: text(s?.entryPage),
    exit_page: text(s?.exitPage),
    referrer: text(s?.referrer),
    device_type: text(s?.deviceType),
    first_visit: input.firstVisit,
    utm_source: text(s?.utmSource),
    utm_campaign: text(s?.utmCampaign),
    utm_medium: text(s?.utmMedium),
    utm_term: text(s?.utmTerm),
    utm_content: text(s?.utmContent),
    // The campaign of the session: its UTM values (the spec names both families).
    campaign_name: text(s?.utmCampaign),
    campaign_source: text(s?.utmSource),
    campaign_medium: text(s?.utmMedium),
    campaign_term: text(s?.utmTerm),
    campaign_content: text(s?.utmContent),
    search_term: text(s?.searchTerm),
    search_engine: text(s?.searchEngine),
    country: text(s?.country),
    region: text(s?.region),
    city: text(s?.city),
    ...(input.ipTracking ? { ip_address: text(s?.ipAddress) } : {}),
    user_agent: text(s?.userAgent),
    browser: text(s?.browser),
    browser_version: text(s?.browserVersion),
    os: text(s?.os),
    os_version: text(s?.osVersion),
    device_model: text(s?.deviceModel),
    timezone: text(s?.timezone),
    language: text(s?.language),
    screen_width: s?.screenWidth ?? 0,
    screen_height: s?.screenHeight ?? 0,
    isp: text(s?.isp),
    asn: text(s?.asn),
    connection_type: text(s?.connectionType),
    is_hosting: s?.isHosting ?? false,
    is_anonymous: s?.isAnonymous ?? false,
    session_duration_seconds: s?.sessionDurationSeconds ?? 0,
    max_scroll_percent: s?.maxScrollPercent ?? 0,
    page_view_count: s?.pageViewCount ?? 0,
    tracking_params: s?.trackingParams ?? {},
  }
}

/** The identification payload; one builder for every event that carries it. */
export function identificationPayload(input: IdentificationPayloadInput) {
  return {
    event_type: input.eventType,
    timestamp: iso(input.timestamp),
    organization_id: input.organization.id,
    session_id: input.session?.id ?? '',
    workspace: input.organization.name,
    visitor: visitorObject(input),
    company: companyObject(input.company),
    session: sessionObject(input),
    page_views: input.pageViews.map((view) => ({ url: view.url, visited_at: iso(view.visitedAt) })),
  }
}

export type IdentificationPayload = ReturnType<typeof identificationPayload>
