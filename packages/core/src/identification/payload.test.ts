// The identification payload, field by field against the spec's table (section "Events").
import { describe, expect, it } from 'vitest'
import type { CompanyRow } from '../companies/rows.js'
import type { VisitorSession } from '../visitor-tracking/visitors.js'
import { type IdentificationPayloadInput, type IdentifiedVisitor, identificationPayload } from './payload.js'

// The spec's lists, copied from its table: the test fails when the builder drops or renames one.
const spec = {
  top: [
    'event_type',
    'timestamp',
    'organization_id',
    'session_id',
    'workspace',
    'visitor',
    'company',
    'session',
    'page_views',
  ],
  visitorStrings: [
    'id',
    'email',
    'personal_email',
    'first_name',
    'last_name',
    'job_title',
    'phone',
    'location',
    'photo_url',
    'linkedin_url',
    'facebook_url',
    'twitter_url',
    'address',
    'address_2',
    'city',
    'state',
    'postal_code',
  ],
  visitorDemographics: [
    'gender',
    'age_range',
    'income_range',
    'net_worth',
    'homeowner',
    'married',
    'children',
  ],
  visitorOther: ['icp', 'icp_statuses', 'persona_match', 'created_at', 'last_seen_at'],
  company: [
    'id',
    'name',
    'domain',
    'industry',
    'size',
    'employee_size_range',
    'revenue_range',
    'linkedin_url',
    'website_url',
    'description',
    'logo_url',
    'address',
    'address_2',
    'city',
    'region',
    'postal_code',
  ],
  sessionStrings: [
    'created_at',
    'landing_page',
    'entry_page',
    'exit_page',
    'referrer',
    'device_type',
    'utm_source',
    'utm_campaign',
    'utm_medium',
    'utm_term',
    'utm_content',
    'campaign_name',
    'campaign_source',
    'campaign_medium',
    'campaign_term',
    'campaign_content',
    'search_term',
    'search_engine',
    'country',
    'region',
    'city',
    'ip_address',
    'user_agent',
    'browser',
    'browser_version',
    'os',
    'os_version',
    'device_model',
    'timezone',
    'language',
    'isp',
    'asn',
    'connection_type',
  ],
  sessionIntegers: [
    'screen_width',
    'screen_height',
    'session_duration_seconds',
    'max_scroll_percent',
    'page_view_count',
  ],
  sessionBooleans: ['first_visit', 'is_hosting', 'is_anonymous'],
  sessionObjects: ['tracking_params'],
}

const visitor: IdentifiedVisitor = {
  id: '5b0e3c1a-0000-4000-8000-000000000001',
  email: 'ada@acme.test',
  personal_email: 'ada@home.test',
  first_name: 'Ada',
  last_name: 'Lovelace',
  job_title: 'CTO',
  location: 'Paris, France',
  photo_url: 'https://img.test/ada.png',
  linkedin_url: 'https://linkedin.com/in/ada',
  facebook_url: '',
  twitter_url: 'https://x.test/ada',
  address: '1 rue de la Paix',
  address_2: '',
  city: 'Paris',
  state: 'IDF',
  postal_code: '75002',
  gender: 'female',
  age_range: '35-44',
  income_range: '',
  net_worth: '',
  homeowner: 'true',
  married: '',
  children: '',
  created_at: '2026-11-01T10:00:00.000Z',
  last_seen_at: '2026-11-20 09:30:00.123',
}

const company = {
  id: 'acme',
  name: 'Acme',
  domain: 'acme.test',
  industry: 'SaaS',
  size: '120',
  employee_size_range: '51-200',
  revenue_range: '10M-50M',
  linkedin_url: '',
  website_url: 'https://acme.test',
  description: 'Rockets',
  logo_url: '',
  address: '',
  address_2: '',
  city: 'Paris',
  region: 'IDF',
  postal_code: '75001',
  country: 'FR',
  source: 'import',
  created_at: '',
  updated_at: '',
} satisfies CompanyRow

const session = {
  id: '5b0e3c1a-0000-4000-8000-0000000000aa',
  startedAt: '2026-11-20T09:00:00.000Z',
  endedAt: '2026-11-20T09:30:00.123Z',
  country: 'FR',
  region: 'IDF',
  city: 'Paris',
  isp: 'Orange',
  asn: 'AS3215',
  connectionType: 'isp',
  isHosting: false,
  isAnonymous: true,
  landingPage: 'https://shop.test/?utm_source=news',
  entryPage: '/',
  exitPage: '/pricing',
  referrer: 'https://www.google.com/',
  searchEngine: 'google',
  searchTerm: '',
  utmSource: 'news',
  utmMedium: 'email',
  utmCampaign: 'launch',
  utmTerm: '',
  utmContent: '',
  deviceType: 'desktop',
  browser: 'Firefox',
  browserVersion: '133.0',
  os: 'Linux',
  osVersion: '',
  deviceModel: '',
  screenWidth: 1920,
  screenHeight: 1080,
  language: 'fr-FR',
  timezone: 'Europe/Paris',
  ipAddress: '203.0.113.9',
  sessionDurationSeconds: 1800,
  pageViewCount: 3,
  maxScrollPercent: 80,
  trackingParams: { gclid: 'g1' },
  userAgent: 'Mozilla/5.0',
} satisfies VisitorSession & { userAgent: string }

