// The form of a partner's ICP rules: groups of conditions, every condition type and comparator
// of the rule language, each condition showing icp-engine's own messages (the API's) as you type.
import {
  COMPARATORS,
  CONDITION_TYPES,
  type Comparator,
  type ConditionType,
  comparatorsFor,
  kindOf,
  type Rules,
  type RulesIssue,
} from '@visitor-id/icp-engine'
import { splitValues } from './filter-form.js'

export interface ConditionDraft {
  type: ConditionType
  comparator: Comparator
  /** The value as typed: one value, a comma-separated list, or the low end of `between`. */
  value: string
  /** The high end of `between`. */
  high: string
  optional: boolean
  weight: string
}

export interface GroupDraft {
  operator: 'AND' | 'OR'
  conditions: ConditionDraft[]
}

const listComparators = new Set<Comparator>(['in', 'not_in', 'has_any', 'has_all'])
export const newCondition = (): ConditionDraft => ({
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
export function fromRules(rules: Rules): GroupDraft[] {
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

/** Issue messages, one paragraph each. */
function IssueLines({ issues }: { issues: readonly RulesIssue[] }) {
  return (
    <>
      {issues.map((issue) => (
        <p class="error-text" key={issue.path}>
          {issue.message}
        </p>
      ))}
    </>
  )
}

/** The condition type; a type change keeps the comparator when the new type allows it. */
function TypeField(props: { id: string; condition: ConditionDraft; onChange: (c: ConditionDraft) => void }) {
  const { condition: c } = props
  return (
    <div class="field">
      <label for={`${props.id}-type`}>Type</label>
      <select
        id={`${props.id}-type`}
        value={c.type}
        onChange={(e) => {
          const type = (e.target as HTMLSelectElement).value as ConditionType
          const comparators = comparatorsFor(type)
          props.onChange({
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
  )
}

/** The comparators the condition's type allows, in the rule language's order. */
function ComparatorField(props: {
  id: string
  condition: ConditionDraft
  onChange: (c: ConditionDraft) => void
}) {
  const { condition: c } = props
  const legal = comparatorsFor(c.type)
  return (
    <div class="field">
      <label for={`${props.id}-comparator`}>Comparator</label>
      <select
        id={`${props.id}-comparator`}
        value={c.comparator}
        onChange={(e) =>
          props.onChange({
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
  )
}

/** A condition's weight and whether it only scores. */
function ScoringFields(props: {
  id: string
  condition: ConditionDraft
  onChange: (c: ConditionDraft) => void
}) {
  const { condition: c } = props
  return (
    <>
      <div class="field narrow">
        <label for={`${props.id}-weight`}>Weight</label>
        <input
          id={`${props.id}-weight`}
          type="number"
          step="0.01"
          min="0.01"
          value={c.weight}
          onInput={(e) => props.onChange({ ...c, weight: (e.target as HTMLInputElement).value })}
        />
      </div>
      <label class="toggle">
        <input
          type="checkbox"
          checked={c.optional}
          onChange={(e) => props.onChange({ ...c, optional: (e.target as HTMLInputElement).checked })}
        />
        Optional (scores only)
      </label>
    </>
  )
}

/** One condition of group `group` (0-based), with its own issues under it. */
function ConditionRow(props: {
  group: number
  index: number
  condition: ConditionDraft
  issues: readonly RulesIssue[]
  onChange: (c: ConditionDraft) => void
  onRemove: () => void
}) {
  const { condition: c, issues } = props
  const id = `g${props.group}c${props.index}`
  const errorId = issues.length ? `${id}-errors` : undefined
  return (
    <div class={issues.length ? 'condition invalid' : 'condition'} data-condition={id}>
      <TypeField id={id} condition={c} onChange={props.onChange} />
      <ComparatorField id={id} condition={c} onChange={props.onChange} />
      <div class="field">
        <label for={`${id}-value`}>Value</label>
        <ValueInput id={`${id}-value`} condition={c} describedBy={errorId} onChange={props.onChange} />
      </div>
      <ScoringFields id={id} condition={c} onChange={props.onChange} />
      <button
        type="button"
        class="secondary"
        aria-label={`Remove condition ${props.index + 1} of group ${props.group + 1}`}
        onClick={props.onRemove}
      >
        Remove
      </button>
      {issues.length ? (
        <ul id={errorId} class="error-text issues">
          {issues.map((issue) => (
            <li key={issue.path}>{issue.message}</li>
          ))}
        </ul>
      ) : null}
    </div>
  )
}

/** One group (`index`, 0-based): how its conditions combine, the conditions, and its own issues. */
function GroupFieldset(props: {
  index: number
  group: GroupDraft
  issues: readonly RulesIssue[]
  onChange: (group: GroupDraft) => void
  onRemove: () => void
}) {
  const { index: gi, group, issues } = props
  const setConditions = (conditions: ConditionDraft[]) => props.onChange({ ...group, conditions })
  return (
    <fieldset class="group">
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
              props.onChange({ ...group, operator: (e.target as HTMLSelectElement).value as 'AND' | 'OR' })
            }
          >
            <option value="AND">AND: all must pass</option>
            <option value="OR">OR: any may pass</option>
          </select>
        </label>
        <button type="button" class="secondary" onClick={props.onRemove}>
          Remove group {gi + 1}
        </button>
      </div>
      <IssueLines issues={issuesAt(issues, gi)} />
      {group.conditions.map((c, ci) => (
        <ConditionRow
          key={`g${gi}c${ci}`}
          group={gi}
          index={ci}
          condition={c}
          issues={issuesAt(issues, gi, ci)}
          onChange={(next) => setConditions(group.conditions.map((x, i) => (i === ci ? next : x)))}
          onRemove={() => setConditions(group.conditions.filter((_, i) => i !== ci))}
        />
      ))}
      <button
        type="button"
        class="secondary"
        onClick={() => setConditions([...group.conditions, newCondition()])}
      >
        Add condition to group {gi + 1}
      </button>
    </fieldset>
  )
}

export function RulesForm(props: {
  groups: GroupDraft[]
  issues: readonly RulesIssue[]
  onChange: (groups: GroupDraft[]) => void
}) {
  const { groups, issues } = props
  return (
    <div class="rules">
      <IssueLines issues={issues.filter((issue) => issue.segments.length <= 1)} />
      {groups.map((group, gi) => (
        <GroupFieldset
          key={gi}
          index={gi}
          group={group}
          issues={issues}
          onChange={(next) => props.onChange(groups.map((g, i) => (i === gi ? next : g)))}
          onRemove={() => props.onChange(groups.filter((_, i) => i !== gi))}
        />
      ))}
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
