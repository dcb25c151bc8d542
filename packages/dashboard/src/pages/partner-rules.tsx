// A partner's ICP rules for one organization: groups of conditions (every condition type and
// comparator of the rule language), validated as you type by @visitor-id/icp-engine (the API's
// own validation and messages), previewed against a chosen visitor's facts.
import { type RulesIssue, safeParseRules } from '@visitor-id/icp-engine'
import { useMemo, useState } from 'preact/hooks'
import { partnerApi, type Session } from '../api.js'
import { RecalculationStatus } from '../components/recalculation.js'
import { RulePreview } from '../components/rule-preview.js'
import {
  fromRules,
  type GroupDraft,
  newCondition,
  RulesForm,
  toRulesInput,
} from '../components/rules-form.js'
import { Empty, ErrorMessage, Show, useAction, useLoad } from '../components/ui.js'
import { formatNumber, presetRange, rangeInstants } from '../format.js'
import { type PartnerIcpConfig, withRules } from '../types.js'

interface Editing {
  slug?: string
  label: string
  priority: number
  isActive: boolean
  groups: GroupDraft[]
}

/** The config's label, priority and switch. */
function LabelFields({ draft, onChange }: { draft: Editing; onChange: (draft: Editing) => void }) {
  return (
    <div class="row">
      <div class="field">
        <label for="rules-label">Label</label>
        <input
          id="rules-label"
          required
          value={draft.label}
          onInput={(e) => onChange({ ...draft, label: (e.target as HTMLInputElement).value })}
        />
      </div>
      <div class="field narrow">
        <label for="rules-priority">Priority</label>
        <input
          id="rules-priority"
          type="number"
          min={0}
          value={draft.priority}
          onInput={(e) => onChange({ ...draft, priority: Number((e.target as HTMLInputElement).value) })}
        />
      </div>
      <label class="toggle">
        <input
          type="checkbox"
          checked={draft.isActive}
          onChange={(e) => onChange({ ...draft, isActive: (e.target as HTMLInputElement).checked })}
        />
        Active
      </label>
    </div>
  )
}

/** Whether the rules are valid as typed; `issues` when they are not. */
function Validity({ issues }: { issues: readonly RulesIssue[] | undefined }) {
  return (
    <p
      class={issues ? 'error-text' : 'valid'}
      aria-live="polite"
      data-validity={issues ? 'invalid' : 'valid'}
    >
      {issues ? `${issues.length} problem${issues.length === 1 ? '' : 's'} to fix.` : 'The rules are valid.'}
    </p>
  )
}

function PartnerConfigForm(props: {
  session: Session
  editing: Editing
  onDone: () => void
  onCancel: () => void
}) {
  const [draft, setDraft] = useState(props.editing)
  const input = useMemo(() => toRulesInput(draft.groups), [draft.groups])
  const parsed = useMemo(() => safeParseRules(input), [input])
  const issues = parsed.success ? [] : parsed.error.issues
  const organizationId = props.session.organizationId
  const save = useAction(() => {
    const body = { label: draft.label, priority: draft.priority, isActive: draft.isActive, rules: input }
    return props.editing.slug
      ? partnerApi(props.session).put('/partner/organizations/{organizationId}/icp-configs/{slug}', {
          params: { path: { organizationId, slug: props.editing.slug } },
          body,
        })
      : partnerApi(props.session).post('/partner/organizations/{organizationId}/icp-configs', {
          params: { path: { organizationId } },
          body,
        })
  })
  return (
    <form
      class="card"
      aria-labelledby="rules-form-title"
      onSubmit={async (event) => {
        event.preventDefault()
        if (await save.run()) props.onDone()
      }}
    >
      <h3 id="rules-form-title">
        {props.editing.slug ? `Edit ${props.editing.label}` : 'New partner rules'}
      </h3>
      <LabelFields draft={draft} onChange={setDraft} />
      <p class="hint">Groups combine with OR: a visitor matches when any group matches.</p>
      <RulesForm
        groups={draft.groups}
        issues={issues}
        onChange={(groups) => setDraft({ ...draft, groups })}
      />
      <Validity issues={parsed.success ? undefined : issues} />
      <RulePreview session={props.session} rules={parsed.success ? parsed.rules : undefined} />
      <ErrorMessage error={save.error} />
      <div class="actions">
        <button type="submit" disabled={save.busy || !parsed.success}>
          {save.busy ? 'Saving…' : props.editing.slug ? 'Save rules' : 'Create and score'}
        </button>
        <button type="button" class="secondary" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  )
}

