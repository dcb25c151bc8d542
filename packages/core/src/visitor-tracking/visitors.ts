import { presentCompany, unknownCompany, type VisitorCompany } from '../companies/present.js'
import type { CompanyRow } from '../companies/rows.js'
import {
  type ProfileContact,
  profileContactFields,
  type VisitorContactField,
} from '../contact-fields/contact-fields.js'
import type { IcpConfigRow } from '../icp/rows.js'
import { type VisitorIcp, visitorIcp } from '../icp/statuses.js'
import type { Store } from '../store/client.js'
import type { PageViewRow } from '../store/page-view-row.js'
import type { VisitorRow } from './rows.js'

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
  userAgent: string
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
  /** Every contact field of the webhook `visitor` object, camelCase; null when unknown. Null when not identified. */
  contact: ProfileContact | null
  /** The visitor's company (the webhook `company` fields, camelCase): its contact's, else its sessions' IP company. */
  company: VisitorCompany | null
  /** Matched by any active ICP config. */
  icp: boolean
  /** Slug -> matched, for every active ICP config that has scored the visitor. */
  icpStatuses: Record<string, boolean>
  personaMatch: boolean
  sessions: VisitorSession[]
  pageViews: PageViewEntry[]
}

/**
 * The packed first-page-view state of a session (migration 0004), as the engine answers it: the
 * first view's columns of `page_views`, and where the session entered.
 */
type FirstPageView = Pick<
  PageViewRow,
  | 'referrer'
  | 'search_engine'
  | 'search_term'
  | 'utm_source'
  | 'utm_medium'
  | 'utm_campaign'
  | 'utm_term'
  | 'utm_content'
  | 'tracking_params'
  | 'screen_width'
  | 'screen_height'
  | 'language'
  | 'timezone'
  | 'ip'
  | 'country'
  | 'region'
  | 'city'
  | 'isp'
  | 'asn'
  | 'connection_type'
  | 'is_hosting'
  | 'is_anonymous'
  | 'user_agent'
  | 'device_type'
  | 'browser'
  | 'browser_version'
  | 'os'
  | 'os_version'
  | 'device_model'
> & { landing_page: string; entry_page: string }

/** The id of a visitor's identity row in `sessions` (migration 0005). */
export const identitySessionId = '00000000-0000-0000-0000-000000000000'
/** Room for the identity rows ahead of the sessions: one, or one per shard on a cluster. */
export const identityRowsMax = 16

/** A row of `sessions` as the profile reads it: a session, or the visitor's identity row. */
export interface TimelineRow {
  id: string
  started_at: string
  ended_at: string
  first: FirstPageView
  exit_page: string
  page_view_count: number
  engaged_ms: number
  max_scroll: number
  company_id: string
  /** The session's page views: [time, URL, title]. */
  views: [string, string, string][]
  /** On the identity row: the latest version of the visitors row, as JSON ('' elsewhere). */
  identity: string
  /** On the identity row: the visitor's ICP scores (migration 0006, see icp/statuses.ts). */
  icp: [string[], number[]]
}

/** The identity row's JSON: the latest visitor row (rows written before migration 0009 lack most contact fields). */
type VisitorFields = Partial<Pick<VisitorRow, VisitorContactField>> &
  Pick<VisitorRow, 'company_id' | 'identified_at' | 'first_seen_at' | 'last_seen_at'> & {
    is_deleted: number
    version: number | string
  }

/**
 * The whole profile in one read of one table: `sessions` holds each session with its page views,
 * and the visitor's identity row (migration 0005). The embedded engine charges for every table and
 * column a statement reads, so the profile reads one table, and the first-page-view fields as one
 * packed tuple read whole: extracting its 30 fields in SQL costs more than the rest of the query.
 * FINAL merges each row's states once, without a GROUP BY; the key filters in PREWHERE, before the
 * merge (sorting-key columns, the same on every row one merge combines, so the result is the
 * same). The identity row sorts first. One thread:
 * a handful of rows gains nothing from a second one, and pays for starting it.
 */
const profileSql = `
SELECT toString(session_id) AS id, started_at, ended_at,
  finalizeAggregation(first_page_view) AS first, finalizeAggregation(exit_page) AS exit_page,
  page_view_count, engaged_ms, max_scroll, finalizeAggregation(company_id) AS company_id,
  finalizeAggregation(views) AS views, finalizeAggregation(identity) AS identity, icp
FROM sessions FINAL
PREWHERE organization_id = {organizationId:UUID} AND visitor_id = {visitorId:UUID}
ORDER BY session_id = toUUID('${identitySessionId}') DESC, started_at DESC
LIMIT {rowLimit:UInt32}
SETTINGS max_threads = 1`

