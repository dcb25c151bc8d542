// The visitors chart: distinct visitors per hour, day or week of a range, in a time zone.
import { appError } from '../errors.js'
import type { Store } from '../store/client.js'
import { countColumns, iso, rollupScope, type StatisticsQuery, type TimeRange } from './scope.js'

export type ChartInterval = 'hour' | 'day' | 'week'

/** The bucket a range gets: hours up to 2 days, days up to 90 days, weeks beyond. */
export function chartIntervalFor(range: TimeRange): ChartInterval {
  const days = (Date.parse(range.to) - Date.parse(range.from)) / 86_400_000
  if (days <= 2) return 'hour'
  if (days <= 90) return 'day'
  return 'week'
}

const bucketSql: Record<ChartInterval, string> = {
  hour: 'toStartOfHour(toTimeZone(hour, {timezone:String}))',
  day: 'toStartOfDay(toTimeZone(hour, {timezone:String}))',
  week: 'toDateTime(toMonday(toTimeZone(hour, {timezone:String})), {timezone:String})',
}
const stepSql: Record<ChartInterval, string> = {
  hour: 'INTERVAL 1 HOUR',
  day: 'INTERVAL 1 DAY',
  week: 'INTERVAL 1 WEEK',
}

export interface ChartPoint {
  /** Start of the bucket, ISO 8601 UTC. */
  timestamp: string
  /** Distinct visitors with hits in the bucket. */
  count: number
}

/**
 * Distinct visitors per bucket (hour, day or Monday-based week in `timezone`, an IANA name), every
 * bucket of the range present (0 when empty): filled by the engine in the time zone's calendar,
 * so days across a DST change stay days. A visitor counts in a bucket by its first active hour
 * there: the `first_hours` row whose previous active hour is before the bucket (or the range).
 */
export async function visitorsChart(
  store: Store,
  query: StatisticsQuery & { interval: ChartInterval; timezone: string },
): Promise<ChartPoint[]> {
  // Everyone and the ICP audience from the sums of first_hours rows, another audience from its rows.
  const columns = countColumns(query)
  const s = rollupScope(
    query,
    '',
    columns === undefined ? 'first_hours:visitor' : 'first_hour_counts:visitor',
  )
  const bucket = bucketSql[query.interval]
  const first = bucket.replaceAll('hour, ', "toStartOfHour({from:DateTime64(3, 'UTC')}), ")
  const last = bucket.replaceAll('hour, ', "toStartOfHour({to:DateTime64(3, 'UTC')}), ")
  const rows = await store
    .query<{ at: number; count: number }>(
      `${s.with}
    SELECT toUnixTimestamp(bucket) * 1000 AS at, count FROM (
      SELECT ${bucket} AS bucket,
        sumIf(${columns === undefined ? 'sign' : `${columns}rows`}, toUnixTimestamp(previous_hour) < greatest(toUnixTimestamp(bucket),
          toUnixTimestamp(toStartOfHour({from:DateTime64(3, 'UTC')})))) AS count
      ${s.from}
      GROUP BY bucket
      ORDER BY bucket WITH FILL FROM ${first} TO ${last} + ${stepSql[query.interval]} STEP ${stepSql[query.interval]}
    )`,
      { ...s.params, timezone: query.timezone },
    )
    .catch((error: unknown) => {
      if (/time ?zone/i.test(String((error as Error)?.message))) {
        throw appError('invalid_request', `Unknown time zone "${query.timezone}"`)
      }
      throw error
    })
  return rows.map((row) => ({ timestamp: iso(Number(row.at)), count: Number(row.count) }))
}
