// A partner's ICP rules for one organization: groups of conditions (every condition type and
// comparator of the rule language), validated as you type by @visitor-id/icp-engine (the API's
// own validation and messages), previewed against a chosen visitor's facts.
import {
  COMPARATORS,
  CONDITION_TYPES,
  type Comparator,
  type ConditionType,
  comparatorsFor,
  type Evaluation,
  evaluate,
  kindOf,
  type Rules,
  type RulesIssue,
  safeParseRules,
} from '@visitor-id/icp-engine'
import { useMemo, useState } from 'preact/hooks'
import { request, type Session } from '../api.js'
import { splitValues } from '../components/filter-form.js'
import { RecalculationStatus } from '../components/recalculation.js'
import { Empty, ErrorMessage, Show, useAction, useLoad } from '../components/ui.js'
import { visitorFacts } from '../facts.js'
import { formatNumber, personName, presetRange, rangeInstants } from '../format.js'
import type { Page, PartnerIcpConfig, VisitorProfile, VisitorRow } from '../types.js'

interface ConditionDraft {
  type: ConditionType
  comparator: Comparator
  /** The value as typed: one value, a comma-separated list, or the low end of `between`. */
  value: string
  /** The high end of `between`. */
  high: string
  optional: boolean
  weight: string
}

interface GroupDraft {
  operator: 'AND' | 'OR'
  conditions: ConditionDraft[]
}

const listComparators = new Set<Comparator>(['in', 'not_in', 'has_any', 'has_all'])
const newCondition = (): ConditionDraft => ({
  type: 'industry',
  comparator: 'equals',
  value: '',
  high: '',
  optional: false,
  weight: '1',
})

/** The rules input the form stands for: what the API is sent and the engine checks. */
export function toRulesInput(groups: GroupDraft[]): unknown {
  return {
    groups: groups.map((group) => ({
      operator: group.operator,
      conditions: group.conditions.map((c) => {
        const kind = kindOf(c.type)
        let value: unknown = c.value.trim()
        if (c.comparator === 'exists' || c.comparator === 'not_exists') value = true
        else if (c.comparator === 'between') value = [c.value.trim(), c.high.trim()]
        else if (listComparators.has(c.comparator)) value = splitValues(c.value)
        else if (kind === 'boolean') value = c.value === 'true' ? true : c.value === 'false' ? false : c.value
        const weight = Number(c.weight)
        return {
          type: c.type,
          comparator: c.comparator,
          value,
          optional: c.optional,
          ...(c.weight.trim() && weight !== 1 ? { weight: Number.isFinite(weight) ? weight : c.weight } : {}),
        }
      }),
    })),
  }
}

/** A stored rule set back into the form. */
function fromRules(rules: Rules): GroupDraft[] {
  return rules.groups.map((group) => ({
    operator: group.operator,
    conditions: group.conditions.map((c) => {
      const value = c.value
      const list = Array.isArray(value) ? (value as (string | number)[]) : undefined
      return {
        type: c.type,
        comparator: c.comparator,
        value: c.comparator === 'between' ? String(list?.[0] ?? '') : list ? list.join(', ') : String(value),
        high: c.comparator === 'between' ? String(list?.[1] ?? '') : '',
        optional: c.optional,
        weight: String(c.weight ?? 1),
      }
    }),
  }))
}

function ValueInput(props: {
  id: string
  condition: ConditionDraft
  describedBy?: string
  onChange: (c: ConditionDraft) => void
}) {
  const { condition: c } = props
  const kind = kindOf(c.type)
  const set = (patch: Partial<ConditionDraft>) => props.onChange({ ...c, ...patch })
  if (c.comparator === 'exists' || c.comparator === 'not_exists') return <span class="muted">no value</span>
  if (c.comparator === 'between')
    return (
      <span class="between">
        <label class="visually-hidden" for={`${props.id}-low`}>
          From
        </label>
        <input
          id={`${props.id}-low`}
          type="number"
          value={c.value}
          aria-describedby={props.describedBy}
          onInput={(e) => set({ value: (e.target as HTMLInputElement).value })}
        />
        <span aria-hidden="true">to</span>
        <label class="visually-hidden" for={`${props.id}-high`}>
          To
        </label>
        <input
          id={`${props.id}-high`}
          type="number"
          value={c.high}
          aria-describedby={props.describedBy}
          onInput={(e) => set({ high: (e.target as HTMLInputElement).value })}
        />
      </span>
    )
  if (kind === 'boolean')
    return (
      <select
        id={props.id}
        value={c.value}
        aria-describedby={props.describedBy}
        onChange={(e) => set({ value: (e.target as HTMLSelectElement).value })}
      >
        <option value="">Choose…</option>
        <option value="true">true</option>
        <option value="false">false</option>
      </select>
    )
  return (
    <input
      id={props.id}
      value={c.value}
      type={kind === 'number' && !listComparators.has(c.comparator) ? 'number' : 'text'}
      placeholder={listComparators.has(c.comparator) ? 'comma-separated values' : undefined}
      aria-describedby={props.describedBy}
      onInput={(e) => set({ value: (e.target as HTMLInputElement).value })}
    />
  )
}