/**
 * The same read for several visitors of one organization at once (identification's events),
 * optionally of some sessions only: their rows and the identity rows are found by the sorting key
 * alone, where every session of a visitor would be merged from every part that holds one. The
 * states are merged by GROUP BY, not FINAL: identification reads a few hundred visitors whose
 * sessions are still spread over fresh parts, seconds after their hits, and there FINAL costs
 * about ten times the grouping of the same rows, with the same result (bench/README.md, "Identify
 * hits"). Inner names differ from the columns they merge, so no alias shadows a column.
 */
const profilesSql = (sessionsOnly: boolean) => `
SELECT toString(visitor_id) AS visitor, toString(session_id) AS id, first_hit AS started_at,
  last_hit AS ended_at, first_view AS first, exit AS exit_page, views_count AS page_view_count,
  engaged AS engaged_ms, scroll AS max_scroll, company AS company_id, pages AS views,
  identity_json AS identity, scores AS icp
FROM (
  SELECT visitor_id, session_id, min(started_at) AS first_hit, max(ended_at) AS last_hit,
    argMinMerge(first_page_view) AS first_view, argMaxMerge(exit_page) AS exit,
    sum(page_view_count) AS views_count, sum(engaged_ms) AS engaged, max(max_scroll) AS scroll,
    argMaxMerge(company_id) AS company, groupArrayMerge(views) AS pages,
    argMaxMerge(identity) AS identity_json, maxMap(icp) AS scores
  FROM sessions
  WHERE organization_id = {organizationId:UUID} AND visitor_id IN {visitorIds:Array(UUID)}${
    sessionsOnly
      ? ` AND session_id IN arrayPushBack({sessionIds:Array(UUID)}, toUUID('${identitySessionId}'))`
      : ''
  }
  GROUP BY visitor_id, session_id
)
ORDER BY visitor_id, session_id = toUUID('${identitySessionId}') DESC, first_hit DESC
LIMIT {rowLimit:UInt32} BY visitor_id`

/** The company as the profile shows it; known only by id (not imported yet): its other fields empty. */
async function companyObject(
  id: string,
  companyOf: VisitorProfileOptions['companyOf'],
): Promise<VisitorCompany> {
  const row = await companyOf?.(id)
  return row ? presentCompany(row) : unknownCompany(id)
}

/**
 * The contact as the profile shows it. Not the phone, even where a row identified before that rule
 * still holds one (contactFieldDefinitions says why).
 */
function presentContact(visitor: VisitorFields): ProfileContact {
  const contact = {} as Record<string, string | null>
  for (const { column, shownAs } of profileContactFields) contact[shownAs] = visitor[column] || null
  return contact as ProfileContact
}

const wholeSeconds = (timestamp: string) => Math.floor(Date.parse(timestamp) / 1000)

/** A session as the API shows it, from its row; the IP only where the organization keeps IPs. */
function presentSession(row: TimelineRow, ipTracking: boolean): VisitorSession {
  const { first } = row
  return {
    id: row.id,
    startedAt: row.started_at,
    endedAt: row.ended_at,
    country: first.country,
    region: first.region,
    city: first.city,
    isp: first.isp,
    asn: first.asn ? `AS${first.asn}` : '',
    connectionType: first.connection_type,
    isHosting: first.is_hosting,
    isAnonymous: first.is_anonymous,
    landingPage: first.landing_page,
    entryPage: first.entry_page,
    exitPage: row.exit_page,
    referrer: first.referrer,
    searchEngine: first.search_engine,
    searchTerm: first.search_term,
    utmSource: first.utm_source,
    utmMedium: first.utm_medium,
    utmCampaign: first.utm_campaign,
    utmTerm: first.utm_term,
    utmContent: first.utm_content,
    deviceType: first.device_type,
    userAgent: first.user_agent,
    browser: first.browser,
    browserVersion: first.browser_version,
    os: first.os,
    osVersion: first.os_version,
    deviceModel: first.device_model,
    screenWidth: first.screen_width,
    screenHeight: first.screen_height,
    language: first.language,
    timezone: first.timezone,
    ...(ipTracking && first.ip ? { ipAddress: first.ip } : {}),
    // Seconds from start to end (as ClickHouse's dateDiff counts them), or the engaged time the
    // pixel reported when that is longer (one-page sessions).
    sessionDurationSeconds: Math.max(
      wholeSeconds(row.ended_at) - wholeSeconds(row.started_at),
      Math.floor(row.engaged_ms / 1000),
    ),
    pageViewCount: row.page_view_count,
    maxScrollPercent: row.max_scroll,
    trackingParams: first.tracking_params,
  }
}

export const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export interface VisitorProfileOptions {
  /** Whether the organization stores IP addresses; when false, sessions carry no ipAddress. */
  ipTracking: boolean
  sessionLimit?: number
  pageViewLimit?: number
  /** The organization's ICP configs (from memory): only active ones count. */
  icpConfigs?: readonly IcpConfigRow[]
  /** Reads a company by id (from memory where the read model has it). */
  companyOf?: (id: string) => Promise<CompanyRow | undefined>
}

