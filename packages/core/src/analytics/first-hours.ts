// The settling pass of `first_hours` (migration 0020): every active hour of a visitor, a session,
// a (company, visitor) pair and a (company, session) pair next to the key's previous active hour,
// so the statistics count distinct keys of a range as the rows whose previous hour lies before it
// (a filtered count, not a hash table of every key).
//
// The rows depend on every hit of a visitor, whatever order hits arrive in, so they are not written
// by a view: a pass recomputes the rows of the visitors with new page views or a new
// identification (`visitor_changes`) from their whole activity (`visitor_hours`, ordered by
// visitor) and inserts the difference with what is stored (`first_hours_by_visitor`): a row to
// take back gets sign -1, a missing row +1. One statement does it in the engine. Running a pass
// again over the same visitors inserts nothing, so passes overlap their windows rather than miss a
// slow insert; two passes at once would both insert the same difference, so passes run under a
// lock (one process at a time).
//
// The pass also flags each row with its visitor's audience (migration 0021): `identified`, `icp`
// (matched by an active config of its organization) and `persona` (its persona matched by an
// active organization-level config), from the stored visitors, scores and configs. A change of the
// audience is a change of the visitor: a new score (`audience_changes`, a view of icp_scores), a
// config turned on, off or deleted (`markAudienceChanged` in icp), an identification (`visitor_changes`).
import { type PeriodicTask, startPeriodicTask } from '../coordination/periodic.js'
import type { Locks } from '../coordination/ports.js'
import { withLock } from '../coordination/with-lock.js'
import type { Store } from '../store/client.js'
import { renderStatement } from '../store/render-ddl.js'
import { runInSlices, type SlicedOptions, sliceCondition, sliceParams, warnOnSplit } from '../store/slices.js'
import { storedTime } from '../store/time.js'

/** `visitor_changes` rows are stamped when written, but an insert may finish a little after its stamp. */
const overlapMs = 30_000
/**
 * How old a change must be for every row of its insert to be visible: its rows reach the tables'
 * parts one view after another, so a change may be read before the hours it stands for.
 */
const commitGraceMs = 5_000
/** `visitor_changes` keeps a day: a watermark older than this settles every visitor again. */
const changesKeptMs = 23 * 3600 * 1000
/** A pass handles about this many visitors per statement (memory stays bounded). */
const visitorsPerSlice = 250_000

const noHour = "toDateTime(0, 'UTC')"
const noHit = "toDateTime64(0, 3, 'UTC')"
const noSession = "toUUID('00000000-0000-0000-0000-000000000000')"

const columns =
  'organization_id, kind, hour, company_id, visitor_id, session_id, previous_hour, first_hit_at, last_hit_at, previous_last_hit_at, page_view_count, engaged_ms, identified, icp, persona'

/** The configs whose matches count for ICPOnly (any kind) and personaOnly (organization-level). */
const activeConfigs = (kind: string) => `(SELECT organization_id, id FROM icp_configs FINAL
    WHERE is_active AND is_deleted = 0${kind})`

/** The value of `column` in the row before, within the window `w`; `fallback` for the first row. */
const previous = (column: string, fallback: string) => `lagInFrame(${column}, 1, ${fallback}) OVER w`

// The rows of each kind recomputed from the visitors' `activity`: every active hour of a key, with
// the key's previous active hour from a window over that key alone.
const visitorRows = `
      SELECT organization_id, 'visitor' AS kind, hour, '' AS company_id, visitor_id, ${noSession} AS session_id,
        ${previous('hour', noHour)} AS previous_hour, first_hit_at, last_hit_at,
        ${noHit} AS previous_last_hit_at, toUInt64(0) AS page_view_count, toUInt64(0) AS engaged_ms,
        toUInt8((organization_id, visitor_id) IN identified_visitors) AS identified, toInt64(1) AS w
      FROM (
        SELECT organization_id, visitor_id, hour, min(first_hit) AS first_hit_at, max(last_hit) AS last_hit_at
        FROM activity GROUP BY organization_id, visitor_id, hour
      )
      WINDOW w AS (PARTITION BY organization_id, visitor_id ORDER BY hour ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)`
