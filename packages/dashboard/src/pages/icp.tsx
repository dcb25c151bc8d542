// ICP configs: the organization's filters (list, create, edit, recalculate, stats) and, with a
// partner key, the partner's rules for this organization.
import { useState } from 'preact/hooks'
import { type Answer, api, type Session } from '../api.js'
import { cleanFilter, FilterForm } from '../components/filter-form.js'
import { RecalculationStatus } from '../components/recalculation.js'
import { Empty, ErrorMessage, type Loaded, Show, useAction, useLoad } from '../components/ui.js'
import { formatNumber, presetRange, rangeInstants } from '../format.js'
import type { Filter, IcpConfig } from '../types.js'
import { PartnerRules } from './partner-rules.js'

interface Draft {
  slug?: string
  name: string
  priority: number
  isActive: boolean
  filter: Filter
}

const emptyDraft: Draft = { name: '', priority: 0, isActive: true, filter: {} }

function ConfigForm(props: { session: Session; draft: Draft; onDone: () => void; onCancel: () => void }) {
  const [draft, setDraft] = useState(props.draft)
  const organizationId = props.session.organizationId
  const save = useAction(() => {
    const body = {
      name: draft.name,
      priority: draft.priority,
      isActive: draft.isActive,
      filter: cleanFilter(draft.filter),
    }
    return props.draft.slug
      ? api(props.session).put('/organizations/{organizationId}/icp-configs/{slug}', {
          params: { path: { organizationId, slug: props.draft.slug } },
          body,
        })
      : api(props.session).post('/organizations/{organizationId}/icp-configs', {
          params: { path: { organizationId } },
          body,
        })
  })
  const submit = async (event: Event) => {
    event.preventDefault()
    if (await save.run()) props.onDone()
  }
  return (
    <form class="card" onSubmit={submit} aria-labelledby="config-form-title">
      <h2 id="config-form-title">{props.draft.slug ? `Edit ${props.draft.name}` : 'New ICP config'}</h2>
      <div class="row">
        <div class="field">
          <label for="config-name">Name</label>
          <input
            id="config-name"
            required
            value={draft.name}
            onInput={(event) => setDraft({ ...draft, name: (event.target as HTMLInputElement).value })}
          />
        </div>
        <div class="field narrow">
          <label for="config-priority">Priority (lower first)</label>
          <input
            id="config-priority"
            type="number"
            min={0}
            value={draft.priority}
            onInput={(event) =>
              setDraft({ ...draft, priority: Number((event.target as HTMLInputElement).value) })
            }
          />
        </div>
        <label class="toggle">
          <input
            type="checkbox"
            checked={draft.isActive}
            onChange={(event) => setDraft({ ...draft, isActive: (event.target as HTMLInputElement).checked })}
          />
          Active
        </label>
      </div>
      <FilterForm
        idPrefix="config"
        filter={draft.filter}
        onChange={(filter) => setDraft({ ...draft, filter })}
      />
      <ErrorMessage error={save.error} />
      <div class="actions">
        <button type="submit" disabled={save.busy}>
          {save.busy ? 'Saving…' : props.draft.slug ? 'Save changes' : 'Create and score'}
        </button>
        <button type="button" class="secondary" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  )
}

type Stats = Answer<'get', '/organizations/{organizationId}/icp-configs/stats'>

/** The organization's configs and their visitors and matches over 30 days, reloaded together. */
function useOrganizationConfigs(session: Session) {
  const path = { organizationId: session.organizationId }
  const configs = useLoad(
    (signal) => api(session).get('/organizations/{organizationId}/icp-configs', { params: { path }, signal }),
    [],
  )
  const stats = useLoad(
    (signal) =>
      api(session).get('/organizations/{organizationId}/icp-configs/stats', {
        params: { path, query: rangeInstants(presetRange('30d')) },
        signal,
      }),
    [],
  )
  const reload = () => {
    configs.reload()
    stats.reload()
  }
  return { configs, stats, reload }
}

