import { newId } from '@visitor-id/core/ids'
import { emptyEnrichment, type PageViewRow } from '@visitor-id/ingest'

/**
 * A pageview row of one organization for a URL, every other column empty.
 * @example blankPageViewRow(organizationId, 'https://shop.test/pricing')
 */
export function blankPageViewRow(organizationId: string, href: string): PageViewRow {
  const url = new URL(href)
  const now = new Date().toISOString()
  return {
    event_id: newId(),
    organization_id: organizationId,
    visitor_id: newId(),
    session_id: newId(),
    type: 'pageview',
    timestamp: now,
    received_at: now,
    url: url.href,
    path: url.pathname,
    hostname: url.hostname,
    title: '',
    referrer: '',
    screen_width: 0,
    screen_height: 0,
    language: '',
    timezone: '',
    engaged_ms: 0,
    max_scroll: 0,
    email: '',
    user_agent: '',
    ...emptyEnrichment,
    // A row's own object: the shared empty one must never be written through.
    tracking_params: {},
  }
}