/** The organization's partner configs and their matches over 30 days, reloaded together. */
function usePartnerConfigs(session: Session) {
  const path = { organizationId: session.organizationId }
  const configs = useLoad(
    (signal) =>
      partnerApi(session)
        .get('/partner/organizations/{organizationId}/icp-configs', { params: { path }, signal })
        .then(({ icpConfigs }) => ({ icpConfigs: withRules(icpConfigs) })),
    [],
  )
  const stats = useLoad(
    (signal) =>
      partnerApi(session).get('/partner/organizations/{organizationId}/icp-configs/stats', {
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

const newRules = (): Editing => ({
  label: '',
  priority: 0,
  isActive: true,
  groups: [{ operator: 'AND', conditions: [newCondition()] }],
})

/** A stored config as the form edits it. */
const editingOf = (config: PartnerIcpConfig): Editing => ({
  slug: config.slug,
  label: config.label,
  priority: config.priority,
  isActive: config.isActive,
  groups: fromRules(config.rules),
})

function PartnerConfigCard(props: {
  config: PartnerIcpConfig
  matches: number
  onEdit: () => void
  onDelete: () => void
}) {
  const { config } = props
  const groups = config.rules.groups.length
  return (
    <li class="card" data-slug={config.slug}>
      <p>
        <strong>{config.label}</strong> <code class="muted">{config.slug}</code>,{' '}
        {config.isActive ? 'active' : 'inactive'}, priority {config.priority}, {groups} group
        {groups === 1 ? '' : 's'}
      </p>
      <p>
        Matches (30 days): {formatNumber(props.matches)};{' '}
        <RecalculationStatus recalculation={config.recalculation} />
      </p>
      <div class="actions">
        <button type="button" class="secondary" aria-label={`Edit ${config.label}`} onClick={props.onEdit}>
          Edit
        </button>
        <button
          type="button"
          class="secondary"
          aria-label={`Delete ${config.label}`}
          onClick={props.onDelete}
        >
          Delete
        </button>
      </div>
    </li>
  )
}

export function PartnerRules({ session }: { session: Session }) {
  const [editing, setEditing] = useState<Editing>()
  const { configs, stats, reload } = usePartnerConfigs(session)
  const remove = useAction((slug: string) =>
    partnerApi(session).delete('/partner/organizations/{organizationId}/icp-configs/{slug}', {
      params: { path: { organizationId: session.organizationId, slug } },
    }),
  )
  const onDelete = async (config: PartnerIcpConfig) => {
    if (confirm(`Delete the rules "${config.label}"?`) && (await remove.run(config.slug))) reload()
  }
  const matchesOf = (slug: string) => stats.data?.stats.byConfig.find((s) => s.slug === slug)?.matches ?? 0
  return (
    <section aria-labelledby="partner-rules-title">
      <div class="section-head">
        <h2 id="partner-rules-title">Partner rules</h2>
        {editing ? null : (
          <button type="button" onClick={() => setEditing(newRules())}>
            New partner rules
          </button>
        )}
      </div>
      {editing ? (
        <PartnerConfigForm
          key={editing.slug ?? 'new'}
          session={session}
          editing={editing}
          onCancel={() => setEditing(undefined)}
          onDone={() => {
            setEditing(undefined)
            reload()
          }}
        />
      ) : null}
      <ErrorMessage error={remove.error} />
      {stats.data ? (
        <p>
          Matches in the last 30 days, all partner rules:{' '}
          <strong>{formatNumber(stats.data.stats.totalMatches)}</strong>
        </p>
      ) : (
        <ErrorMessage error={stats.error} />
      )}
      <Show loaded={configs}>
        {({ icpConfigs }) =>
          icpConfigs.length === 0 ? (
            <Empty title="No partner rules for this organization">
              Write rules with groups and conditions: New partner rules.
            </Empty>
          ) : (
            <ul class="cards">
              {icpConfigs.map((config) => (
                <PartnerConfigCard
                  key={config.slug}
                  config={config}
                  matches={matchesOf(config.slug)}
                  onEdit={() => setEditing(editingOf(config))}
                  onDelete={() => onDelete(config)}
                />
              ))}
            </ul>
          )
        }
      </Show>
    </section>
  )
}
