// Scoring a config inside ClickHouse: one INSERT ... SELECT over the facts, with the config's rules
// compiled by the ICP engine's toClickHouseSql. The same statement scores all visitors (a
// recalculation) or only those that changed in a window (incremental re-scoring).
import { type ClickHouseRules, parseRules, type Rules, toClickHouseSql } from '@visitor-id/icp-engine'
import { filterSchema } from '../filters/filter.js'
import { nextVersion } from '../ids.js'
import type { QueryParams, Store } from '../store/client.js'
import { runInSlices, type Slice, type SlicedOptions, sliceCondition, sliceParams } from '../store/slices.js'
import { factColumns, factsQuery } from './facts.js'
import { filterToRules } from './filter-rules.js'
import type { IcpConfigRow } from './rows.js'

/**
 * One scoring run per config at a time, in any process: a recalculation and the incremental pass
 * take turns, so a pass cannot write results of a config older than those a recalculation wrote.
 */
export const scoringLockName = (configId: string) => `icp:score:${configId}`
/** A run holds its config's lock this long at most (renewed never: a longer run would let a second start). */
export const scoringLockTtlMs = 30 * 60 * 1000

/** What a pass logs when a slice of its visitors was refused for memory (`warnOnSplit`). */
export const splitMessage = 'icp: a slice of the visitors was refused for memory; scoring it in halves'

/** A config's results as ClickHouse expressions over a facts row. */
export interface ConfigExpressions {
  matched: string
  persona: string
  score: string
  params: QueryParams
  /** True when the rules read icp_match, persona_match or icp_score (organization-level results). */
  readsOrganizationResults: boolean
}

const resultTypes = new Set(['icp_match', 'persona_match', 'icp_score'])

const readsResults = (rules: Rules) =>
  rules.groups.some((group) => group.conditions.some((c) => resultTypes.has(c.type)))

/** The best group score of a side, matched or not: how close the visitor comes to it. */
const bestGroupScore = (compiled: ClickHouseRules) =>
  compiled.groups.length === 1
    ? compiled.groups[0]!.score
    : `greatest(${compiled.groups.map((g) => g.score).join(', ')})`

/** The rules of a partner config, parsed and normalized. */
export function partnerRules(config: IcpConfigRow): Rules {
  return parseRules(JSON.parse(config.rules))
}

/**
 * Partner configs: matched and score as the engine defines them; no persona. Organization configs:
 * the company side's match, the contact side's match as persona, and as score the mean over the
 * sides it has of each side's best group score (so 100 when every key holds).
 */
export function configExpressions(config: IcpConfigRow): ConfigExpressions {
  if (config.kind === 'partner') {
    const rules = partnerRules(config)
    const compiled = toClickHouseSql(rules, factColumns, { paramPrefix: 'rule_' })
    return {
      matched: compiled.matched,
      persona: '0',
      score: compiled.score,
      params: compiled.params,
      readsOrganizationResults: readsResults(rules),
    }
  }
  const sides = filterToRules(filterSchema.parse(JSON.parse(config.filter || '{}')))
  const company =
    sides.company && toClickHouseSql(parseRules(sides.company), factColumns, { paramPrefix: 'company_' })
  const contact =
    sides.contact && toClickHouseSql(parseRules(sides.contact), factColumns, { paramPrefix: 'contact_' })
  const scores = [company, contact].flatMap((side) => (side ? [bestGroupScore(side)] : []))
  const n = scores.length
  return {
    matched: company?.matched ?? '0',
    persona: contact?.matched ?? '0',
    // round(sum / n), halves up, in integers.
    score:
      n === 0 ? '0' : `intDiv(2 * (${scores.map((s) => `toUInt32(${s})`).join(' + ')}) + ${n}, ${2 * n})`,
    params: { ...company?.params, ...contact?.params },
    readsOrganizationResults: false,
  }
}

/** The ids of an organization's active organization-level configs (what icp_match reads). */
export function activeOrganizationConfigIds(configs: readonly IcpConfigRow[]): string[] {
  return configs.filter((c) => c.kind === 'organization' && c.is_active).map((c) => c.id)
}

export interface ScoreOptions {
  /** Only visitors with a change in (after, until]. */
  changed?: { after: string; until: string }
  /** Ids of the organization's active organization-level configs (for icp_match & co). */
  organizationConfigIds: readonly string[]
  /** Told when a slice of the visitors was refused for memory and is scored in halves. */
  onSplit?: SlicedOptions['onSplit']
}

/**
 * Scores one config over its organization's visitors, in ClickHouse; returns when the scores are
 * stored. Only results that differ from the stored ones are written, and a visitor with no row
 * counts as not matched with score 0, so a run writes rows for the visitors whose result changed
 * (and, the first time, for those with something to show): a recalculation after a small change
 * writes little, into icp_scores and the profile's map alike. Rows of one run share `computed_at`,
 * which it returns.
 */
export async function scoreConfig(
  store: Store,
  config: IcpConfigRow,
  options: ScoreOptions,
): Promise<string> {
  const expressions = configExpressions(config)
  const computedAt = new Date().toISOString()
  const params: QueryParams = {
    ...expressions.params,
    organizationId: config.organization_id,
    configId: config.id,
    computedAt,
    version: nextVersion(),
    organizationConfigIds: [...options.organizationConfigIds],
    ...(options.changed ? { changedAfter: options.changed.after, changedUntil: options.changed.until } : {}),
  }
  // All visitors in one statement; one refused for memory scores them again in slices (the rows
  // a refused statement wrote are the right ones: the next slice's comparison keeps them).
  await runInSlices(
    (slice) =>
      store.command(scoreStatement(expressions, options, slice), { ...params, ...sliceParams(slice) }),
    { onSplit: options.onSplit },
  )
  return computedAt
}

/** The INSERT ... SELECT of one slice of the visitors: only the results that differ from the stored ones. */
function scoreStatement(expressions: ConfigExpressions, options: ScoreOptions, slice: Slice): string {
  const sliced = slice.count > 1
  const facts = factsQuery({
    changedOnly: options.changed !== undefined,
    withOrganizationResults: expressions.readsOrganizationResults,
    sliced,
  })
  return `INSERT INTO icp_scores (organization_id, config_id, visitor_id, matched, persona, score, computed_at, version)
SELECT {organizationId:UUID}, {configId:String}, n.visitor_id, n.matched, n.persona, n.score,
  {computedAt:DateTime64(3, 'UTC')}, {version:UInt64}
FROM (
  SELECT visitor_id, toUInt8(${expressions.matched}) AS matched, toUInt8(${expressions.persona}) AS persona,
    toUInt8(${expressions.score}) AS score
  FROM (${facts})
) AS n
LEFT ANY JOIN (
  SELECT visitor_id, matched, persona, score FROM icp_scores FINAL
  WHERE organization_id = {organizationId:UUID} AND config_id = {configId:String}${sliced ? ` AND ${sliceCondition('visitor_id')}` : ''}
) AS p ON p.visitor_id = n.visitor_id
WHERE NOT (ifNull(p.matched, 0) = n.matched AND ifNull(p.persona, 0) = n.persona AND ifNull(p.score, 0) = n.score)
SETTINGS join_use_nulls = 1`
}
