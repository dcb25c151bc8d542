// Who the statistics count: every visitor with hits in the range, or only those an ICP config
// matched (ICPOnly, icpSlug) or whose persona matched (personaOnly), from the ICP scores of the
// organization's live, active configs. The sets are SQL subqueries, so a request stays one
// statement; `identified` is the organization's visitors identified at least once. The rows of
// first_hours carry ICPOnly and personaOnly as flags (`icp`, `persona`, set by the settling pass,
// analytics/first-hours.ts): on those rows the audience is a flag, not a set to probe.
import { appError } from '../errors.js'
import type { IcpConfigRow } from '../icp/rows.js'

export interface AudienceFilter {
  /** Only visitors matched by any active ICP config. */
  icpOnly?: boolean | undefined
  /** Only visitors whose persona (contact side) an active organization-level config matched. */
  personaOnly?: boolean | undefined
  /** Only visitors matched by this config (active or not). */
  icpSlug?: string | undefined
}

export interface AudienceSql {
  /** `WITH` clauses: `identified`, `icp_matched`, `persona_matched` and, with icpSlug, `slug_matched`. */
  with: string
  /** ` AND ...` conditions on `visitor_id` (empty when everyone counts). */
  where: string
  params: Record<string, unknown>
}

/** The `WITH` clauses a statement can name besides those of its audience's conditions. */
export type AudienceClause = 'identified' | 'icp_matched' | 'persona_matched'

/**
 * The audience of a statistics request. `configs` are the organization's configs (from memory);
 * an unknown `icpSlug` is a 400 naming it. `flagged`: the rows filtered carry the `icp` and
 * `persona` flags. The `WITH` clauses are those the conditions name, and those of `needs` (the
 * statement names them itself): a clause the statement does not use costs the engine about a
 * millisecond to parse and plan (bench/analytics/RESULTS.md, "Why the code is as it is").
 */
export function audienceSql(
  configs: readonly IcpConfigRow[],
  filter: AudienceFilter,
  flagged = false,
  needs: readonly AudienceClause[] = [],
): AudienceSql {
  const active = configs.filter((config) => config.is_active)
  const params: Record<string, unknown> = {
    icpConfigIds: active.map((config) => config.id),
    personaConfigIds: active.filter((config) => config.kind === 'organization').map((config) => config.id),
  }
  const scored = (configIds: string, column: 'matched' | 'persona') =>
    `SELECT visitor_id FROM icp_scores FINAL
       WHERE organization_id = {organizationId:UUID} AND config_id IN {${configIds}:Array(String)} AND ${column} = 1`
  const clauses: Record<AudienceClause, string> = {
    identified: `identified AS (SELECT id FROM visitors FINAL
       WHERE organization_id = {organizationId:UUID} AND identified_at IS NOT NULL)`,
    icp_matched: `icp_matched AS (${scored('icpConfigIds', 'matched')})`,
    persona_matched: `persona_matched AS (${scored('personaConfigIds', 'persona')})`,
  }
  const named = new Set<AudienceClause>(needs)
  const used: string[] = []
  const where: string[] = []
  if (filter.icpOnly) {
    where.push(flagged ? 'icp = 1' : 'visitor_id IN icp_matched')
    if (!flagged) named.add('icp_matched')
  }
  if (filter.personaOnly) {
    where.push(flagged ? 'persona = 1' : 'visitor_id IN persona_matched')
    if (!flagged) named.add('persona_matched')
  }
  for (const name of named) used.push(clauses[name])
  if (filter.icpSlug !== undefined) {
    const config = configs.find((candidate) => candidate.slug === filter.icpSlug)
    if (!config) throw appError('invalid_request', `No ICP config has the slug "${filter.icpSlug}"`)
    params.slugConfigIds = [config.id]
    used.push(`slug_matched AS (${scored('slugConfigIds', 'matched')})`)
    where.push('visitor_id IN slug_matched')
  }
  return {
    with: used.length > 0 ? `WITH ${used.join(',\n')}` : '',
    where: where.map((condition) => ` AND ${condition}`).join(''),
    params,
  }
}