function ConfigRow(props: {
  config: IcpConfig
  stat: Stats[number] | undefined
  recalculating: boolean
  onEdit: () => void
  onRecalculate: () => void
  onDelete: () => void
}) {
  const { config, stat } = props
  return (
    <tr data-slug={config.slug}>
      <td>
        {config.name} <code class="muted">{config.slug}</code>
      </td>
      <td>
        {config.isActive ? 'Active' : 'Inactive'}, priority {config.priority}
      </td>
      <td class="num">{formatNumber(stat?.visitors)}</td>
      <td class="num">{formatNumber(stat?.matches)}</td>
      <td>
        <RecalculationStatus recalculation={config.recalculation} />
      </td>
      <td class="actions">
        <button type="button" class="secondary" aria-label={`Edit ${config.name}`} onClick={props.onEdit}>
          Edit
        </button>
        <button
          type="button"
          class="secondary"
          aria-label={`Recalculate ${config.name}`}
          disabled={props.recalculating}
          onClick={props.onRecalculate}
        >
          Recalculate
        </button>
        <button
          type="button"
          class="secondary danger"
          aria-label={`Delete ${config.name}`}
          onClick={props.onDelete}
        >
          Delete
        </button>
      </td>
    </tr>
  )
}

/** The configs' table, with what each row's recalculate and delete buttons do. */
function ConfigTable(props: {
  session: Session
  configs: Loaded<IcpConfig[]>
  stats: Stats | undefined
  onEdit: (config: IcpConfig) => void
  reload: () => void
}) {
  const { session, reload } = props
  const path = (slug: string) => ({ organizationId: session.organizationId, slug })
  const recalculate = useAction((slug: string) =>
    api(session).post('/organizations/{organizationId}/icp-configs/{slug}/recalculate', {
      params: { path: path(slug) },
    }),
  )
  const remove = useAction((slug: string) =>
    api(session).delete('/organizations/{organizationId}/icp-configs/{slug}', {
      params: { path: path(slug) },
    }),
  )
  const onRecalculate = async (config: IcpConfig) => {
    if (await recalculate.run(config.slug)) setTimeout(reload, 1500)
  }
  const onDelete = async (config: IcpConfig) => {
    if (confirm(`Delete the ICP config "${config.name}"?`) && (await remove.run(config.slug))) reload()
  }
  return (
    <>
      <ErrorMessage error={recalculate.error ?? remove.error} />
      <Show loaded={props.configs}>
        {(list) =>
          list.length === 0 ? (
            <Empty title="No ICP configs yet">
              Create one to tell your ideal customers apart: industries, sizes, countries, job titles.
            </Empty>
          ) : (
            <div class="table-wrap">
              <table>
                <caption class="visually-hidden">Organization ICP configs</caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Status</th>
                    <th scope="col" class="num">
                      Visitors (30 days)
                    </th>
                    <th scope="col" class="num">
                      Matches (30 days)
                    </th>
                    <th scope="col">Last scoring</th>
                    <th scope="col">Actions</th>
                  </tr>
                </thead>
                <tbody>
                  {list.map((config) => (
                    <ConfigRow
                      key={config.slug}
                      config={config}
                      stat={props.stats?.find((stat) => stat.slug === config.slug)}
                      recalculating={recalculate.busy}
                      onEdit={() => props.onEdit(config)}
                      onRecalculate={() => onRecalculate(config)}
                      onDelete={() => onDelete(config)}
                    />
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Show>
    </>
  )
}

function OrganizationConfigs({ session }: { session: Session }) {
  const [editing, setEditing] = useState<Draft>()
  const { configs, stats, reload } = useOrganizationConfigs(session)
  return (
    <section aria-labelledby="org-configs-title">
      <div class="section-head">
        <h2 id="org-configs-title">Organization configs</h2>
        {editing ? null : (
          <button type="button" onClick={() => setEditing(emptyDraft)}>
            New ICP config
          </button>
        )}
      </div>
      {editing ? (
        <ConfigForm
          key={editing.slug ?? 'new'}
          session={session}
          draft={editing}
          onCancel={() => setEditing(undefined)}
          onDone={() => {
            setEditing(undefined)
            reload()
          }}
        />
      ) : null}
      <ConfigTable
        session={session}
        configs={configs}
        stats={stats.data}
        onEdit={(config) => setEditing({ ...config })}
        reload={reload}
      />
    </section>
  )
}

export function IcpPage({ session }: { session: Session }) {
  return (
    <>
      <OrganizationConfigs session={session} />
      {session.partnerKey ? (
        <PartnerRules session={session} />
      ) : (
        <section class="card">
          <h2>Partner rules</h2>
          <p class="hint">
            Sign in with a partner key as well to write rules with groups and conditions (UTMs, pages,
            engagement, company, contact, scores) for this organization.
          </p>
        </section>
      )}
    </>
  )
}