/**
 * A visitor's profile within one organization, or undefined when that organization has never
 * seen the visitor (so another tenant's visitor id is indistinguishable from an unknown one).
 */
export async function getVisitorProfile(
  store: Store,
  organizationId: string,
  visitorId: string,
  options: VisitorProfileOptions,
): Promise<VisitorProfile | undefined> {
  if (!uuidPattern.test(visitorId) || !uuidPattern.test(organizationId)) return undefined
  const sessionLimit = options.sessionLimit ?? 100
  const rows = await store.query<TimelineRow>(profileSql, {
    organizationId,
    visitorId,
    // Identity rows sort first: one, or one per shard that holds a version on a cluster.
    rowLimit: sessionLimit + identityRowsMax,
  })
  return profileOf(rows, organizationId, visitorId, options)
}

/**
 * The profiles of several visitors of one organization, in one read (visitors it never saw are
 * missing from the map). With `sessionIds`, the profiles hold those sessions only (and their page
 * views): all an identification event needs, for a fraction of the read.
 */
export async function getVisitorProfiles(
  store: Store,
  organizationId: string,
  visitorIds: readonly string[],
  options: VisitorProfileOptions & { sessionIds?: readonly string[] },
): Promise<Map<string, VisitorProfile>> {
  const validIds = (list: readonly string[]) =>
    [...new Set(list.map((id) => id.toLowerCase()))].filter((id) => uuidPattern.test(id))
  const ids = validIds(visitorIds)
  const profiles = new Map<string, VisitorProfile>()
  if (ids.length === 0 || !uuidPattern.test(organizationId)) return profiles
  const sessionIds = options.sessionIds && validIds(options.sessionIds)
  const rows = await store.query<TimelineRow & { visitor: string }>(profilesSql(sessionIds !== undefined), {
    organizationId,
    visitorIds: ids,
    ...(sessionIds ? { sessionIds } : {}),
    rowLimit: (options.sessionLimit ?? 100) + identityRowsMax,
  })
  const byVisitor = new Map<string, TimelineRow[]>()
  for (const row of rows) byVisitor.set(row.visitor, [...(byVisitor.get(row.visitor) ?? []), row])
  for (const [visitor, visitorRows] of byVisitor) {
    const profile = await profileOf(visitorRows, organizationId, visitor, options)
    if (profile) profiles.set(visitor, profile)
  }
  return profiles
}

/** A profile from its timeline rows (the identity row first, then sessions, newest first). */
export async function profileOf(
  rows: TimelineRow[],
  organizationId: string,
  visitorId: string,
  options: VisitorProfileOptions,
): Promise<VisitorProfile | undefined> {
  const sessionLimit = options.sessionLimit ?? 100
  // The latest version of the visitor row: on a cluster, versions written on different nodes can
  // come from different shards as separate identity rows.
  let latest: VisitorFields | undefined
  const sessionRows: TimelineRow[] = []
  const scores: [string[], number[]] = [[], []]
  for (const row of rows) {
    if (row.id !== identitySessionId) sessionRows.push(row)
    else {
      if (row.identity) {
        const identity = JSON.parse(row.identity) as VisitorFields
        if (!latest || Number(identity.version) > Number(latest.version)) latest = identity
      }
      // On a cluster each shard's identity row holds part of the map: the largest value per config wins.
      row.icp[0].forEach((id, i) => {
        scores[0].push(id)
        scores[1].push(Number(row.icp[1][i]))
      })
    }
  }
  const visitor = latest && !latest.is_deleted ? latest : undefined
  if (!visitor && sessionRows.length === 0) return undefined
  sessionRows.splice(sessionLimit)
  const pageViews: PageViewEntry[] = sessionRows
    .flatMap((session) =>
      session.views.map(([visitedAt, url, title]) => ({ url, title, sessionId: session.id, visitedAt })),
    )
    .sort((a, b) => Date.parse(b.visitedAt) - Date.parse(a.visitedAt))
    .slice(0, options.pageViewLimit ?? 500)

  const companyId = visitor?.company_id || sessionRows.find((s) => s.company_id)?.company_id || ''
  const { icp, icpStatuses, personaMatch }: VisitorIcp = visitorIcp(scores, options.icpConfigs ?? [])
  const times = sessionRows.flatMap((s) => [s.started_at, s.ended_at]).sort()
  return {
    id: visitorId,
    organizationId,
    firstSeenAt: visitor?.first_seen_at ?? times[0]!,
    lastSeenAt: times.at(-1) ?? visitor!.last_seen_at,
    contact: visitor?.email ? presentContact(visitor) : null,
    company: companyId ? await companyObject(companyId, options.companyOf) : null,
    icp,
    icpStatuses,
    personaMatch,
    sessions: sessionRows.map((row) => presentSession(row, options.ipTracking)),
    pageViews,
  }
}