const sessionRows = `
      SELECT organization_id, 'session', hour, '', visitor_id, session_id,
        ${previous('hour', noHour)}, first_hit_at, last_hit_at, ${previous('last_hit_at', noHit)},
        page_view_count, engaged_ms, 0, 1
      FROM (
        SELECT organization_id, visitor_id, session_id, hour, min(first_hit) AS first_hit_at,
          max(last_hit) AS last_hit_at, sum(page_views) AS page_view_count, sum(engaged) AS engaged_ms
        FROM activity GROUP BY organization_id, visitor_id, session_id, hour
      )
      WINDOW w AS (PARTITION BY organization_id, visitor_id, session_id ORDER BY hour ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)`
const companyVisitorRows = `
      SELECT organization_id, 'company_visitor', hour, company_id, visitor_id, ${noSession},
        ${previous('hour', noHour)}, first_hit_at, last_hit_at, ${noHit}, page_view_count, engaged_ms,
        toUInt8((organization_id, visitor_id) IN identified_visitors), 1
      FROM (
        SELECT organization_id, visitor_id, company_id, hour, min(first_hit) AS first_hit_at,
          max(last_hit) AS last_hit_at, sum(page_views) AS page_view_count, sum(engaged) AS engaged_ms
        FROM activity WHERE company_id != '' GROUP BY organization_id, visitor_id, company_id, hour
      )
      WINDOW w AS (PARTITION BY organization_id, visitor_id, company_id ORDER BY hour ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)`
const companySessionRows = `
      SELECT organization_id, 'company_session', hour, company_id, visitor_id, session_id,
        ${previous('hour', noHour)}, first_hit, last_hit, ${noHit}, 0, 0, 0, 1
      FROM activity
      WHERE company_id != ''
      WINDOW w AS (PARTITION BY organization_id, visitor_id, session_id, company_id ORDER BY hour ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)`
const recomputedRows = [visitorRows, sessionRows, companyVisitorRows, companySessionRows].join(
  '\n      UNION ALL',
)

/**
 * The statement's inputs, for the visitors `visitors` names: their activity by hour, session and
 * company, and which of them are identified, matched by an ICP and matched by a persona.
 */
const visitorSets = (visitors: (column: string) => string) => `
  WITH activity AS (
    SELECT organization_id, visitor_id, hour, session_id, company_id,
      min(first_hit_at) AS first_hit, max(last_hit_at) AS last_hit,
      sum(page_view_count) AS page_views, sum(engaged_ms_sum) AS engaged
    FROM visitor_hours
    WHERE ${visitors('visitor_id')}
    GROUP BY organization_id, visitor_id, hour, session_id, company_id
  ),
  identified_visitors AS (
    SELECT organization_id, id FROM visitors FINAL WHERE identified_at IS NOT NULL AND ${visitors('id')}
  ),
  icp_visitors AS (
    SELECT organization_id, visitor_id FROM icp_scores FINAL
    WHERE matched = 1 AND ${visitors('visitor_id')} AND (organization_id, config_id) IN ${activeConfigs('')}
  ),
  persona_visitors AS (
    SELECT organization_id, visitor_id FROM icp_scores FINAL
    WHERE persona = 1 AND ${visitors('visitor_id')}
      AND (organization_id, config_id) IN ${activeConfigs(" AND kind = 'organization'")}
  )`

/**
 * The statement that makes the stored rows of some visitors what their activity (and their
 * identification and audience) say. `visitors(column)` is a condition on `organization_id` and the visitor id
 * `column` naming them. Recomputed rows weigh +1 and stored ones their sign taken back: what does
 * not cancel out is the difference to insert.
 */
