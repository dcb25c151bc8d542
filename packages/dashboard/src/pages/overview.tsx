// Overview: the range's totals beside the previous period's, the hits filtered out (bots and the
// rest), the visitors chart, top companies and the latest identified visitors; reloads itself
// every minute.
import { useEffect, useState } from 'preact/hooks'
import { api, type Session } from '../api.js'
import { BarChart } from '../components/chart.js'
import { FilteredHits } from '../components/filtered-hits.js'
import { RangePicker } from '../components/range-picker.js'
import { Empty, Show, useLoad } from '../components/ui.js'
import {
  change,
  chartInterval,
  type DayRange,
  formatDateTime,
  formatDay,
  formatHour,
  formatNumber,
  personName,
  presetRange,
  previousRange,
  rangeInstants,
  timeZone,
} from '../format.js'
import { allFields } from '../types.js'

const refreshMs = 60_000

function Figure(props: { label: string; current: number; previous: number; id: string }) {
  const delta = change(props.current, props.previous)
  return (
    <div class="figure card" data-figure={props.id}>
      <p class="figure-label">{props.label}</p>
      <p class="figure-value">{formatNumber(props.current)}</p>
      <p class="figure-previous">
        {formatNumber(props.previous)} in the previous period
        {delta === undefined ? '' : ` (${delta > 0 ? '+' : ''}${delta} %)`}
      </p>
    </div>
  )
}

/** The range shown, moved along every minute, and what each reload is keyed by. */
function useMinuteRefresh() {
  const [range, setRange] = useState<DayRange>(() => presetRange('30d'))
  const [tick, setTick] = useState(0)
  const [updatedAt, setUpdatedAt] = useState(() => new Date())
  useEffect(() => {
    const timer = setInterval(() => {
      // A preset follows the clock: "today" is a new day after midnight.
      setRange((current) => (current.preset === 'custom' ? current : presetRange(current.preset)))
      setTick((n) => n + 1)
      setUpdatedAt(new Date())
    }, refreshMs)
    return () => clearInterval(timer)
  }, [])
  return { range, setRange, tick, updatedAt }
}

/** What every section loads for: the range, and the refresh it belongs to. */
interface Period {
  session: Session
  range: DayRange
  tick: number
}

function Totals({ session, range, tick }: Period) {
  const totals = useLoad(
    async (signal) => {
      const totalsOf = (instants: { from: string; to: string }) =>
        api(session).get('/companies/statistic/{organizationId}/total', {
          params: {
            path: { organizationId: session.organizationId },
            query: { ...instants, timezone: timeZone },
          },
          signal,
        })
      const [current, previous] = await Promise.all([
        totalsOf(rangeInstants(range)),
        totalsOf(rangeInstants(previousRange(range))),
      ])
      return { current, previous }
    },
    [range.from, range.to, tick],
  )
  return (
    <>
      <section aria-labelledby="totals-title">
        <h2 id="totals-title" class="visually-hidden">
          Totals
        </h2>
        <Show loaded={totals}>
          {({ current, previous }) => (
            <div class="figures">
              <Figure
                id="visitors"
                label="Visitors"
                current={current.visitors}
                previous={previous.visitors}
              />
              <Figure
                id="identified"
                label="Identified"
                current={current.identifiedVisitors}
                previous={previous.identifiedVisitors}
              />
              <Figure
                id="companies"
                label="Companies"
                current={current.companies}
                previous={previous.companies}
              />
              <Figure
                id="icp"
                label="ICP matches"
                current={current.icpVisitors}
                previous={previous.icpVisitors}
              />
            </div>
          )}
        </Show>
      </section>
      {totals.data && (
        <FilteredHits current={totals.data.current.filtered} previous={totals.data.previous.filtered} />
      )}
    </>
  )
}

function VisitorsChart({ session, range, tick }: Period) {
  const interval = chartInterval(range)
  const chart = useLoad(
    (signal) =>
      api(session).get('/companies/statistic/{organizationId}/visitors/chart', {
        params: {
          path: { organizationId: session.organizationId },
          query: { ...rangeInstants(range), interval, timezone: timeZone },
        },
        signal,
      }),
    [range.from, range.to, tick],
  )
  return (
    <section class="card" aria-labelledby="chart-title">
      <h2 id="chart-title">Visitors per {interval}</h2>
      <Show loaded={chart}>
        {(points) =>
          points.every((p) => p.count === 0) ? (
            <Empty title="No visitors in this range">
              Install the snippet (Settings) on your site, or pick a longer range.
            </Empty>
          ) : (
            <BarChart
              points={points}
              label={`Visitors per ${interval}`}
              formatX={interval === 'hour' ? formatHour : formatDay}
            />
          )
        }
      </Show>
    </section>
  )
}

function TopCompanies({ session, range, tick }: Period) {
  const companies = useLoad(
    (signal) =>
      api(session)
        .get('/companies', {
          params: {
            query: {
              organizationId: session.organizationId,
              ...rangeInstants(range),
              limit: 5,
              sort: 'visitors',
              order: 'desc',
            },
          },
          signal,
        })
        .then(allFields),
    [range.from, range.to, tick],
  )
  return (
    <section class="card" aria-labelledby="top-title">
      <h2 id="top-title">Top companies</h2>
      <Show loaded={companies}>
        {(page) =>
          page.data.length === 0 ? (
            <Empty title="No companies yet">Companies appear once visitors from known networks arrive.</Empty>
          ) : (
            <ol class="ranked">
              {page.data.map((company) => (
                <li key={company.id}>
                  <span>
                    {company.name || company.domain} <span class="muted">{company.domain}</span>
                  </span>
                  <span class="num">{formatNumber(company.visitors)} visitors</span>
                </li>
              ))}
            </ol>
          )
        }
      </Show>
    </section>
  )
}

function LatestIdentified({ session, range, tick }: Period) {
  const identified = useLoad(
    async (signal) => {
      const page = allFields(
        await api(session).get('/companies/visitors', {
          params: { query: { organizationId: session.organizationId, ...rangeInstants(range), limit: 200 } },
          signal,
        }),
      )
      return page.data
        .filter((row) => row.identifiedAt)
        .sort((a, b) => b.identifiedAt!.localeCompare(a.identifiedAt!))
        .slice(0, 8)
    },
    [range.from, range.to, tick],
  )
  return (
    <section class="card" aria-labelledby="latest-title">
      <h2 id="latest-title">Latest identified visitors</h2>
      <Show loaded={identified}>
        {(rows) =>
          rows.length === 0 ? (
            <Empty title="No identified visitors yet">
              Visitors are identified when they sign up or fill in a form on your site.
            </Empty>
          ) : (
            <ul class="ranked">
              {rows.map((row) => (
                <li key={row.id}>
                  <span>
                    {personName(row)} <span class="muted">{row.company?.name ?? ''}</span>
                  </span>
                  <span class="muted">{formatDateTime(row.identifiedAt)}</span>
                </li>
              ))}
            </ul>
          )
        }
      </Show>
    </section>
  )
}

export function OverviewPage({ session }: { session: Session }) {
  const { range, setRange, tick, updatedAt } = useMinuteRefresh()
  const period = { session, range, tick }
  return (
    <>
      <div class="toolbar">
        <RangePicker range={range} onChange={setRange} />
        <p class="hint" aria-live="polite">
          Updated {updatedAt.toLocaleTimeString()}; refreshes every minute
        </p>
      </div>
      <Totals {...period} />
      <VisitorsChart {...period} />
      <div class="columns">
        <TopCompanies {...period} />
        <LatestIdentified {...period} />
      </div>
    </>
  )
}
