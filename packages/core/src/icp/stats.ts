// ICP stats: of the visitors seen in a range, how many each config matches. Only live, active
// configs count, so deleting or deactivating a config removes its matches at once.
import type { Store } from '../store/client.js'
import type { IcpConfigRow } from './rows.js'

export interface IcpStats {
  /** Visitors with a session in the range. */
  visitors: number
  /** Of those, visitors matched by at least one of the configs. */
  totalMatches: number
  byConfig: { config: IcpConfigRow; matches: number }[]
}

const nilSession = "toUUID('00000000-0000-0000-0000-000000000000')"

/**
 * Counts over `[from, to]` (ISO 8601) for the given configs of one organization, in one statement.
 * A visitor is seen in the range when one of its sessions overlaps it.
 */
export async function icpStats(
  store: Store,
  organizationId: string,
  configs: readonly IcpConfigRow[],
  range: { from: string; to: string },
): Promise<IcpStats> {
  const active = configs.filter((c) => c.is_active)
  const [row] = await store.query<{ visitors: number; total_matches: number; by_config: [string, number][] }>(
    `WITH seen AS (
       SELECT DISTINCT visitor_id FROM (
         SELECT visitor_id FROM sessions
         WHERE organization_id = {organizationId:UUID} AND session_id != ${nilSession}
           AND started_at <= {to:DateTime64(3, 'UTC')}
         GROUP BY visitor_id, session_id
         HAVING min(started_at) <= {to:DateTime64(3, 'UTC')} AND max(ended_at) >= {from:DateTime64(3, 'UTC')})
     ),
     matched AS (
       SELECT visitor_id, groupArray(config_id) AS configs FROM icp_scores FINAL
       WHERE organization_id = {organizationId:UUID} AND config_id IN {configIds:Array(String)}
         AND matched = 1 AND visitor_id IN (SELECT visitor_id FROM seen)
       GROUP BY visitor_id
     )
     SELECT (SELECT count() FROM seen) AS visitors,
       (SELECT count() FROM matched) AS total_matches,
       (SELECT groupArray((config_id, n)) FROM (
          SELECT arrayJoin(configs) AS config_id, count() AS n FROM matched GROUP BY config_id)) AS by_config`,
    { organizationId, configIds: active.map((c) => c.id), from: range.from, to: range.to },
  )
  const counts = new Map((row?.by_config ?? []).map(([id, n]) => [id, Number(n)]))
  return {
    visitors: Number(row?.visitors ?? 0),
    totalMatches: Number(row?.total_matches ?? 0),
    byConfig: active.map((config) => ({ config, matches: counts.get(config.id) ?? 0 })),
  }
}
