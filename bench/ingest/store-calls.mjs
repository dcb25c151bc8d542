// Names for the Store calls identification makes (and ingest's own inserts), by their SQL: what
// bench/ingest/identify-path.mjs and the server's --store-timing preload (store-timing.mjs) add
// their time up under. An insert is named `insert <table>`. The embedded store binds parameters
// into the SQL before the client sees it, so the patterns match literals as well as {name:Type}.
const labels = [
  [/FROM contact_keys/, 'contacts lookup (contact_keys, contacts)'],
  [/credit_ledger FINAL WHERE organization_id IN/, 'credit balances (once per batch)'],
  [/countIf\(entry_id/, 'charge: balance and entry read'],
  [/^insert credit_ledger/, 'charge: insert (1 row)'],
  [/FROM companies FINAL WHERE domain IN/, 'companies by contact domain'],
  [/FROM visitors FINAL WHERE organization_id = .+? AND id IN/s, 'visitors read (per org)'],
  [/AS first FROM sessions/, 'first seen, sessions (per org)'],
  [/FROM sessions FINAL|argMinMerge\(first_page_view\)/, 'event: visitor profile (sessions)'],
  [/\borganizations\b/, 'organization row (repo)'],
  [/\bpixel_configs\b/, 'event: pixel config (repo)'],
  [/\bicp_configs\b/, 'event: ICP configs (repo)'],
  [/\bcompanies\b/, 'company rows (repo)'],
  [/^insert events/, 'insert events'],
  [/^insert visitors/, 'insert visitors'],
  [/^insert page_views/, 'insert page_views (the batch)'],
  [/FROM events FINAL\s+WHERE dispatched_at IS NULL/, 'events: pending (dispatcher)'],
  [/LIMIT 1 BY event_id/, 'events: payloads by id (dispatcher)'],
  [/^insert event_marks/, 'events: marks (consumer)'],
  [/FROM events\b/, 'events read'],
]

/** What a call is, from its SQL or `insert <table>`; else the SQL's first 60 characters. */
export const labelOf = (text) =>
  labels.find(([pattern]) => pattern.test(text))?.[1] ?? text.replace(/\s+/g, ' ').slice(0, 60)
