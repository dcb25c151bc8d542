// Retention: a worker's pass deletes each organization's raw data older than its limit and
// truncates full IP addresses older than theirs. A table TTL cannot read an organization's own
// setting, so the pass runs the engine's deletes (`ALTER TABLE ... DELETE`, one per table for every
// organization at once: the cutoff is looked up per row) and an `UPDATE` of the IP column. A
// statement runs only when it has rows to change, so a pass with nothing to do costs a count per
// table. Rollups without visitors (`first_hour_counts`, `dropped_hits`) outlive the raw rows:
// totals and the chart of older ranges stay as they were.

import type { Config } from '../config.js'
import { type PeriodicTask, startPeriodicTask } from '../coordination/periodic.js'
import type { Locks } from '../coordination/ports.js'
import type { Repositories } from '../repositories.js'
import type { Store } from '../store/client.js'
import type { EntityRepository } from '../store/repository.js'
import { timeParam } from '../store/time.js'
import { mutate } from './mutation.js'
import { cutoffOf, effectivePrivacy, type PrivacySettingsRow } from './settings.js'

/** The raw tables, each with the time its rows are kept by. */
export const retainedTables: readonly { table: string; time: string }[] = [
  { table: 'page_views', time: 'timestamp' },
  { table: 'sessions', time: 'ended_at' },
  { table: 'visitor_hours', time: 'hour' },
  { table: 'company_hours', time: 'hour' },
  // A visitor's facts as partial rows: those of activity past the limit go, newer ones stay.
  { table: 'visitor_facts', time: 'last_seen_at' },
  { table: 'first_hours', time: 'hour' },
  { table: 'first_hours_by_visitor', time: 'hour' },
  { table: 'events', time: 'created_at' },
]

/** An IP address cut to its network: IPv4 to /24, IPv6 to /48; anything else emptied. */
export const truncatedIpSql = `multiIf(
  isIPv4String(ip), IPv4NumToString(bitAnd(IPv4StringToNumOrDefault(ip), 4294967040)),
  isIPv6String(ip), cutIPv6(IPv6StringToNumOrDefault(ip), 10, 0),
  '')`

const epoch = '1970-01-01T00:00:00.000Z'

/** Each organization's cutoff as a lookup over the row's organization, the server's for the rest. */
function cutoffSql(name: string) {
  return `transform(toString(organization_id), {${name}Organizations:Array(String)}, {${name}Cutoffs:Array(DateTime64(3, 'UTC'))}, {${name}Default:DateTime64(3, 'UTC')})`
}

/** The parameters of `cutoffSql(name)`: the organizations with their own limit, and the server's. */
function cutoffParams(
  name: string,
  rows: readonly PrivacySettingsRow[],
  days: (row: PrivacySettingsRow | undefined) => number | null,
  now: number,
) {
  const own = rows.filter((row) => days(row) !== days(undefined))
  return {
    [`${name}Organizations`]: own.map((row) => row.organization_id),
    [`${name}Cutoffs`]: own.map((row) => timeParam(cutoffOf(days(row), now) ?? epoch)),
    [`${name}Default`]: timeParam(cutoffOf(days(undefined), now) ?? epoch),
  }
}

export interface RetentionResult {
  /** Rows deleted per table (tables with none left out). */
  deleted: Record<string, number>
  /** Page views whose IP address was truncated. */
  truncatedIps: number
}

/** The statements of a pass: a count, and the mutation that runs when it finds rows. */
export function retentionStatements() {
  const oldIp = `ip != '' AND timestamp < ${cutoffSql('ip')} AND ip != ${truncatedIpSql}`
  return {
    deletes: retainedTables.map(({ table, time }) => ({
      table,
      count: `SELECT count() AS n FROM ${table} WHERE ${time} < ${cutoffSql('raw')}`,
      mutation: `ALTER TABLE {{local:${table}}}{{on_cluster}} DELETE WHERE ${time} < ${cutoffSql('raw')}`,
    })),
    ips: {
      count: `SELECT count() AS n FROM page_views WHERE ${oldIp}`,
      mutation: `ALTER TABLE {{local:page_views}}{{on_cluster}} UPDATE ip = ${truncatedIpSql} WHERE ${oldIp}`,
    },
  }
}

/** One pass over every organization. */
export async function applyRetention(
  store: Store,
  settings: EntityRepository<PrivacySettingsRow>,
  defaults: Config['retention'],
  now = Date.now(),
): Promise<RetentionResult> {
  const rows = await settings.find({})
  const params = {
    ...cutoffParams('raw', rows, (row) => effectivePrivacy(row, defaults).retentionDays, now),
    ...cutoffParams('ip', rows, (row) => effectivePrivacy(row, defaults).ipRetentionDays, now),
  }
  const statements = retentionStatements()
  const result: RetentionResult = { deleted: {}, truncatedIps: 0 }
  for (const { table, count, mutation } of statements.deletes) {
    const [row] = await store.query<{ n: number }>(count, params)
    if (!(Number(row?.n) > 0)) continue
    await mutate(store, mutation, params)
    result.deleted[table] = Number(row?.n)
  }
  // Then the IP addresses of what is left (a page view deleted above needs no truncation).
  const [ips] = await store.query<{ n: number }>(statements.ips.count, params)
  if (Number(ips?.n) > 0) {
    await mutate(store, statements.ips.mutation, params)
    result.truncatedIps = Number(ips?.n)
  }
  return result
}

/** The retention pass every `intervalMs`, in the one process holding its lock. */
export function startRetention(
  deps: {
    store: Store
    repos: Pick<Repositories, 'privacySettings'>
    locks: Locks
    defaults: Config['retention']
    log: { info(object: object, message: string): void; warn(object: object, message: string): void }
  },
  intervalMs: number,
): PeriodicTask {
  return startPeriodicTask({
    locks: deps.locks,
    lockName: 'privacy:retention',
    lockTtlMs: 60 * 60_000,
    intervalMs,
    async pass() {
      const result = await applyRetention(deps.store, deps.repos.privacySettings, deps.defaults)
      if (result.truncatedIps > 0 || Object.keys(result.deleted).length > 0) {
        deps.log.info(result, 'privacy: retention applied')
      }
    },
    onError: (error) => deps.log.warn({ err: error }, 'privacy: retention failed; the next pass retries'),
  })
}
