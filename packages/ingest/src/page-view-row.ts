import { newId, type PixelConfigRow } from '@visitor-id/core'
import { wire, wireEvents } from '@visitor-id/pixel'
import type { Hit } from './collect-schema.js'

/** What ingest knows about a hit besides its body. */
export interface HitContext {
  ip: string
  userAgent: string
  receivedAt: number
}

const utmKeys = ['utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content'] as const

/** A `page_views` row from a validated hit. Columns left out take their table defaults. */
export function toPageViewRow(hit: Hit, config: PixelConfigRow, context: HitContext) {
  const url = new URL(hit[wire.url])
  const utm = Object.fromEntries(utmKeys.map((key) => [key, url.searchParams.get(key) ?? '']))
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
    title: hit[wire.title] ?? '',
    referrer: hit[wire.referrer] ?? '',
    ...utm,
    screen_width: hit[wire.screenWidth] ?? 0,
    screen_height: hit[wire.screenHeight] ?? 0,
    language: hit[wire.language] ?? '',
    timezone: hit[wire.timezone] ?? '',
    engaged_ms: hit[wire.engagedMs] ?? 0,
    max_scroll: hit[wire.maxScroll] ?? 0,
    email: hit[wire.email] ?? '',
    ip: config.ip_tracking ? context.ip : '',
    user_agent: context.userAgent.slice(0, 1024),
  }
}

export type PageViewRow = ReturnType<typeof toPageViewRow>
