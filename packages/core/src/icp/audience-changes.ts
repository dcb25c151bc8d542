// The ICP side of the audience change log (`audience_changes`): a new score reaches it through a
// view of icp_scores; a config turned on, off or deleted changes who is in its ICPOnly and
// personaOnly audiences without a new score, so its matched visitors are recorded here. The
// first-hours pass (analytics) reads the log to recompute what those visitors count for.
import type { Store } from '../store/client.js'
import type { IcpConfigRow } from './rows.js'

/**
 * Marks the visitors a config matched (or whose persona it matched) as changed for the next pass:
 * turned on, off or deleted, it changes the ICPOnly and personaOnly audiences without a new score.
 */
export async function markAudienceChanged(
  store: Store,
  config: Pick<IcpConfigRow, 'organization_id' | 'id'>,
): Promise<void> {
  await store.command(
    `INSERT INTO audience_changes (organization_id, visitor_id, changed_at)
    SELECT organization_id, visitor_id, now64(3) FROM icp_scores FINAL
    WHERE organization_id = {organizationId:UUID} AND config_id = {configId:String}
      AND (matched = 1 OR persona = 1)`,
    { organizationId: config.organization_id, configId: config.id },
  )
}