function settleStatement(visitors: (column: string) => string): string {
  return `
  INSERT INTO first_hours (${columns}, sign)
  -- On a cluster the difference is on its shards before the statement returns: the next pass reads
  -- it back (an insert queued in the background would be inserted twice).
  SETTINGS distributed_foreground_insert = 1${visitorSets(visitors)}
  SELECT ${columns}, if(weight > 0, 1, -1) AS sign
  FROM (
    SELECT ${columns}, sum(w) AS weight
    FROM (
      SELECT *,
        toUInt8((organization_id, visitor_id) IN icp_visitors) AS icp,
        toUInt8((organization_id, visitor_id) IN persona_visitors) AS persona
      FROM (${recomputedRows}
      )
      UNION ALL
      SELECT organization_id, toString(kind), hour, company_id, visitor_id, session_id, previous_hour,
        first_hit_at, last_hit_at, previous_last_hit_at, page_view_count, engaged_ms, identified,
        -toInt64(sign), icp, persona
      FROM first_hours_by_visitor
      WHERE ${visitors('visitor_id')}
    )
    GROUP BY ${columns}
    HAVING weight != 0
  )
  ARRAY JOIN range(toUInt64(abs(weight))) AS copy`
}

/** The rows of `visitor_changes` and `audience_changes` from `after` to `until`. */
const changes = ['visitor_changes', 'audience_changes']
  .map(
    (table) => `SELECT organization_id, visitor_id, changed_at FROM ${table}
    WHERE changed_at > {after:DateTime64(3, 'UTC')} AND changed_at <= {until:DateTime64(3, 'UTC')}`,
  )
  .join(' UNION ALL ')

/**
 * Records as seen the changes up to `settled` (old enough for every row of their insert to be
 * visible) that no pass has seen yet, with this pass's `until`, of the slice (`sliceCondition`):
 * the set of seen changes it builds shrinks with its slice. A statement refused for memory and run
 * again inserts only what it had not inserted: the rows it wrote are seen by then.
 */
const recordSeen = `
  INSERT INTO first_hours_seen (organization_id, visitor_id, changed_at, pass)
  SELECT organization_id, visitor_id, changed_at, {until:DateTime64(3, 'UTC')}
  FROM (${changes})
  WHERE changed_at <= {settled:DateTime64(3, 'UTC')} AND ${sliceCondition('visitor_id')}
    AND (organization_id, visitor_id, changed_at) NOT IN (
      SELECT organization_id, visitor_id, changed_at FROM first_hours_seen
      WHERE changed_at > {after:DateTime64(3, 'UTC')} AND ${sliceCondition('visitor_id')})`

/**
 * The visitors a pass settles: the changes it (or a pass that never finished) recorded as seen,
 * and those too recent to be recorded yet (settled again by the next passes until they are).
 */
const unsettledVisitors = `
    SELECT organization_id, visitor_id FROM first_hours_seen
    WHERE changed_at > {after:DateTime64(3, 'UTC')} AND pass > {lastUntil:DateTime64(3, 'UTC')}
      AND ${sliceCondition('visitor_id')}
    UNION ALL
    SELECT organization_id, visitor_id FROM (${changes})
    WHERE changed_at > {settled:DateTime64(3, 'UTC')} AND ${sliceCondition('visitor_id')}`

export interface SettleResult {
  /** Every visitor was settled (no watermark, or one older than the changes kept). */
  full: boolean
  /** The time of the newest changes read. */
  until: string
  /** About how many visitors it settled (every visitor of the store for a full pass). */
  visitors: number
}

/**
 * One pass: the rows of every visitor changed since the last pass made exact, or of every visitor
 * when the last pass is too old or there was none. The changes since the last pass less an overlap
 * are read, and those an earlier pass settled are left out: a pass settles what changed since the
 * last one, not the whole overlap again. Run it under the `analytics:first-hours` lock
 * (`startFirstHoursSettling`, `settleFirstHoursNow`); tests with no worker call it directly.
 */