function issuesAt(issues: readonly RulesIssue[], group: number, condition?: number) {
  return issues.filter((issue) => {
    const [g, gi, c, ci] = issue.segments
    if (g !== 'groups' || gi !== group) return false
    return condition === undefined
      ? c !== 'conditions' || ci === undefined
      : c === 'conditions' && ci === condition
  })
}

function RulesForm(props: {
  groups: GroupDraft[]
  issues: readonly RulesIssue[]
  onChange: (groups: GroupDraft[]) => void
}) {
  const { groups, issues } = props
  const setGroup = (index: number, group: GroupDraft) =>
    props.onChange(groups.map((g, i) => (i === index ? group : g)))
  const rootIssues = issues.filter((issue) => issue.segments.length <= 1)
  return (
    <div class="rules">
      {rootIssues.map((issue) => (
        <p class="error-text" key={issue.path}>
          {issue.message}
        </p>
      ))}
      {groups.map((group, gi) => {
        const groupIssues = issuesAt(issues, gi)
        return (
          <fieldset class="group" key={gi}>
            <legend>
              Group {gi + 1}
              {gi > 0 ? <span class="muted"> (or)</span> : null}
            </legend>
            <div class="row">
              <label>
                Conditions combine with{' '}
                <select
                  value={group.operator}
                  onChange={(e) =>
                    setGroup(gi, {
                      ...group,
                      operator: (e.target as HTMLSelectElement).value as 'AND' | 'OR',
                    })
                  }
                >
                  <option value="AND">AND: all must pass</option>
                  <option value="OR">OR: any may pass</option>
                </select>
              </label>
              <button
                type="button"
                class="secondary"
                onClick={() => props.onChange(groups.filter((_, i) => i !== gi))}
              >
                Remove group {gi + 1}
              </button>
            </div>
            {groupIssues.map((issue) => (
              <p class="error-text" key={issue.path}>
                {issue.message}
              </p>
            ))}
            {group.conditions.map((c, ci) => {
              const id = `g${gi}c${ci}`
              const conditionIssues = issuesAt(issues, gi, ci)
              const errorId = conditionIssues.length ? `${id}-errors` : undefined
              const setCondition = (next: ConditionDraft) =>
                setGroup(gi, { ...group, conditions: group.conditions.map((x, i) => (i === ci ? next : x)) })
              const legal = comparatorsFor(c.type)
              return (
                <div
                  class={conditionIssues.length ? 'condition invalid' : 'condition'}
                  key={id}
                  data-condition={id}
                >
                  <div class="field">
                    <label for={`${id}-type`}>Type</label>
                    <select
                      id={`${id}-type`}
                      value={c.type}
                      onChange={(e) => {
                        const type = (e.target as HTMLSelectElement).value as ConditionType
                        const comparators = comparatorsFor(type)
                        setCondition({
                          ...c,
                          type,
                          comparator: comparators.includes(c.comparator) ? c.comparator : comparators[0]!,
                        })
                      }}
                    >
                      {CONDITION_TYPES.map((type) => (
                        <option key={type} value={type}>
                          {type}
                        </option>
                      ))}
                    </select>
                  </div>
                  <div class="field">
                    <label for={`${id}-comparator`}>Comparator</label>
                    <select
                      id={`${id}-comparator`}
                      value={c.comparator}
                      onChange={(e) =>
                        setCondition({
                          ...c,
                          comparator: (e.target as HTMLSelectElement).value as Comparator,
                        })
                      }
                    >
                      {COMPARATORS.filter((comparator) => legal.includes(comparator)).map((comparator) => (
                        <option key={comparator} value={comparator}>
                          {comparator}
                        </option>
                      ))}
                    </select>
                  </div>
                  <div class="field">
                    <label for={`${id}-value`}>Value</label>
                    <ValueInput
                      id={`${id}-value`}
                      condition={c}
                      describedBy={errorId}
                      onChange={setCondition}
                    />
                  </div>
                  <div class="field narrow">
                    <label for={`${id}-weight`}>Weight</label>
                    <input
                      id={`${id}-weight`}
                      type="number"
                      step="0.01"
                      min="0.01"
                      value={c.weight}
                      onInput={(e) => setCondition({ ...c, weight: (e.target as HTMLInputElement).value })}
                    />
                  </div>
                  <label class="toggle">
                    <input
                      type="checkbox"
                      checked={c.optional}
                      onChange={(e) =>
                        setCondition({ ...c, optional: (e.target as HTMLInputElement).checked })
                      }
                    />
                    Optional (scores only)
                  </label>
                  <button
                    type="button"
                    class="secondary"
                    aria-label={`Remove condition ${ci + 1} of group ${gi + 1}`}
                    onClick={() =>
                      setGroup(gi, { ...group, conditions: group.conditions.filter((_, i) => i !== ci) })
                    }
                  >
                    Remove
                  </button>
                  {conditionIssues.length ? (
                    <ul id={errorId} class="error-text issues">
                      {conditionIssues.map((issue) => (
                        <li key={issue.path}>{issue.message}</li>
                      ))}
                    </ul>
                  ) : null}
                </div>
              )
            })}
            <button
              type="button"
              class="secondary"
              onClick={() => setGroup(gi, { ...group, conditions: [...group.conditions, newCondition()] })}
            >
              Add condition to group {gi + 1}
            </button>
          </fieldset>
        )
      })}
      <button
        type="button"
        class="secondary"
        onClick={() => props.onChange([...groups, { operator: 'AND', conditions: [newCondition()] }])}
      >
        Add group
      </button>
    </div>
  )
}

