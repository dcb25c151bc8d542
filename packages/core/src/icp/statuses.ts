// A visitor's ICP results as the profile shows them, from the `icp` map of its identity row in
// sessions (migration 0006): config id -> computed_at ms * 1024 + persona * 512 + matched * 256 + score.
import type { IcpConfigRow } from './rows.js'

export interface VisitorIcp {
  /** Matched by any active config. */
  icp: boolean
  /** Slug -> matched, for every active config (a visitor it has not matched, or not scored yet: false). */
  icpStatuses: Record<string, boolean>
  /** Any active organization-level config's contact side matched. */
  personaMatch: boolean
}

/** Decodes the stored map against the organization's live configs (deleted and inactive ones drop out). */
export function visitorIcp(
  map: readonly [readonly string[], readonly (number | string)[]] | undefined,
  configs: readonly IcpConfigRow[],
): VisitorIcp {
  const active = configs.filter((c) => c.is_active)
  const result: VisitorIcp = {
    icp: false,
    icpStatuses: Object.fromEntries(active.map((c) => [c.slug, false])),
    personaMatch: false,
  }
  if (!map) return result
  const [ids, values] = map
  const byId = new Map(active.map((c) => [c.id, c]))
  // The latest score of each config: a map read from several rows (one per shard) may repeat ids.
  const latest = new Map<string, number>()
  ids.forEach((id, i) => {
    latest.set(id, Math.max(latest.get(id) ?? 0, Number(values[i])))
  })
  latest.forEach((value, id) => {
    const config = byId.get(id)
    if (!config) return
    const packed = value % 1024
    const matched = (packed & 256) !== 0
    result.icpStatuses[config.slug] = matched
    result.icp ||= matched
    result.personaMatch ||= (packed & 512) !== 0
  })
  return result
}
