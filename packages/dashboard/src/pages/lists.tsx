// Lists: an audience from the contacts dataset, counted as the filter is edited; saved lists
// refresh from their filter and export as hashed emails (CSV), and show the ads platform each
// syncs to with its last audience sync.
import { useEffect, useState } from 'preact/hooks'
import { api, type Session, saveFile } from '../api.js'
import type { Platform } from '../audience-sync-words.js'
import { AudienceSyncSummary } from '../components/audience-sync.js'
import { cleanFilter, FilterForm } from '../components/filter-form.js'
import { Empty, ErrorMessage, Show, useAction, useLoad } from '../components/ui.js'
import { formatDateTime, formatNumber } from '../format.js'
import type { Filter, SavedList } from '../types.js'

/** Counts the contacts a filter matches, a moment after the last edit. */
function useCount(session: Session, filter: Filter) {
  const [state, setState] = useState<{ count?: number; error?: Error; busy: boolean }>({ busy: false })
  const key = JSON.stringify(cleanFilter(filter))
  useEffect(() => {
    const controller = new AbortController()
    setState((previous) => ({ ...previous, busy: true }))
    const timer = setTimeout(() => {
      api(session)
        .post('/contacts/count', { body: JSON.parse(key) as Filter, signal: controller.signal })
        .then(
          ({ count }) => setState({ count, busy: false }),
          (error: Error) => !controller.signal.aborted && setState({ error, busy: false }),
        )
    }, 300)
    return () => {
      clearTimeout(timer)
      controller.abort()
    }
  }, [key])
  return state
}

function NewList({ session, onSaved }: { session: Session; onSaved: () => void }) {
  const [name, setName] = useState('')
  const [filter, setFilter] = useState<Filter>({})
  const count = useCount(session, filter)
  const save = useAction(() =>
    api(session).post('/lists/save', {
      body: {
        organizationId: session.organizationId,
        listName: name.trim(),
        contacts_found: count.count ?? 0,
        filter: cleanFilter(filter),
      },
    }),
  )
  return (
    <form
      class="card"
      aria-labelledby="new-list-title"
      onSubmit={async (event) => {
        event.preventDefault()
        if (await save.run()) {
          setName('')
          onSaved()
        }
      }}
    >
      <h2 id="new-list-title">New list</h2>
      <div class="field">
        <label for="list-name">List name (saving a name that exists updates that list)</label>
        <input
          id="list-name"
          required
          value={name}
          onInput={(e) => setName((e.target as HTMLInputElement).value)}
        />
      </div>
      <FilterForm idPrefix="list" filter={filter} onChange={setFilter} />
      <p class="count" aria-live="polite" data-count={count.count ?? ''}>
        {count.error
          ? ''
          : count.count === undefined
            ? 'Counting…'
            : `${formatNumber(count.count)} contacts match${count.busy ? ' (updating…)' : ''}`}
      </p>
      <ErrorMessage error={count.error ?? save.error} />
      <button type="submit" disabled={save.busy}>
        {save.busy ? 'Saving…' : 'Save list'}
      </button>
    </form>
  )
}

function SavedListRow(props: {
  list: SavedList
  platforms: readonly Platform[]
  refreshing: boolean
  exporting: boolean
  onRefresh: () => void
  onExport: () => void
  onDelete: () => void
}) {
  const { list } = props
  return (
    <tr data-list={list.name}>
      <td>{list.name}</td>
      <td class="num">{formatNumber(list.contactsNum)}</td>
      <td>{formatDateTime(list.lastSyncedTime ?? list.updatedAt)}</td>
      <td>
        <AudienceSyncSummary list={list} platforms={props.platforms} />
      </td>
      <td class="actions">
        <button
          type="button"
          class="secondary"
          aria-label={`Refresh ${list.name}`}
          disabled={props.refreshing}
          onClick={props.onRefresh}
        >
          Refresh
        </button>
        <button
          type="button"
          class="secondary"
          aria-label={`Export CSV of ${list.name}`}
          disabled={props.exporting}
          onClick={props.onExport}
        >
          Export CSV
        </button>
        <button type="button" class="secondary" aria-label={`Delete ${list.name}`} onClick={props.onDelete}>
          Delete
        </button>
      </td>
    </tr>
  )
}

