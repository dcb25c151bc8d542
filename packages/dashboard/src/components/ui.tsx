// Small building blocks every page shares: loading an API answer, errors, empty states, tables.
import type { ComponentChildren } from 'preact'
import { useCallback, useEffect, useRef, useState } from 'preact/hooks'

export interface Loaded<T> {
  data?: T
  error?: Error
  loading: boolean
  reload: () => void
}

/**
 * Loads with `load` whenever `deps` change; a newer load wins over an older one still under way.
 * @example const totals = useLoad((signal) => request(session, path, { signal }), [path])
 */
export function useLoad<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: Error; loading: boolean }>({ loading: true })
  const [tick, setTick] = useState(0)
  const loader = useRef(load)
  loader.current = load
  useEffect(() => {
    const controller = new AbortController()
    setState((previous) => ({ ...previous, loading: true }))
    loader.current(controller.signal).then(
      (data) => !controller.signal.aborted && setState({ data, loading: false }),
      (error: Error) => !controller.signal.aborted && setState({ error, loading: false }),
    )
    return () => controller.abort()
  }, [...deps, tick])
  const reload = useCallback(() => setTick((n) => n + 1), [])
  return { ...state, reload }
}

/** Runs an action (a save, a revoke), keeping its state and error for the button and the page. */
export function useAction<A extends unknown[], R>(action: (...args: A) => Promise<R>) {
  const [state, setState] = useState<{ busy: boolean; error?: Error; done?: R }>({ busy: false })
  /** Resolves to `{ value }` when the action succeeded, undefined when it failed. */
  const run = async (...args: A): Promise<{ value: R } | undefined> => {
    setState({ busy: true })
    try {
      const done = await action(...args)
      setState({ busy: false, done })
      return { value: done }
    } catch (error) {
      setState({ busy: false, error: error as Error })
      return undefined
    }
  }
  return { ...state, run, reset: () => setState({ busy: false }) }
}

export function ErrorMessage({ error }: { error: Error | undefined }) {
  if (!error) return null
  return (
    <p class="error" role="alert">
      {error.message}
    </p>
  )
}

export function Empty({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="empty">
      <p class="empty-title">{title}</p>
      {children ? <p>{children}</p> : null}
    </div>
  )
}

export function Loading({ label = 'Loading' }: { label?: string }) {
  return (
    <p class="loading" aria-live="polite">
      {label}…
    </p>
  )
}

/** Shows what a load gave: its error, a loading line the first time, else `children(data)`. */
export function Show<T>({
  loaded,
  children,
}: {
  loaded: Loaded<T>
  children: (data: T) => ComponentChildren
}) {
  if (loaded.error) return <ErrorMessage error={loaded.error} />
  if (loaded.data === undefined) return <Loading />
  return <>{children(loaded.data)}</>
}

export function CopyButton({ text, label }: { text: string; label: string }) {
  const [copied, setCopied] = useState<'idle' | 'done' | 'failed'>('idle')
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text)
      setCopied('done')
    } catch {
      setCopied('failed')
    }
    setTimeout(() => setCopied('idle'), 2000)
  }
  return (
    <button type="button" class="secondary" onClick={copy}>
      {copied === 'done' ? 'Copied' : copied === 'failed' ? 'Select and copy by hand' : 'Copy'}
      <span class="visually-hidden"> {label}</span>
    </button>
  )
}

interface ColumnBase<Row> {
  label: string
  numeric?: boolean
  /** Keep on one line (dates). */
  nowrap?: boolean
  render: (row: Row) => ComponentChildren
}

/** A column of a table; a sortable one's key is a sort key of the page's (`SortKey`). */
export type Column<Row, SortKey extends string = string> =
  | (ColumnBase<Row> & {
      key: SortKey
      /** Sortable by this key: the table reports a click through `onSort`. */
      sortable: true
    })
  | (ColumnBase<Row> & { key: string; sortable?: false })

export interface Sort<Key extends string = string> {
  key: Key
  order: 'asc' | 'desc'
}

/** Up, down, or both arrows (an SVG: not every font has the arrow characters). */
function SortIcon({ state }: { state: 'asc' | 'desc' | undefined }) {
  return (
    <svg class="sort-icon" viewBox="0 0 10 14" width="10" height="14" aria-hidden="true">
      {state !== 'desc' ? <path d="M5 1 9 6H1z" /> : null}
      {state !== 'asc' ? <path d="M5 13 1 8h8z" /> : null}
    </svg>
  )
}

/** A table with sortable headers (aria-sort) and an optional row action. */
export function DataTable<Row, SortKey extends string = string>(props: {
  caption: string
  columns: Column<Row, SortKey>[]
  rows: Row[]
  rowKey: (row: Row) => string
  sort?: Sort<SortKey>
  onSort?: (sort: Sort<SortKey>) => void
}) {
  const { columns, rows, sort, onSort } = props
  return (
    <div class="table-wrap">
      <table>
        <caption class="visually-hidden">{props.caption}</caption>
        <thead>
          <tr>
            {columns.map((column) => {
              const active = sort?.key === column.key
              const ariaSort = active ? (sort!.order === 'asc' ? 'ascending' : 'descending') : undefined
              return (
                <th
                  key={column.key}
                  scope="col"
                  aria-sort={ariaSort}
                  class={column.numeric ? 'num' : undefined}
                >
                  {column.sortable && onSort ? (
                    <button
                      type="button"
                      class="sort"
                      onClick={() =>
                        onSort({ key: column.key, order: active && sort!.order === 'desc' ? 'asc' : 'desc' })
                      }
                    >
                      {column.label}
                      <SortIcon state={active ? sort!.order : undefined} />
                    </button>
                  ) : (
                    column.label
                  )}
                </th>
              )
            })}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={props.rowKey(row)}>
              {columns.map((column) => (
                <td
                  key={column.key}
                  class={
                    [column.numeric && 'num', column.nowrap && 'nowrap'].filter(Boolean).join(' ') ||
                    undefined
                  }
                >
                  {column.render(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}

export function Pager(props: {
  page: number
  totalPages: number
  total: number
  onPage: (page: number) => void
}) {
  const { page, totalPages } = props
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" class="secondary" disabled={page <= 1} onClick={() => props.onPage(page - 1)}>
        Previous
      </button>
      <span>
        Page {page} of {Math.max(totalPages, 1)} ({props.total} in all)
      </span>
      <button
        type="button"
        class="secondary"
        disabled={page >= totalPages}
        onClick={() => props.onPage(page + 1)}
      >
        Next
      </button>
    </nav>
  )
}

/** A labelled checkbox. */
export function Toggle(props: { label: string; checked: boolean; onChange: (checked: boolean) => void }) {
  return (
    <label class="toggle">
      <input
        type="checkbox"
        checked={props.checked}
        onChange={(event) => props.onChange((event.target as HTMLInputElement).checked)}
      />
      {props.label}
    </label>
  )
}

/** A yes/no badge with text, not colour alone. */
export function Badge({ on, yes, no }: { on: boolean; yes: string; no?: string }) {
  if (!on && !no) return null
  return <span class={on ? 'badge on' : 'badge'}>{on ? yes : no}</span>
}
