// Filtered hits (migration 0026, `dropped_hits`): the hits ingest dropped for an organization, by
// UTC day and reason. Ingest writes them (it adds the counts up in memory and writes a few rows
// every few seconds); the totals read them for the days of their range. A filtered hit is never a
// visitor: it is only ever a count here.
import type { Store } from '../store/client.js'
import { effectiveRange, type TimeRange } from './scope.js'

/**
 * Why ingest dropped a hit of a known organization (the order the dashboard lists them in):
 * - `bot`: a known crawler or tool by its user agent (`isbot`);
 * - `automation`: a browser under automation: `navigator.webdriver` reported by the tracker, a
 *   headless or automation browser's name, or an empty or very short user agent;
 * - `origin`: a page or an Origin / Referer outside the organization's verified domains and
 *   allowed referrers;
 * - `privacy`: a visitor's privacy signal (`Sec-GPC: 1`, `DNT: 1`) on a site that honours them;
 * - `invalid`: an identify hit without an email;
 * - `consent`: an identify hit from a visitor who did not grant identification (the pixel's consent,
 *   Consent Mode's `ad_user_data`);
 * - `company_only`: an identify hit from a country where the organization identifies companies only.
 * At most 8 reasons: ingest packs a reason into 3 bits (dropped-hits.ts).
 */
export const filteredHitReasons = [
  'bot',
  'automation',
  'origin',
  'privacy',
  'invalid',
  'consent',
  'company_only',
] as const
export type FilteredHitReason = (typeof filteredHitReasons)[number]

/** One row of `dropped_hits`: the hits of one organization dropped on one UTC day for one reason. */
export interface DroppedHitRow {
  organization_id: string
  /** YYYY-MM-DD, UTC. */
  day: string
  reason: FilteredHitReason
  hits: number
}

export interface FilteredHits {
  total: number
  byReason: Record<FilteredHitReason, number>
}

/** Adds counts to `dropped_hits`; a retry with the same token after a write that landed is a no-op. */
export async function insertDroppedHits(store: Store, rows: readonly DroppedHitRow[], dedupToken: string) {
  if (rows.length > 0) await store.insert('dropped_hits', rows, { dedupToken })
}

/**
 * The organization's filtered hits on the days of a range. The grain is the UTC day: every day the
 * range (taken to whole hours, like the totals) touches counts whole.
 */
export async function filteredHits(
  store: Store,
  query: { organizationId: string; range: TimeRange },
): Promise<FilteredHits> {
  const range = effectiveRange(query.range)
  const rows = await store.query<{ reason: string; hits: number }>(
    `SELECT reason, sum(hits) AS hits FROM dropped_hits
    WHERE organization_id = {organizationId:UUID}
      AND day >= toDate({from:DateTime64(3, 'UTC')}) AND day <= toDate({to:DateTime64(3, 'UTC')})
    GROUP BY reason`,
    { organizationId: query.organizationId, from: range.from, to: range.to },
  )
  const byReason = Object.fromEntries(filteredHitReasons.map((reason) => [reason, 0])) as Record<
    FilteredHitReason,
    number
  >
  let total = 0
  for (const row of rows) {
    // A reason this version does not know (written by a newer ingest) counts in the total only.
    if (row.reason in byReason) byReason[row.reason as FilteredHitReason] += Number(row.hits)
    total += Number(row.hits)
  }
  return { total, byReason }
}
