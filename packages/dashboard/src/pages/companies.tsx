// Companies: the companies that visited in a range, sorted by the server, paginated, as CSV too.
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
  formatDuration,
  formatNumber,
  presetRange,
  rangeInstants,
} from '../format.js'
import { followLink } from '../router.js'
import { allFields, type CompanyRow, type CompanySortKey } from '../types.js'

const pageSize = 25

const columns: Column<CompanyRow, CompanySortKey>[] = [
  {
    key: 'name',
    label: 'Company',
    render: (row) => (
      <>
        <a
          href={`/app/visitors?domain=${encodeURIComponent(row.domain)}`}
          onClick={(event) => followLink(event, `visitors?domain=${encodeURIComponent(row.domain)}`)}
        >
          {row.name || row.domain}
        </a>{' '}
        <span class="muted sub">{row.domain}</span>
      </>
    ),
  },
  { key: 'industry', label: 'Industry', render: (row) => row.industry || '–' },
  { key: 'employeeSizeRange', label: 'Employees', render: (row) => row.employeeSizeRange || '–' },
  { key: 'country', label: 'Country', render: (row) => row.country || '–' },
  {
    key: 'visitors',
    label: 'Visitors',
    sortable: true,
    numeric: true,
    render: (row) => formatNumber(row.visitors),
  },
  {
    key: 'identifiedVisitors',
    label: 'Identified',
    sortable: true,
    numeric: true,
    render: (row) => formatNumber(row.identifiedVisitors),
  },
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
    key: 'engagedSeconds',
    label: 'Time on site',
    sortable: true,
    numeric: true,
    render: (row) => formatDuration(row.engagedSeconds),
  },
  {
    key: 'lastSeenAt',
    label: 'Last seen',
    sortable: true,
    nowrap: true,
    render: (row) => formatDateTime(row.lastSeenAt),
  },
  { key: 'icpMatch', label: 'ICP', render: (row) => <Badge on={row.icpMatch} yes="ICP" /> },
]

export function CompaniesPage({ session }: { session: Session }) {
  const [range, setRange] = useState<DayRange>(() => presetRange('30d'))
  const [icpOnly, setIcpOnly] = useState(false)
  const [sort, setSort] = useState<Sort<CompanySortKey>>({ key: 'visitors', order: 'desc' })
  const [page, setPage] = useState(1)
  const query = {
    organizationId: session.organizationId,
    ...rangeInstants(range),
    ICPOnly: icpOnly ? ('1' as const) : undefined,
  }
  const loaded = useLoad(
    (signal) =>
      api(session)
        .get('/companies', {
          params: { query: { ...query, page, limit: pageSize, sort: sort.key, order: sort.order } },
          signal,
        })
        .then(allFields),
    [range.from, range.to, icpOnly, sort.key, sort.order, page],
  )
  const csv = useAction(async () =>
    saveFile(
      await api(session).file('/companies/download', {
        params: { query: { ...query, statisticType: 'companies' } },
      }),
      'companies.csv',
    ),
  )
  const reset =
    <T,>(set: (value: T) => void) =>
    (value: T) => {
      set(value)
      setPage(1)
    }
  return (
    <>
      <div class="toolbar">
        <RangePicker range={range} onChange={reset(setRange)} />
        <Toggle label="ICP matches only" checked={icpOnly} onChange={reset(setIcpOnly)} />
        <button type="button" class="secondary" onClick={() => csv.run()} disabled={csv.busy}>
          {csv.busy ? 'Preparing…' : 'Download CSV'}
        </button>
      </div>
      <ErrorMessage error={csv.error} />
      <Show loaded={loaded}>
        {(result) =>
          result.total === 0 ? (
            <Empty title={icpOnly ? 'No ICP companies in this range' : 'No companies in this range'}>
              {icpOnly
                ? 'Turn off "ICP matches only", or widen your ICP configs.'
                : 'No visitors yet: install the snippet (Settings), then come back.'}
            </Empty>
          ) : (
            <>
              <DataTable
                caption="Companies"
                columns={columns}
                rows={result.data}
                rowKey={(row) => row.id}
                sort={sort}
                onSort={reset(setSort)}
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
    </>
  )
}
