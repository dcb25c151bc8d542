// Visitors: who visited in a range, paginated (last seen first), ICP / persona filters, CSV, and
// the profile panel of one visitor.
import { useState } from 'preact/hooks'
import { api, type Session, saveFile } from '../api.js'
import { RangePicker } from '../components/range-picker.js'
import {
  Badge,
  type Column,
  DataTable,
  Empty,
  ErrorMessage,
  Pager,
  Show,
  type Sort,
  Toggle,
  useAction,
  useLoad,
} from '../components/ui.js'
import {
  type DayRange,
  formatDateTime,
  formatNumber,
  personName,
  presetRange,
  rangeInstants,
} from '../format.js'
import { followLink } from '../router.js'
import { allFields, type VisitorRow } from '../types.js'
import { VisitorPanel } from './visitor-panel.js'

const pageSize = 25

/** The API orders visitors by last visit; other orders sort the page shown. */
const sortValue = {
  name: (row) => personName(row).toLowerCase(),
  company: (row) => row.company?.name.toLowerCase() ?? '',
  sessions: (row) => row.sessions,
  pageViews: (row) => row.pageViews,
  lastSeenAt: (row) => row.lastSeenAt,
  identifiedAt: (row) => row.identifiedAt ?? '',
} satisfies Record<string, (row: VisitorRow) => string | number>

type SortKey = keyof typeof sortValue

/** The page's rows in the order chosen (the server's page is last seen first). */
function sortRows(rows: VisitorRow[], sort: Sort<SortKey>): VisitorRow[] {
  const value: (row: VisitorRow) => string | number = sortValue[sort.key]
  const direction = sort.order === 'asc' ? 1 : -1
  return [...rows].sort((a, b) => (value(a) < value(b) ? -direction : value(a) > value(b) ? direction : 0))
}

/** The table's columns; a visitor's name opens its profile through `onOpen`. */
function visitorColumns(onOpen: (visitorId: string) => void): Column<VisitorRow, SortKey>[] {
  return [
    {
      key: 'name',
      label: 'Visitor',
      sortable: true,
      render: (row) => (
        <button type="button" class="link" data-visitor={row.id} onClick={() => onOpen(row.id)}>
          {personName(row)}
        </button>
      ),
    },
    { key: 'jobTitle', label: 'Job title', render: (row) => row.jobTitle || '–' },
    { key: 'company', label: 'Company', sortable: true, render: (row) => row.company?.name ?? '–' },
    {
      key: 'sessions',
      label: 'Sessions',
      sortable: true,
      numeric: true,
      render: (row) => formatNumber(row.sessions),
    },
    {
      key: 'pageViews',
      label: 'Page views',
      sortable: true,
      numeric: true,
      render: (row) => formatNumber(row.pageViews),
    },
    {
      key: 'lastSeenAt',
      label: 'Last seen',
      sortable: true,
      nowrap: true,
      render: (row) => formatDateTime(row.lastSeenAt),
    },
    {
      key: 'identifiedAt',
      label: 'Identified',
      sortable: true,
      nowrap: true,
      render: (row) => (row.identifiedAt ? formatDateTime(row.identifiedAt) : '–'),
    },
    {
      key: 'matches',
      label: 'Matches',
      render: (row) => (
        <>
          <Badge on={row.icp} yes="ICP" /> <Badge on={row.personaMatch} yes="Persona" />
        </>
      ),
    },
  ]
}

interface Filters {
  range: DayRange
  icpOnly: boolean
  personaOnly: boolean
}

function Toolbar(props: {
  filters: Filters
  onFilter: (patch: Partial<Filters>) => void
  csv: { busy: boolean; run: () => unknown }
  /** The company the list is narrowed to, if any. */
  domain: string | undefined
}) {
  const { filters, onFilter, csv, domain } = props
  return (
    <div class="toolbar">
      <RangePicker range={filters.range} onChange={(range) => onFilter({ range })} />
      <Toggle
        label="ICP matches only"
        checked={filters.icpOnly}
        onChange={(icpOnly) => onFilter({ icpOnly })}
      />
      <Toggle
        label="Persona matches only"
        checked={filters.personaOnly}
        onChange={(personaOnly) => onFilter({ personaOnly })}
      />
      <button type="button" class="secondary" onClick={() => csv.run()} disabled={csv.busy}>
        {csv.busy ? 'Preparing…' : 'Download CSV'}
      </button>
      {domain ? (
        <span class="chip">
          Company: {domain}{' '}
          <a href="/app/visitors" onClick={(event) => followLink(event, 'visitors')}>
            Show all visitors
          </a>
        </span>
      ) : null}
    </div>
  )
}

export function VisitorsPage({ session }: { session: Session }) {
  const [filters, setFilters] = useState<Filters>(() => ({
    range: presetRange('30d'),
    icpOnly: false,
    personaOnly: false,
  }))
  const [sort, setSort] = useState<Sort<SortKey>>({ key: 'lastSeenAt', order: 'desc' })
  const [page, setPage] = useState(1)
  const [open, setOpen] = useState<string>()
  const { range, icpOnly, personaOnly } = filters
  // /app/visitors?domain=acme.com: the visitors of one company (the Companies page links here).
  const domain = new URLSearchParams(location.search).get('domain') ?? undefined
  const query = {
    organizationId: session.organizationId,
    domain,
    ...rangeInstants(range),
    ICPOnly: icpOnly ? ('1' as const) : undefined,
    personaOnly: personaOnly ? ('1' as const) : undefined,
  }
  const loaded = useLoad(
    (signal) =>
      api(session)
        .get('/companies/visitors', { params: { query: { ...query, page, limit: pageSize } }, signal })
        .then(allFields),
    [range.from, range.to, icpOnly, personaOnly, page],
  )
  const csv = useAction(async () =>
    saveFile(
      await api(session).file('/companies/download', {
        params: { query: { ...query, statisticType: 'visitors' } },
      }),
      'visitors.csv',
    ),
  )
  // A new filter starts again from the first page.
  const filter = (patch: Partial<Filters>) => {
    setFilters((current) => ({ ...current, ...patch }))
    setPage(1)
  }
  return (
    <>
      <Toolbar filters={filters} onFilter={filter} csv={csv} domain={domain} />
      <ErrorMessage error={csv.error} />
      <p class="hint">Pages come last seen first; a column header sorts the page shown.</p>
      <Show loaded={loaded}>
        {(result) =>
          result.total === 0 ? (
            <Empty title="No visitors in this range">
              {icpOnly || personaOnly
                ? 'Turn off the filters, or widen your ICP configs.'
                : 'No visitors yet: install the snippet (Settings), then come back.'}
            </Empty>
          ) : (
            <>
              <DataTable
                caption="Visitors"
                columns={visitorColumns(setOpen)}
                rows={sortRows(result.data, sort)}
                rowKey={(row) => row.id}
                sort={sort}
                onSort={setSort}
              />
              <Pager
                page={result.page}
                totalPages={result.totalPages}
                total={result.total}
                onPage={setPage}
              />
            </>
          )
        }
      </Show>
      {open ? <VisitorPanel session={session} visitorId={open} onClose={() => setOpen(undefined)} /> : null}
    </>
  )
}