/** A list's actions: refresh from its filter, export the audience as CSV, delete. */
function useListActions(session: Session, reload: () => void) {
  const refresh = useAction((id: string) =>
    api(session).post('/lists/refresh/{id}', { params: { path: { id } }, body: {} }),
  )
  const exportCsv = useAction(async (list: SavedList) =>
    saveFile(
      await api(session).file('/lists/{id}/chat-ads-export', {
        params: { path: { id: list.id }, query: { organizationId: session.organizationId } },
      }),
      `${list.name.replace(/[^\w-]+/g, '-')}-audience.csv`,
    ),
  )
  const remove = useAction((id: string) =>
    api(session).delete('/lists/{id}', { params: { path: { id } }, body: {} }),
  )
  const rowProps = (list: SavedList) => ({
    list,
    refreshing: refresh.busy,
    exporting: exportCsv.busy,
    onRefresh: async () => {
      if (await refresh.run(list.id)) reload()
    },
    onExport: () => exportCsv.run(list),
    onDelete: async () => {
      if (confirm(`Delete the list "${list.name}"?`) && (await remove.run(list.id))) reload()
    },
  })
  return { error: refresh.error ?? exportCsv.error ?? remove.error, rowProps }
}

/**
 * The organization's integrations, for their names and accounts' names; without them (an error),
 * the lists still show, naming the platforms by what their types stand for.
 */
function usePlatforms(session: Session): readonly Platform[] {
  const loaded = useLoad(
    (signal) =>
      api(session).get('/integrations/{organizationId}', {
        params: { path: { organizationId: session.organizationId } },
        signal,
      }),
    [],
  )
  return loaded.data ?? []
}

/** While a list's audience sync runs, the lists load again, so its outcome shows when it ends. */
function useReloadWhileSyncing(rows: SavedList[] | undefined, reload: () => void) {
  const syncing = rows?.some((list) => list.lastAudienceSync?.status === 'running') ?? false
  useEffect(() => {
    if (!syncing) return
    const timer = setInterval(reload, 10_000)
    return () => clearInterval(timer)
  }, [syncing, reload])
}

export function ListsPage({ session }: { session: Session }) {
  const lists = useLoad(async (signal) => {
    // The organization's id answers its lists (a list's id would answer that list).
    const answer = await api(session).get('/lists/{id}', {
      params: { path: { id: session.organizationId } },
      signal,
    })
    return Array.isArray(answer) ? answer : [answer]
  }, [])
  const actions = useListActions(session, lists.reload)
  const platforms = usePlatforms(session)
  useReloadWhileSyncing(lists.data, lists.reload)
  return (
    <>
      <NewList session={session} onSaved={lists.reload} />
      <ErrorMessage error={actions.error} />
      <section aria-labelledby="saved-title">
        <h2 id="saved-title">Saved lists</h2>
        <Show loaded={lists}>
          {(rows) =>
            rows.length === 0 ? (
              <Empty title="No lists yet">Describe an audience above, check the count, and save it.</Empty>
            ) : (
              <div class="table-wrap">
                <table>
                  <caption class="visually-hidden">Saved lists</caption>
                  <thead>
                    <tr>
                      <th scope="col">Name</th>
                      <th scope="col" class="num">
                        Contacts
                      </th>
                      <th scope="col">Last refreshed</th>
                      <th scope="col">Ads platform</th>
                      <th scope="col">Actions</th>
                    </tr>
                  </thead>
                  <tbody>
                    {rows.map((list) => (
                      <SavedListRow key={list.id} platforms={platforms} {...actions.rowProps(list)} />
                    ))}
                  </tbody>
                </table>
              </div>
            )
          }
        </Show>
      </section>
    </>
  )
}
