// The ingest pipeline, one explicit list of steps per hit (see ARCHITECTURE.md):
//   filters:    tracking key -> origin -> bot -> privacy signals -> identify needs consent
//               -> identify needs an email
//   enrichment: network (IP: geo, ISP/ASN, connection type, company by range, reverse DNS or ASN)
//               -> company-only (the organization's company-only countries: no person, no IP)
//               -> device (user agent)
//               -> referrer (search engine, term) -> campaign (UTM, click ids)
// A filtered hit is dropped and counted by reason (and, once its organization is known, by
// organization and day: dropped-hits.ts); it is never stored.
import { type FilteredHitReason, filteredHitReasons } from '@visitor-id/core/analytics'
import { type ErasedVisitors, replacementVisitorId } from '@visitor-id/core/privacy'
import type { PixelConfigRow } from '@visitor-id/core/visitor-tracking'
import { consentNoIdentification, wire } from '@visitor-id/pixel'
import { type Hit, isTrackingKeyShape } from '../collect-schema.js'
import type { IpInfo, IpIntelligence } from '../ip/ip-intelligence.js'
import { type PageViewRow, toPageViewRow } from '../page-view-row.js'
import type { TrackingKeyCache } from '../tracking-keys.js'
import { botVerdict } from './bot.js'
import { campaignParams } from './campaign.js'
import { applyCompanyOnly, type PrivacySettingsSource } from './company-only.js'
import { isAllowedOrigin } from './origin.js'
import { parseReferrer } from './referrer.js'
import { parseUserAgent } from './user-agent.js'

/**
 * Why a hit was dropped: `unknown_key` (no organization to count it for: /metrics only), or one of
 * the reasons an organization sees (core's `filteredHitReasons`; the ingest README has each).
 */
export const dropReasons = ['unknown_key', ...filteredHitReasons] as const
export type DropReason = (typeof dropReasons)[number]

/** What the HTTP request tells about a hit. */
export interface HitRequest {
  /** Client IP (Fastify resolves X-Forwarded-For only when TRUST_PROXY is set). */
  ip: string
  userAgent: string
  origin: string | undefined
  referer: string | undefined
  /** `Sec-GPC: 1` or `DNT: 1`. */
  privacySignal: boolean
  receivedAt: number
}

/** A stored hit's row, or why it was dropped (with its organization once the key named one). */
export type PipelineResult =
  | { row: PageViewRow }
  | { drop: 'unknown_key' }
  | { drop: FilteredHitReason; organizationId: string }

interface StepInput {
  hit: Hit
  url: URL
  request: HitRequest
  config: PixelConfigRow
}

/** A step may return a promise (only the network step does, while a reverse DNS query is pending). */
type EnrichmentStep = (row: PageViewRow, input: StepInput) => void | Promise<void>

/**
 * IP -> geo, ISP, ASN, connection type, hosting / anonymous, company. The IP itself only if allowed.
 * The company by reverse DNS may take a query: the hit waits for it a few tens of ms at most.
 */
const network =
  (intelligence: IpIntelligence | undefined): EnrichmentStep =>
  (row, { request, config }) => {
    if (!intelligence) {
      row.ip = config.ip_tracking ? request.ip : ''
      return
    }
    const info = intelligence.resolve(request.ip)
    if (info instanceof Promise) return info.then((resolved) => applyIpInfo(row, resolved, config))
    applyIpInfo(row, info, config)
  }

function applyIpInfo(row: PageViewRow, info: IpInfo, config: PixelConfigRow) {
  row.ip = config.ip_tracking ? info.ip : ''
  row.country = info.country
  row.region = info.region
  row.city = info.city
  row.isp = info.isp
  row.asn = info.asn
  row.connection_type = info.connectionType
  row.is_hosting = info.isHosting
  row.is_anonymous = info.isAnonymous
  row.company_id = info.companyId
}

const device: EnrichmentStep = (row, { request }) => {
  const agent = parseUserAgent(request.userAgent)
  row.device_type = agent.deviceType
  row.browser = agent.browser
  row.browser_version = agent.browserVersion
  row.os = agent.os
  row.os_version = agent.osVersion
  row.device_model = agent.deviceModel
}