export async function settleFirstHours(
  store: Store,
  options: {
    now?: number
    overlapMs?: number
    commitGraceMs?: number
    onSplit?: SlicedOptions['onSplit']
  } = {},
): Promise<SettleResult> {
  const now = options.now ?? Date.now()
  const until = new Date(now).toISOString()
  const [last] = await store.query<{ until: string; passes: number }>(
    `SELECT max(until) AS until, count() AS passes FROM first_hours_passes`,
  )
  const lastUntil = Number(last?.passes) > 0 ? Date.parse(storedTime(String(last?.until))) : 0
  const full = !(lastUntil > now - changesKeptMs)
  const params = {
    until,
    after: new Date(lastUntil - (options.overlapMs ?? overlapMs)).toISOString(),
    lastUntil: new Date(lastUntil).toISOString(),
    settled: new Date(now - (options.commitGraceMs ?? commitGraceMs)).toISOString(),
  }
  // A full pass records the changes too: it settles every visitor as they are now, so the next
  // pass goes on from its changes rather than settling its overlap once more.
  await runInSlices((slice) => store.command(recordSeen, { ...params, ...sliceParams(slice) }), {
    onSplit: options.onSplit,
  })
  const changed = full
    ? { condition: () => 'true', from: 'visitor_hours' }
    : {
        condition: (id: string) => `(organization_id, ${id}) IN (${unsettledVisitors})`,
        from: `(${unsettledVisitors})`,
      }
  const [count] = await store.query<{ n: number }>(`SELECT uniq(visitor_id) AS n FROM ${changed.from}`, {
    ...params,
    ...sliceParams({ count: 1, index: 0 }),
  })
  const visitors = Number(count?.n ?? 0)
  // A slice refused for memory runs again as two halves (store/slices.ts): its statement inserts
  // the difference with what is stored, so whatever a refused statement wrote is taken into account.
  await runInSlices(
    (slice) =>
      store.command(
        settleStatement((id) => `${changed.condition(id)} AND ${sliceCondition(id)}`),
        { ...params, ...sliceParams(slice) },
      ),
    { slices: Math.max(1, Math.ceil(visitors / visitorsPerSlice)), onSplit: options.onSplit },
  )
  // A full settle leaves a part per slice in each month, which the engine's merge selector leaves
  // as they are; the statistics read the rows and their counts, and read them faster merged, so
  // they are merged now, once (bench/analytics/RESULTS.md, "Why the code is as it is").
  if (full) {
    const target = { database: store.database, cluster: store.cluster }
    for (const table of ['first_hours', 'first_hour_counts']) {
      await store.command(renderStatement(`OPTIMIZE TABLE {{local:${table}}} {{on_cluster}} FINAL`, target)!)
    }
  }
  await store.insert('first_hours_passes', [{ until, finished_at: new Date().toISOString() }])
  return { full, until, visitors }
}

const lockName = 'analytics:first-hours'
/** A full settle of 100 M page views takes minutes; the lease outlives it. */
const lockTtlMs = 30 * 60_000

/**
 * Runs `work` holding the periodic pass's lock (waiting for a pass under way), so no pass settles
 * while it runs: for work that changes `first_hours` itself (an erasure) or wants a pass now.
 */
export async function withFirstHoursLock<T>(
  locks: Locks,
  work: () => Promise<T>,
  waitMs = 5 * 60_000,
): Promise<T> {
  return withLock(locks, lockName, { leaseMs: lockTtlMs, waitMs }, work)
}

/**
 * One pass now, under the lock of the periodic pass (waiting for a pass under way): for a process
 * that wrote page views and wants them counted at once (the demo seed).
 */
export async function settleFirstHoursNow(
  deps: { store: Store; locks: Locks },
  waitMs = 5 * 60_000,
): Promise<SettleResult> {
  return withFirstHoursLock(deps.locks, () => settleFirstHours(deps.store), waitMs)
}

/**
 * Settles `first_hours` every `intervalMs` in the one process holding the lock. The statistics'
 * distinct counts include the page views written up to the last pass.
 */
export function startFirstHoursSettling(
  deps: { store: Store; locks: Locks; log: { warn(object: object, message: string): void } },
  intervalMs: number,
): PeriodicTask {
  return startPeriodicTask({
    locks: deps.locks,
    lockName,
    lockTtlMs,
    intervalMs,
    pass: async () => {
      await settleFirstHours(deps.store, {
        onSplit: warnOnSplit(
          deps.log,
          'analytics: a slice of the first hours was refused for memory; settling it in halves',
        ),
      })
    },
    onError: (error) =>
      deps.log.warn(
        { err: error },
        'analytics: settling first hours failed; the next pass retries the window',
      ),
  })
}
