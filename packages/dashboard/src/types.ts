// Shapes of the API answers the dashboard reads (see /openapi.json for every field).
import type { Rules } from '@visitor-id/icp-engine'

export interface Organization {
  id: string
  name: string
  domain: string | null
  isAgency: boolean
  identificationCredits: number
  autoPhoneEnrichmentEnabled: boolean
  productType: 'standard' | 'plus_employee'
}

export interface Page<T> {
  data: T[]
  page: number
  limit: number
  total: number
  totalPages: number
}

export interface Totals {
  visitors: number
  identifiedVisitors: number
  companies: number
  sessions: number
  pageViews: number
  avgSessionDurationSeconds: number
  icpVisitors: number
  engagedSeconds: number
}

export interface CompanyRow {
  id: string
  name: string
  domain: string
  industry: string
  employeeSizeRange: string
  country: string
  visitors: number
  identifiedVisitors: number
  sessions: number
  pageViews: number
  firstSeenAt: string
  lastSeenAt: string
  engagedSeconds: number
  icpMatch: boolean
}

export interface VisitorRow {
  id: string
  email: string
  firstName: string
  lastName: string
  jobTitle: string
  company: { id: string; name: string; domain: string } | null
  sessions: number
  pageViews: number
  firstSeenAt: string
  lastSeenAt: string
  identifiedAt: string | null
  icp: boolean
  personaMatch: boolean
}

export interface Contact {
  email: string | null
  firstName: string | null
  lastName: string | null
  jobTitle: string | null
  seniority: string | null
  department: string | null
  country: string | null
  linkedinUrl: string | null
  city: string | null
  state: string | null
}

export interface Company {
  id: string
  name: string
  domain: string
  industry: string
  size: string
  employeeSizeRange: string
  revenueRange: string
  city: string
  region: string
  postalCode: string
  country: string
  linkedinUrl: string
  websiteUrl: string
  description: string
}

export interface VisitSession {
  id: string
  startedAt: string
  endedAt: string
  country: string
  region: string
  city: string
  isHosting: boolean
  isAnonymous: boolean
  landingPage: string
  entryPage: string
  exitPage: string
  referrer: string
  utmSource: string
  utmMedium: string
  utmCampaign: string
  utmTerm: string
  utmContent: string
  deviceType: string
  browser: string
  os: string
  sessionDurationSeconds: number
  pageViewCount: number
}

export interface VisitorProfile {
  id: string
  firstSeenAt: string
  lastSeenAt: string
  contact: Contact | null
  company: Company | null
  icp: boolean
  icpStatuses: Record<string, boolean>
  personaMatch: boolean
  sessions: VisitSession[]
  pageViews: { url: string; title: string; sessionId: string; visitedAt: string }[]
  /** Only once this organization's search found the phone. */
  phoneNumber?: string
  /** Always there for a B2B organization; absent for others. */
  phoneNumberSearchStatus?: 'not_started' | 'ongoing' | 'found' | 'not_found' | 'error' | 'expired'
}

/** The organization-level filter (the same vocabulary lists use). */
export interface Filter {
  company?: Partial<Record<CompanyFilterKey, string[]>>
  contact?: Partial<Record<ContactFilterKey, string[]>>
}

export const companyFilterKeys = [
  'industries',
  'company_sizes',
  'employee_size_ranges',
  'domains',
  'countries',
  'regions',
  'cities',
  'revenue_ranges',
] as const
export const contactFilterKeys = ['job_titles', 'seniorities', 'departments', 'countries'] as const
export type CompanyFilterKey = (typeof companyFilterKeys)[number]
export type ContactFilterKey = (typeof contactFilterKeys)[number]

export interface Recalculation {
  status: 'queued' | 'running' | 'succeeded' | 'failed'
  visitors: number | null
  matches: number | null
  error: string | null
  finishedAt: string | null
}

export interface IcpConfig {
  slug: string
  name: string
  filter: Filter
  isActive: boolean
  priority: number
  updatedAt: string
  recalculation: Recalculation | null
}

export interface PartnerIcpConfig {
  id: string
  slug: string
  label: string
  rules: Rules
  priority: number
  isActive: boolean
  updatedAt: string
  recalculation: Recalculation | null
}

export interface SavedList {
  id: string
  name: string
  usedFilter: Filter
  contactsNum: number
  matchedContactsNum: number
  autoUpdateStatus: 'disabled' | 'enabled' | 'syncing'
  lastSyncedTime: string | null
  updatedAt: string
}

export interface ApiKey {
  id: string
  name: string
  keyPrefix: string
  scopes: string[]
  status: 'active' | 'revoked'
  expiresAt: string | null
  lastUsedAt: string | null
  createdAt: string
}

export interface PixelConfig {
  trackingKey: string
  allowedReferrers: string[]
  verifiedDomains: string[]
  ipTracking: boolean
  respectPrivacySignals: boolean
  formCapture: boolean
  scriptTag: { scriptUrl: string; jsSnippet: string; tagManagerSnippet: string }
}