const referrer: EnrichmentStep = (row) => {
  const info = parseReferrer(row.referrer)
  row.referrer_domain = info.referrerDomain
  row.search_engine = info.searchEngine
  row.search_term = info.searchTerm
}

const campaign: EnrichmentStep = (row, { url }) => {
  const { utm, trackingParams } = campaignParams(url)
  Object.assign(row, utm)
  row.tracking_params = trackingParams
}

/** The filters after the tracking key, in order: the first that applies is the reason to drop. */
function filterReason(
  hit: Hit,
  url: URL,
  request: HitRequest,
  config: PixelConfigRow,
): FilteredHitReason | undefined {
  if (!isAllowedOrigin(config, url.hostname, request.origin, request.referer)) return 'origin'
  const bot = botVerdict(request.userAgent, hit[wire.webdriver])
  if (bot) return bot
  if (config.respect_privacy_signals && request.privacySignal) return 'privacy'
  if (hit[wire.event] === 'id' && (hit[wire.consent] ?? 0) & consentNoIdentification) return 'consent'
  if (hit[wire.event] === 'id' && !hit[wire.email]) return 'invalid'
  return undefined
}

export interface HitPipelineOptions {
  trackingKeys: TrackingKeyCache
  /** Unset: no IP enrichment (the IP is still stored when allowed). */
  ipIntelligence?: IpIntelligence | undefined
  /** Erased visitor ids: a hit of one is stored under its replacement, a new anonymous visitor. */
  erasedVisitors?: Pick<ErasedVisitors, 'visitorIdFor'> | undefined
  /** The organizations' privacy settings (from memory), for company-only countries. Unset: none. */
  privacySettings?: PrivacySettingsSource | undefined
}

export interface HitPipeline {
  process(hit: Hit, request: HitRequest): Promise<PipelineResult>
  /** Step names in order, for logs and docs. */
  readonly steps: readonly string[]
}

/**
 * A hit of an erased visitor id (its browser still sends it) becomes a hit of a new anonymous
 * visitor, in a new session: the person asked to be forgotten, not to be tracked afresh under the
 * old id. The replacement is the same for every hit of that browser.
 */
function forgetErased(row: PageViewRow, erased: Pick<ErasedVisitors, 'visitorIdFor'>) {
  const visitorId = erased.visitorIdFor(row.organization_id, row.visitor_id)
  if (visitorId === row.visitor_id) return
  row.visitor_id = visitorId
  row.session_id = replacementVisitorId(row.session_id)
}

/**
 * Builds the pipeline.
 * @example const result = await pipeline.process(hit, request); if ('row' in result) rows.push(result.row)
 */
export function createHitPipeline(options: HitPipelineOptions): HitPipeline {
  const networkStep = network(options.ipIntelligence)
  const enrichment: [string, EnrichmentStep][] = [
    ['device', device],
    ['referrer', referrer],
    ['campaign', campaign],
  ]
  return {
    steps: [
      'tracking-key',
      'origin',
      'bot',
      'privacy',
      'consent',
      'identify-email',
      'network',
      'company-only',
      ...enrichment.map(([name]) => name),
    ],
    async process(hit, request) {
      const key = hit[wire.trackingKey]
      // Unknown keys are answered like known ones (202); malformed ones never reach the store.
      const config = isTrackingKeyShape(key) ? await options.trackingKeys.resolve(key) : undefined
      if (!config) return { drop: 'unknown_key' }
      const url = new URL(hit[wire.url])
      const drop = filterReason(hit, url, request, config)
      if (drop) return { drop, organizationId: config.organization_id }
      const row = toPageViewRow(hit, config, request, url)
      if (options.erasedVisitors) forgetErased(row, options.erasedVisitors)
      const input = { hit, url, request, config }
      const located = networkStep(row, input)
      if (located) await located
      // Needs the IP country, so it runs after the network step; it drops identify hits only.
      const companyOnly = options.privacySettings && (await applyCompanyOnly(row, options.privacySettings))
      if (companyOnly) return { drop: companyOnly, organizationId: config.organization_id }
      for (const [, step] of enrichment) {
        const pending = step(row, input)
        if (pending) await pending
      }
      return { row }
    },
  }
}