const input: IdentificationPayloadInput = {
  eventType: 'visitor.identified',
  timestamp: '2026-11-20T09:30:00.123Z',
  organization: { id: '5b0e3c1a-0000-4000-8000-0000000000cc', name: 'Shop' },
  ipTracking: true,
  visitor,
  icp: { icp: true, icpStatuses: { enterprise: true, smb: false }, personaMatch: false },
  company,
  session,
  firstVisit: false,
  pageViews: [{ url: 'https://shop.test/pricing', visitedAt: '2026-11-20 09:30:00.123' }],
}

const keys = (o: object) => Object.keys(o).sort()
const sorted = (...lists: string[][]) => lists.flat().sort()
const isoPattern = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

describe('identificationPayload', () => {
  const payload = identificationPayload(input)

  it('has exactly the fields of the spec, at every level', () => {
    expect(keys(payload)).toEqual(sorted(spec.top))
    expect(keys(payload.visitor)).toEqual(
      sorted(spec.visitorStrings, spec.visitorDemographics, spec.visitorOther),
    )
    expect(keys(payload.company)).toEqual(sorted(spec.company))
    expect(keys(payload.session)).toEqual(
      sorted(spec.sessionStrings, spec.sessionIntegers, spec.sessionBooleans, spec.sessionObjects),
    )
    expect(payload.page_views.map(keys)).toEqual([['url', 'visited_at']])
  })

  it('gives every field its type: strings, nullable demographics, booleans, integers, objects', () => {
    const record = (o: object) => o as Record<string, unknown>
    for (const key of spec.visitorStrings) expect(typeof record(payload.visitor)[key], key).toBe('string')
    for (const key of spec.visitorDemographics) {
      const value = record(payload.visitor)[key]
      expect(value === null || typeof value === 'string', key).toBe(true)
    }
    for (const key of spec.company) expect(typeof record(payload.company)[key], key).toBe('string')
    for (const key of spec.sessionStrings) expect(typeof record(payload.session)[key], key).toBe('string')
    for (const key of spec.sessionIntegers)
      expect(Number.isInteger(record(payload.session)[key]), key).toBe(true)
    for (const key of spec.sessionBooleans) expect(typeof record(payload.session)[key], key).toBe('boolean')
    expect(payload.session.tracking_params).toEqual({ gclid: 'g1' })
    expect(typeof payload.visitor.icp).toBe('boolean')
    expect(typeof payload.visitor.persona_match).toBe('boolean')
  })

  it('carries the values: ISO times, empty demographics as null, UTM as campaign, ICP results', () => {
    expect(payload).toMatchObject({
      event_type: 'visitor.identified',
      timestamp: '2026-11-20T09:30:00.123Z',
      organization_id: input.organization.id,
      session_id: session.id,
      workspace: 'Shop',
    })
    expect(payload.visitor).toMatchObject({
      email: 'ada@acme.test',
      gender: 'female',
      homeowner: 'true',
      income_range: null,
      children: null,
      icp: true,
      icp_statuses: { enterprise: true, smb: false },
      persona_match: false,
      created_at: '2026-11-01T10:00:00.000Z',
      last_seen_at: '2026-11-20T09:30:00.123Z',
    })
    expect(payload.visitor.created_at).toMatch(isoPattern)
    expect(payload.company).toMatchObject({ id: 'acme', domain: 'acme.test', employee_size_range: '51-200' })
    expect(payload.session).toMatchObject({
      created_at: '2026-11-20T09:00:00.000Z',
      first_visit: false,
      utm_source: 'news',
      campaign_source: 'news',
      campaign_name: 'launch',
      ip_address: '203.0.113.9',
      user_agent: 'Mozilla/5.0',
      asn: 'AS3215',
      is_anonymous: true,
      session_duration_seconds: 1800,
    })
    expect(payload.page_views).toEqual([
      { url: 'https://shop.test/pricing', visited_at: '2026-11-20T09:30:00.123Z' },
    ])
  })

  it('visitor.phone: empty on visitor.identified, the revealed phone on visitor.phone_revealed only', () => {
    // A phone is paid data: identification never sends it, whatever it is given.
    expect(identificationPayload({ ...input, revealedPhone: '+33123456789' }).visitor.phone).toBe('')
    expect(payload.visitor.phone).toBe('')
    const revealed = identificationPayload({
      ...input,
      eventType: 'visitor.phone_revealed',
      revealedPhone: '+33123456789',
    })
    expect(revealed.visitor.phone).toBe('+33123456789')
    expect(keys(revealed)).toEqual(keys(payload))
  })

  it('leaves ip_address out when the organization keeps no IP addresses', () => {
    const without = identificationPayload({ ...input, ipTracking: false })
    expect(without.session).not.toHaveProperty('ip_address')
    expect(keys(without.session)).toEqual(
      sorted(spec.sessionStrings, spec.sessionIntegers, spec.sessionBooleans, spec.sessionObjects).filter(
        (key) => key !== 'ip_address',
      ),
    )
  })

  it('without a company or a session: every field still there, empty, hosting flags false', () => {
    const bare = identificationPayload({ ...input, company: undefined, session: undefined, pageViews: [] })
    expect(Object.values(bare.company).every((value) => value === '')).toBe(true)
    expect(bare.session_id).toBe('')
    expect(bare.session).toMatchObject({
      is_hosting: false,
      is_anonymous: false,
      screen_width: 0,
      tracking_params: {},
    })
    expect(keys(bare.session)).toEqual(keys(payload.session))
    expect(bare.page_views).toEqual([])
  })
})
