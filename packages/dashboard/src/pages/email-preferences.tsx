// Lifecycle email preferences: the partner's defaults, and this organization's overrides of them.
import { useState } from 'preact/hooks'
import { type Answer, partnerApi, type Session } from '../api.js'
import { ErrorMessage, Show, useAction, useLoad } from '../components/ui.js'

type EmailKind = keyof Answer<'get', '/partner/email-preferences'>['preferences']

const emailLabels: Record<string, string> = {
  first_visitor_identified: 'First visitor identified',
  credits_low: 'Credits running low',
  credits_exhausted: 'Credits exhausted',
  subscription_activated: 'Subscription activated',
  subscription_canceled: 'Subscription canceled',
  payment_failed: 'Payment failed',
  renewal_receipt: 'Renewal receipt',
  integration_reconnect: 'Integration to reconnect',
} satisfies Record<EmailKind, string>

type Effective = Record<string, { enabled: boolean; inherited: boolean }>

type Scope = 'partner' | 'organization'

/**
 * The preferences of a scope as they stand, the changes ticked since, and saving them (or, for an
 * organization, going back to the partner's defaults).
 */
function useEmailPreferences(session: Session, scope: Scope) {
  const client = partnerApi(session)
  const organization = { path: { organizationId: session.organizationId } }
  const loaded = useLoad(async (signal) => {
    const answer =
      scope === 'partner'
        ? await client.get('/partner/email-preferences', { signal })
        : await client.get('/partner/organizations/{organizationId}/email-preferences', {
            params: organization,
            signal,
          })
    // The partner's answer is key: boolean; an organization's is key: { enabled, inherited }.
    return Object.fromEntries(
      Object.entries(answer.preferences).map(([key, value]) => [
        key,
        typeof value === 'boolean' ? { enabled: value, inherited: false } : value,
      ]),
    ) as Effective
  }, [])
  const [changes, setChanges] = useState<Record<string, boolean>>({})
  const save = useAction(() =>
    scope === 'partner'
      ? client.put('/partner/email-preferences', { body: { preferences: changes } })
      : client.put('/partner/organizations/{organizationId}/email-preferences', {
          params: organization,
          body: { preferences: changes },
        }),
  )
  const reset = useAction(() =>
    client.delete('/partner/organizations/{organizationId}/email-preferences', { params: organization }),
  )
  /** After a save or a reset: no pending change, and the preferences read again. */
  const done = () => {
    setChanges({})
    loaded.reload()
  }
  return { loaded, changes, setChanges, save, reset, done }
}

/** A box per email; `showDefaults` marks those that follow the partner's default. */
function PreferenceBoxes(props: {
  preferences: Effective
  changes: Record<string, boolean>
  onChange: (changes: Record<string, boolean>) => void
  showDefaults: boolean
}) {
  const { changes } = props
  return (
    <fieldset>
      <legend>Send</legend>
      {Object.entries(props.preferences).map(([key, value]) => (
        <label class="toggle" key={key}>
          <input
            type="checkbox"
            checked={changes[key] ?? value.enabled}
            onChange={(e) => props.onChange({ ...changes, [key]: (e.target as HTMLInputElement).checked })}
          />
          {emailLabels[key] ?? key}
          {props.showDefaults && value.inherited && changes[key] === undefined ? (
            <span class="muted"> (default)</span>
          ) : null}
        </label>
      ))}
    </fieldset>
  )
}

/** `partner`: the defaults of every organization; `organization`: the signed-in one's overrides. */
export function EmailPreferences({ session, scope }: { session: Session; scope: Scope }) {
  const { loaded, changes, setChanges, save, reset, done } = useEmailPreferences(session, scope)
  const id = `email-${scope}-title`
  return (
    <form
      class="card"
      aria-labelledby={id}
      onSubmit={async (event) => {
        event.preventDefault()
        if (await save.run()) done()
      }}
    >
      <h2 id={id}>
        {scope === 'partner' ? 'Email preferences: defaults' : 'Email preferences: this organization'}
      </h2>
      <p class="hint">
        {scope === 'partner'
          ? 'Which lifecycle emails your organizations’ members get, unless an organization overrides it.'
          : 'What this organization’s members get; “default” marks a value that follows your defaults.'}
      </p>
      <Show loaded={loaded}>
        {(preferences) => (
          <PreferenceBoxes
            preferences={preferences}
            changes={changes}
            onChange={setChanges}
            showDefaults={scope === 'organization'}
          />
        )}
      </Show>
      <ErrorMessage error={save.error ?? reset.error} />
      <div class="actions">
        <button type="submit" disabled={save.busy || Object.keys(changes).length === 0}>
          {save.busy ? 'Saving…' : 'Save preferences'}
        </button>
        {scope === 'organization' ? (
          <button
            type="button"
            class="secondary"
            disabled={reset.busy}
            onClick={async () => {
              if (await reset.run()) done()
            }}
          >
            Back to the defaults
          </button>
        ) : null}
      </div>
    </form>
  )
}
