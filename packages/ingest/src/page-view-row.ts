import { newId } from '@visitor-id/core/ids'
import type { PageViewRow } from '@visitor-id/core/store'
import type { PixelConfigRow } from '@visitor-id/core/visitor-tracking'
import { wire, wireEvents } from '@visitor-id/pixel'
import type { Hit } from './collect-schema.js'

/** What ingest knows about a hit besides its body. */
export interface HitContext {
  ip: string
  userAgent: string
  receivedAt: number
}

export type { PageViewRow } from '@visitor-id/core/store'

/** Every column of a row, in one fixed order (for array inserts). */
export const pageViewColumns = [
  'event_id',
  'organization_id',
  'visitor_id',
  'session_id',
  'type',
  'timestamp',
  'received_at',
  'url',
  'path',
  'hostname',
  'title',
  'referrer',
  'referrer_domain',
  'search_engine',
  'search_term',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'utm_term',
  'utm_content',
  'tracking_params',
  'screen_width',
  'screen_height',
  'language',
  'timezone',
  'engaged_ms',
  'max_scroll',
  'email',
  'ip',
  'country',
  'region',
  'city',
  'isp',
  'asn',
  'connection_type',
  'is_hosting',
  'is_anonymous',
  'user_agent',
  'device_type',
  'browser',
  'browser_version',
  'os',
  'os_version',
  'device_model',
  'company_id',
] as const satisfies readonly (keyof PageViewRow)[]

// Compile-time check that the list names every column of the row.
type MissingColumn = Exclude<keyof PageViewRow, (typeof pageViewColumns)[number]>
export const everyColumnListed: [MissingColumn] extends [never] ? true : MissingColumn = true

/**
 * A row's values in `pageViewColumns` order, for array inserts. Built once from the column list
 * as plain property reads: reading `row[column]` for each of 45 names is a megamorphic lookup
 * every time, and made building and encoding a batch about twice as slow.
 */
export const toColumnValues = new Function(
  'row',
  `return [${pageViewColumns.map((column) => `row.${column}`).join(', ')}]`,
) as (row: PageViewRow) => unknown[]

/** The inverse of `toColumnValues`: a row from its values in `pageViewColumns` order. */
export const fromColumnValues = new Function(
  'values',
  `return { ${pageViewColumns.map((column, i) => `${column}: values[${i}]`).join(', ')} }`,
) as (values: readonly unknown[]) => PageViewRow

/** A row as the page views' spool holds it: its JSONCompactEachRow line, ready for an insert. */
export const encodePageViewRow = (row: PageViewRow): string => JSON.stringify(toColumnValues(row))

/** A spooled row back: values in column order, or a keyed object (as spooled before). */
export const decodePageViewRow = (value: unknown): PageViewRow =>
  Array.isArray(value) ? fromColumnValues(value) : (value as PageViewRow)

const cut = (value: string | undefined, max: number) => (value === undefined ? '' : value.slice(0, max))
const clamp = (value: number | undefined, max: number) =>
  value === undefined ? 0 : Math.max(0, Math.min(max, Math.round(value)))

/** The columns the enrichment pipeline fills, empty: what a row has before (or without) enrichment. */
export const emptyEnrichment = {
  referrer_domain: '',
  search_engine: '',
  search_term: '',
  utm_source: '',
  utm_medium: '',
  utm_campaign: '',
  utm_term: '',
  utm_content: '',
  tracking_params: {},
  ip: '',
  country: '',
  region: '',
  city: '',
  isp: '',
  asn: 0,
  connection_type: '',
  is_hosting: false,
  is_anonymous: false,
  device_type: '',
  browser: '',
  browser_version: '',
  os: '',
  os_version: '',
  device_model: '',
  company_id: '',
} as const satisfies Partial<PageViewRow>

/**
 * The row of a validated hit before enrichment: what the hit itself says, cut and clamped to the
 * columns. The enrichment pipeline fills the rest (network, device, referrer, campaign).
 */
export function toPageViewRow(
  hit: Hit,
  config: PixelConfigRow,
  context: HitContext,
  url: URL = new URL(hit[wire.url]),
): PageViewRow {
  // Client clocks drift: trust them only within a day of the server's, never in the future.
  const clientTime = hit[wire.clientTime]
  const timestamp =
    clientTime !== undefined && Math.abs(clientTime - context.receivedAt) < 86_400_000
      ? Math.min(clientTime, context.receivedAt)
      : context.receivedAt
  return {
    event_id: newId(),
    organization_id: config.organization_id,
    visitor_id: hit[wire.visitorId].toLowerCase(),
    session_id: hit[wire.sessionId].toLowerCase(),
    type: wireEvents[hit[wire.event]],
    timestamp: new Date(timestamp).toISOString(),
    received_at: new Date(context.receivedAt).toISOString(),
    url: url.href,
    path: url.pathname,
    hostname: url.hostname,
    title: cut(hit[wire.title], 512),
    referrer: cut(hit[wire.referrer], 2048),
    // The empty enrichment written out, not spread: a spread in the middle of a literal builds
    // the object on V8's slow path (about a third of this function's time).
    referrer_domain: '',
    search_engine: '',
    search_term: '',
    utm_source: '',
    utm_medium: '',
    utm_campaign: '',
    utm_term: '',
    utm_content: '',
    // A row's own object: a shared empty one must never be written through.
    tracking_params: {},
    ip: '',
    country: '',
    region: '',
    city: '',
    isp: '',
    asn: 0,
    connection_type: '',
    is_hosting: false,
    is_anonymous: false,
    device_type: '',
    browser: '',
    browser_version: '',
    os: '',
    os_version: '',
    device_model: '',
    company_id: '',
    screen_width: clamp(hit[wire.screenWidth], 65535),
    screen_height: clamp(hit[wire.screenHeight], 65535),
    language: cut(hit[wire.language], 35),
    timezone: cut(hit[wire.timezone], 64),
    engaged_ms: clamp(hit[wire.engagedMs], 86_400_000),
    max_scroll: clamp(hit[wire.maxScroll], 100),
    email: hit[wire.event] === 'id' ? (hit[wire.email] ?? '') : '',
    user_agent: context.userAgent.slice(0, 1024),
  }
}