function Preview({ session, rules }: { session: Session; rules: Rules | undefined }) {
  const [visitorId, setVisitorId] = useState('')
  const visitors = useLoad(
    (signal) =>
      request<Page<VisitorRow>>(session, '/companies/visitors', {
        query: { organizationId: session.organizationId, ...rangeInstants(presetRange('30d')), limit: 50 },
        signal,
      }),
    [],
  )
  const profile = useLoad(
    (signal) =>
      visitorId
        ? request<VisitorProfile>(
            session,
            `/visitor-tracking/${session.organizationId}/visitors/${visitorId}`,
            { signal },
          )
        : Promise.resolve(undefined),
    [visitorId],
  )
  let result: Evaluation | undefined
  if (rules && profile.data) result = evaluate(rules, visitorFacts(profile.data))
  return (
    <section class="preview" aria-labelledby="preview-title">
      <h3 id="preview-title">Preview against a visitor</h3>
      <label for="preview-visitor">Visitor</label>
      <select
        id="preview-visitor"
        value={visitorId}
        onChange={(e) => setVisitorId((e.target as HTMLSelectElement).value)}
      >
        <option value="">Choose a recent visitor…</option>
        {(visitors.data?.data ?? []).map((row) => (
          <option key={row.id} value={row.id}>
            {personName(row)}
            {row.company ? ` (${row.company.name})` : ''}
          </option>
        ))}
      </select>
      <ErrorMessage error={visitors.error ?? profile.error} />
      {!rules ? (
        <p class="hint">Fix the rules above to see the result.</p>
      ) : result ? (
        <div aria-live="polite" data-preview={result.matched ? 'match' : 'no-match'}>
          <p>
            <strong>{result.matched ? 'Matches' : 'Does not match'}</strong>, score {result.score}
          </p>
          <ul>
            {result.groups.map((group, gi) => (
              <li key={gi}>
                Group {gi + 1}: {group.matched ? 'matched' : 'not matched'} (score {group.score});{' '}
                {group.conditions
                  .map(
                    (c) =>
                      `${c.type} ${c.comparator} ${c.passed ? 'passes' : 'fails'}${c.optional ? ' (optional)' : ''}`,
                  )
                  .join(', ')}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
    </section>
  )
}

interface Editing {
  slug?: string
  label: string
  priority: number
  isActive: boolean
  groups: GroupDraft[]
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
  const base = `/partner/organizations/${props.session.organizationId}/icp-configs`
  const save = useAction(() => {
    const body = { label: draft.label, priority: draft.priority, isActive: draft.isActive, rules: input }
    return props.editing.slug
      ? request(props.session, `${base}/${props.editing.slug}`, { method: 'PUT', body, partner: true })
      : request(props.session, base, { method: 'POST', body, partner: true })
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
      <div class="row">
        <div class="field">
          <label for="rules-label">Label</label>
          <input
            id="rules-label"
            required
            value={draft.label}
            onInput={(e) => setDraft({ ...draft, label: (e.target as HTMLInputElement).value })}
          />
        </div>
        <div class="field narrow">
          <label for="rules-priority">Priority</label>
          <input
            id="rules-priority"
            type="number"
            min={0}
            value={draft.priority}
            onInput={(e) => setDraft({ ...draft, priority: Number((e.target as HTMLInputElement).value) })}
          />
        </div>
        <label class="toggle">
          <input
            type="checkbox"
            checked={draft.isActive}
            onChange={(e) => setDraft({ ...draft, isActive: (e.target as HTMLInputElement).checked })}
          />
          Active
        </label>
      </div>
      <p class="hint">Groups combine with OR: a visitor matches when any group matches.</p>
      <RulesForm
        groups={draft.groups}
        issues={issues}
        onChange={(groups) => setDraft({ ...draft, groups })}
      />
      <p
        class={parsed.success ? 'valid' : 'error-text'}
        aria-live="polite"
        data-validity={parsed.success ? 'valid' : 'invalid'}
      >
        {parsed.success
          ? 'The rules are valid.'
          : `${issues.length} problem${issues.length === 1 ? '' : 's'} to fix.`}
      </p>
      <Preview session={props.session} rules={parsed.success ? parsed.rules : undefined} />
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

interface PartnerStats {
  stats: { totalMatches: number; byConfig: { slug: string; label: string; matches: number }[] }
}

export function PartnerRules({ session }: { session: Session }) {
  const base = `/partner/organizations/${session.organizationId}/icp-configs`
  const [editing, setEditing] = useState<Editing>()
  const configs = useLoad(
    (signal) => request<{ icpConfigs: PartnerIcpConfig[] }>(session, base, { partner: true, signal }),
    [],
  )
  const stats = useLoad(
    (signal) =>
      request<PartnerStats>(session, `${base}/stats`, {
        partner: true,
        query: rangeInstants(presetRange('30d')),
        signal,
      }),
    [],
  )
  const remove = useAction((slug: string) =>
    request(session, `${base}/${slug}`, { method: 'DELETE', partner: true }),
  )
  const reload = () => {
    configs.reload()
    stats.reload()
  }
  return (
    <section aria-labelledby="partner-rules-title">
      <div class="section-head">
        <h2 id="partner-rules-title">Partner rules</h2>
        {editing ? null : (
          <button
            type="button"
            onClick={() =>
              setEditing({
                label: '',
                priority: 0,
                isActive: true,
                groups: [{ operator: 'AND', conditions: [newCondition()] }],
              })
            }
          >
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
                <li class="card" key={config.slug} data-slug={config.slug}>
                  <p>
                    <strong>{config.label}</strong> <code class="muted">{config.slug}</code>,{' '}
                    {config.isActive ? 'active' : 'inactive'}, priority {config.priority},{' '}
                    {config.rules.groups.length} group{config.rules.groups.length === 1 ? '' : 's'}
                  </p>
                  <p>
                    Matches (30 days):{' '}
                    {formatNumber(
                      stats.data?.stats.byConfig.find((s) => s.slug === config.slug)?.matches ?? 0,
                    )}
                    ; <RecalculationStatus recalculation={config.recalculation} />
                  </p>
                  <div class="actions">
                    <button
                      type="button"
                      class="secondary"
                      aria-label={`Edit ${config.label}`}
                      onClick={() =>
                        setEditing({
                          slug: config.slug,
                          label: config.label,
                          priority: config.priority,
                          isActive: config.isActive,
                          groups: fromRules(config.rules),
                        })
                      }
                    >
                      Edit
                    </button>
                    <button
                      type="button"
                      class="secondary"
                      aria-label={`Delete ${config.label}`}
                      onClick={async () => {
                        if (confirm(`Delete the rules "${config.label}"?`) && (await remove.run(config.slug)))
                          reload()
                      }}
                    >
                      Delete
                    </button>
                  </div>
                </li>
              ))}
            </ul>
          )
        }
      </Show>
    </section>
  )
}
