import type { Store } from '../store/client.js'
import type { Repositories } from '../store/entities.js'

/** A session as the REST API shows it (spec: "Session object"). */
export interface VisitorSession {
  id: string
  startedAt: string
  endedAt: string
  country: string
  region: string
  city: string
  isp: string
  asn: string
  connectionType: string
  isHosting: boolean
  isAnonymous: boolean
  landingPage: string
  entryPage: string
  exitPage: string
  referrer: string
  searchEngine: string
  searchTerm: string
  utmSource: string
  utmMedium: string
  utmCampaign: string
  utmTerm: string
  utmContent: string
  deviceType: string
  browser: string
  browserVersion: string
  os: string
  osVersion: string
  deviceModel: string
  screenWidth: number
  screenHeight: number
  language: string
  timezone: string
  ipAddress?: string
  sessionDurationSeconds: number
  pageViewCount: number
  maxScrollPercent: number
  trackingParams: Record<string, string>
}

export interface PageViewEntry {
  url: string
  title: string
  sessionId: string
  visitedAt: string
}

export interface VisitorProfile {
  id: string
  organizationId: string
  firstSeenAt: string
  lastSeenAt: string
  contact: {
    email: string | null
    firstName: string | null
    lastName: string | null
    jobTitle: string | null
    linkedinUrl: string | null
  } | null
  company: { id: string } | null
  sessions: VisitorSession[]
  pageViews: PageViewEntry[]
}

type SessionRow = Omit<VisitorSession, 'asn' | 'ipAddress'> & {
  asn: number
  ipAddress: string
  companyId: string
}

// A session's first-page-view attributes are one packed state (migration 0004): merged once per
// session, then read field by field (a WITH alias is not a result column).
const sessionsSql = `
WITH argMinMerge(first_page_view) AS first_view
SELECT
  toString(session_id) AS id,
  min(started_at) AS startedAt,
  max(ended_at) AS endedAt,
  first_view.country AS country,
  first_view.region AS region,
  first_view.city AS city,
  first_view.isp AS isp,
  first_view.asn AS asn,
  first_view.connection_type AS connectionType,
  first_view.is_hosting AS isHosting,
  first_view.is_anonymous AS isAnonymous,
  first_view.landing_page AS landingPage,
  first_view.entry_page AS entryPage,
  argMaxMerge(exit_page) AS exitPage,
  first_view.referrer AS referrer,
  first_view.search_engine AS searchEngine,
  first_view.search_term AS searchTerm,
  first_view.utm_source AS utmSource,
  first_view.utm_medium AS utmMedium,
  first_view.utm_campaign AS utmCampaign,
  first_view.utm_term AS utmTerm,
  first_view.utm_content AS utmContent,
  first_view.device_type AS deviceType,
  first_view.browser AS browser,
  first_view.browser_version AS browserVersion,
  first_view.os AS os,
  first_view.os_version AS osVersion,
  first_view.device_model AS deviceModel,
  first_view.screen_width AS screenWidth,
  first_view.screen_height AS screenHeight,
  first_view.language AS language,
  first_view.timezone AS timezone,
  first_view.ip AS ipAddress,
  toUInt32(greatest(dateDiff('second', min(started_at), max(ended_at)), intDiv(sum(engaged_ms), 1000))) AS sessionDurationSeconds,
  toUInt32(sum(page_view_count)) AS pageViewCount,
  max(max_scroll) AS maxScrollPercent,
  first_view.tracking_params AS trackingParams,
  argMaxMerge(company_id) AS companyId
FROM sessions
WHERE organization_id = {organizationId:UUID} AND visitor_id = {visitorId:UUID}
GROUP BY session_id
ORDER BY startedAt DESC
LIMIT {limit:UInt32}`

const pageViewsSql = `
SELECT url, title, toString(session_id) AS sessionId, timestamp AS visitedAt
FROM page_views
WHERE organization_id = {organizationId:UUID} AND visitor_id = {visitorId:UUID} AND type = 'pageview'
ORDER BY timestamp DESC
LIMIT {limit:UInt32}`

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export interface VisitorProfileOptions {
  /** Whether the organization stores IP addresses; when false, sessions carry no ipAddress. */
  ipTracking: boolean
  sessionLimit?: number
  pageViewLimit?: number
}

/**
 * A visitor's profile within one organization, or undefined when that organization has never
 * seen the visitor (so another tenant's visitor id is indistinguishable from an unknown one).
 */
export async function getVisitorProfile(
  store: Store,
  repos: Repositories,
  organizationId: string,
  visitorId: string,
  options: VisitorProfileOptions,
): Promise<VisitorProfile | undefined> {
  if (!uuidPattern.test(visitorId) || !uuidPattern.test(organizationId)) return undefined
  const params = { organizationId, visitorId }
  const [visitor, sessionRows, pageViews] = await Promise.all([
    repos.visitors.get({ organization_id: organizationId, id: visitorId }),
    store.query<SessionRow>(sessionsSql, { ...params, limit: options.sessionLimit ?? 100 }),
    store.query<PageViewEntry>(pageViewsSql, { ...params, limit: options.pageViewLimit ?? 500 }),
  ])
  if (!visitor && sessionRows.length === 0) return undefined

  const sessions = sessionRows.map(({ companyId: _companyId, asn, ipAddress, ...session }) => ({
    ...session,
    asn: asn ? `AS${asn}` : '',
    ...(options.ipTracking && ipAddress ? { ipAddress } : {}),
  }))
  const companyId = visitor?.company_id || sessionRows.find((s) => s.companyId)?.companyId || ''
  const times = sessionRows.flatMap((s) => [s.startedAt, s.endedAt]).sort()
  return {
    id: visitorId,
    organizationId,
    firstSeenAt: visitor?.first_seen_at ?? times[0]!,
    lastSeenAt: times.at(-1) ?? visitor!.last_seen_at,
    contact: visitor?.email
      ? {
          email: visitor.email,
          firstName: visitor.first_name || null,
          lastName: visitor.last_name || null,
          jobTitle: visitor.job_title || null,
          linkedinUrl: visitor.linkedin_url || null,
        }
      : null,
    company: companyId ? { id: companyId } : null,
    sessions,
    pageViews,
  }
}
