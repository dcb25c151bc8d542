// A row of `page_views` (migration 0001 and after), the raw event table: what ingest writes and
// what the read side's packed session state (migrations 0004, 0005) keeps of a session's first view.
// One definition, so the writer and the readers cannot drift apart.

/** One `page_views` row, every column set (JSONEachRow, snake_case, ISO times). */
export interface PageViewRow {
  event_id: string
  organization_id: string
  visitor_id: string
  session_id: string
  type: 'pageview' | 'engagement' | 'identify'
  timestamp: string
  received_at: string
  url: string
  path: string
  hostname: string
  title: string
  referrer: string
  referrer_domain: string
  search_engine: string
  search_term: string
  utm_source: string
  utm_medium: string
  utm_campaign: string
  utm_term: string
  utm_content: string
  tracking_params: Record<string, string>
  screen_width: number
  screen_height: number
  language: string
  timezone: string
  engaged_ms: number
  max_scroll: number
  email: string
  ip: string
  country: string
  region: string
  city: string
  isp: string
  asn: number
  connection_type: string
  is_hosting: boolean
  is_anonymous: boolean
  user_agent: string
  device_type: string
  browser: string
  browser_version: string
  os: string
  os_version: string
  device_model: string
  company_id: string
}
