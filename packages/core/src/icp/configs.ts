// ICP configs: organization-level (a filter) and partner-level (rules) in one table and one slug
// namespace per organization, so a visitor's `icpStatuses` (slug -> matched) is unambiguous.
import { type RulesIssue, safeParseRules } from '@visitor-id/icp-engine'
import type { Locks } from '../coordination/ports.js'
import { withLock } from '../coordination/with-lock.js'
import { appError } from '../errors.js'
import { type Filter, filterSchema } from '../filters/filter.js'
import { randomToken } from '../ids.js'
import type { Repositories } from '../repositories.js'
import type { IcpConfigRow } from './rows.js'

export type IcpConfigKind = IcpConfigRow['kind']

/** Slugs name configs in paths: lowercase letters and digits in dash-separated words. */
export const slugPattern = /^[a-z0-9]+(?:-[a-z0-9]+)*$/
export const slugMaxLength = 64
/** Paths that sit where a slug would (`GET .../icp-configs/stats`). */
const reservedSlugs = new Set(['stats'])

/**
 * `slugify('Enterprise (US) — Été')` === 'enterprise-us-ete'; '' when nothing is left.
 */
export function slugify(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, slugMaxLength)
    .replace(/^-+|-+$/g, '')
}

/** The first of `base`, `base-2`, `base-3`, ... that is free and not reserved. */
function freeSlug(base: string, taken: ReadonlySet<string>): string {
  const root = base || 'icp'
  if (!taken.has(root) && !reservedSlugs.has(root)) return root
  for (let n = 2; ; n++) {
    const suffix = `-${n}`
    const candidate = `${root.slice(0, slugMaxLength - suffix.length).replace(/-+$/, '')}${suffix}`
    if (!taken.has(candidate)) return candidate
  }
}

/** Every config of an organization (both kinds), from memory. */
export async function organizationIcpConfigs(
  repos: Repositories,
  organizationId: string,
): Promise<IcpConfigRow[]> {
  const rows = await repos.icpConfigs.find({ organization_id: organizationId })
  // Lower priority first (the spec: lower value means higher priority), then oldest first.
  return [...rows].sort(
    (a, b) => a.priority - b.priority || a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id),
  )
}

/** The configs of one kind, ordered by priority. */
export async function listIcpConfigs(repos: Repositories, organizationId: string, kind: IcpConfigKind) {
  return (await organizationIcpConfigs(repos, organizationId)).filter((config) => config.kind === kind)
}

/** The config of this kind with this slug, or 404 `resource_not_found`. */
export async function getIcpConfig(
  repos: Repositories,
  organizationId: string,
  kind: IcpConfigKind,
  slug: string,
): Promise<IcpConfigRow> {
  const [config] = await repos.icpConfigs.find({ organization_id: organizationId, slug })
  if (!config || config.kind !== kind) throw appError('resource_not_found', 'ICP config not found')
  return config
}

/** Every problem of a rule set, each at its JSON path; empty when the rules are valid. */
export function rulesIssues(rules: unknown): readonly RulesIssue[] {
  const result = safeParseRules(rules)
  return result.success ? [] : result.error.issues
}

/** Validated rules as stored, or 400 listing every problem at its JSON path under `rules`. */
export function checkRules(rules: unknown): string {
  const issues = rulesIssues(rules).map((issue) => ({
    path: ['rules', ...issue.segments].join('.'),
    message: issue.message,
  }))
  if (issues.length > 0) throw appError('invalid_request', 'The rules are invalid', { issues })
  return JSON.stringify(rules)
}

export interface IcpConfigFields {
  slug?: string | undefined
  name?: string | undefined
  filter?: Filter | undefined
  rules?: unknown
  priority?: number | undefined
  isActive?: boolean | undefined
}

/** What a change means for the scores: any change to who matches needs a recalculation. */
export function changesScores(before: IcpConfigRow, after: IcpConfigRow): boolean {
  return (
    before.filter !== after.filter || before.rules !== after.rules || before.is_active !== after.is_active
  )
}

const lockTtlMs = 10_000

/** Runs `work` holding the organization's config lock, so two writers never take one slug. */
const withConfigLock = <T>(locks: Locks, organizationId: string, work: () => Promise<T>): Promise<T> =>
  withLock(locks, `icp-configs:${organizationId}`, { leaseMs: lockTtlMs, waitMs: lockTtlMs }, work)

/**
 * Creates a config. An explicit slug must be free (409 `conflict`); a derived one (from the name or
 * label) takes the first free `-2`, `-3`, ... suffix.
 */
export async function createIcpConfig(
  repos: Repositories,
  locks: Locks,
  organizationId: string,
  kind: IcpConfigKind,
  fields: IcpConfigFields & { name: string },
): Promise<IcpConfigRow> {
  const filter = kind === 'organization' ? JSON.stringify(filterSchema.parse(fields.filter ?? {})) : ''
  const rules = kind === 'partner' ? checkRules(fields.rules) : ''
  return withConfigLock(locks, organizationId, async () => {
    const taken = new Set((await organizationIcpConfigs(repos, organizationId)).map((c) => c.slug))
    let slug: string
    if (fields.slug !== undefined) {
      if (reservedSlugs.has(fields.slug))
        throw appError('invalid_request', `The slug "${fields.slug}" is reserved`)
      if (taken.has(fields.slug))
        throw appError('conflict', `An ICP config with slug "${fields.slug}" exists`)
      slug = fields.slug
    } else {
      slug = freeSlug(slugify(fields.name), taken)
    }
    const at = new Date().toISOString()
    return repos.icpConfigs.save({
      id: randomToken('icp_', 12),
      organization_id: organizationId,
      kind,
      slug,
      name: fields.name,
      filter,
      rules,
      priority: fields.priority ?? 0,
      is_active: fields.isActive ?? true,
      created_at: at,
      updated_at: at,
    })
  })
}

/** Applies the given fields; a new slug must be free (409). */
export async function updateIcpConfig(
  repos: Repositories,
  locks: Locks,
  config: IcpConfigRow,
  fields: IcpConfigFields,
): Promise<IcpConfigRow> {
  const filter =
    fields.filter !== undefined && config.kind === 'organization'
      ? JSON.stringify(filterSchema.parse(fields.filter))
      : config.filter
  const rules =
    fields.rules !== undefined && config.kind === 'partner' ? checkRules(fields.rules) : config.rules
  return withConfigLock(locks, config.organization_id, async () => {
    const slug = fields.slug ?? config.slug
    if (slug !== config.slug) {
      if (reservedSlugs.has(slug)) throw appError('invalid_request', `The slug "${slug}" is reserved`)
      const [existing] = await repos.icpConfigs.find({ organization_id: config.organization_id, slug })
      if (existing) throw appError('conflict', `An ICP config with slug "${slug}" exists`)
    }
    return repos.icpConfigs.save({
      ...config,
      slug,
      name: fields.name ?? config.name,
      filter,
      rules,
      priority: fields.priority ?? config.priority,
      is_active: fields.isActive ?? config.is_active,
      updated_at: new Date().toISOString(),
    })
  })
}

/** Deletes a config; its scores stop counting at once (readers only count live, active configs). */
export async function deleteIcpConfig(repos: Repositories, config: IcpConfigRow): Promise<void> {
  await repos.icpConfigs.remove({ organization_id: config.organization_id, id: config.id })
}
