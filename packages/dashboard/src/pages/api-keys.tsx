// The organization's API keys on the settings page: create one with scopes and an expiry (the key
// is shown once), list them, revoke one (never the key signed in with).
import { useState } from 'preact/hooks'
import { type Answer, api, type Session } from '../api.js'
import { CopyButton, Empty, ErrorMessage, type Loaded, Show, useAction, useLoad } from '../components/ui.js'
import { formatDateTime } from '../format.js'
import type { ApiScope } from '../types.js'

type Keys = Answer<'get', '/organization/{organizationId}/api-keys'>
type ApiKey = Keys['apiKeys'][number]

const scopes = ['read', 'write', 'admin', 'agency:read', 'agency:write'] as const satisfies ApiScope[]

function ScopeChoices({ chosen, onChange }: { chosen: ApiScope[]; onChange: (chosen: ApiScope[]) => void }) {
  return (
    <fieldset>
      <legend>Scopes</legend>
      {scopes.map((scope) => (
        <label class="toggle" key={scope}>
          <input
            type="checkbox"
            checked={chosen.includes(scope)}
            onChange={(e) =>
              onChange(
                (e.target as HTMLInputElement).checked
                  ? [...chosen, scope]
                  : chosen.filter((s) => s !== scope),
              )
            }
          />
          {scope}
        </label>
      ))}
    </fieldset>
  )
}

/** The form that creates a key, then the new key, shown only once. */
function NewKey({ session, onCreated }: { session: Session; onCreated: () => void }) {
  const [name, setName] = useState('')
  const [chosen, setChosen] = useState<ApiScope[]>(['read'])
  const [expires, setExpires] = useState('')
  const create = useAction(() =>
    api(session).post('/organization/{organizationId}/api-keys', {
      params: { path: { organizationId: session.organizationId } },
      body: {
        name: name.trim(),
        scopes: chosen,
        ...(expires ? { expiresAt: new Date(`${expires}T23:59:59`).toISOString() } : {}),
      },
    }),
  )
  return (
    <>
      <form
        aria-label="Create an API key"
        onSubmit={async (event) => {
          event.preventDefault()
          if (await create.run()) {
            setName('')
            onCreated()
          }
        }}
      >
        <div class="row">
          <div class="field">
            <label for="key-name">Name</label>
            <input
              id="key-name"
              required
              value={name}
              onInput={(e) => setName((e.target as HTMLInputElement).value)}
            />
          </div>
          <div class="field narrow">
            <label for="key-expires">Expires (optional)</label>
            <input
              id="key-expires"
              type="date"
              value={expires}
              onInput={(e) => setExpires((e.target as HTMLInputElement).value)}
            />
          </div>
        </div>
        <ScopeChoices chosen={chosen} onChange={setChosen} />
        <ErrorMessage error={create.error} />
        <button type="submit" disabled={create.busy}>
          {create.busy ? 'Creating…' : 'Create key'}
        </button>
      </form>
      {create.done ? (
        <div class="notice" role="status">
          <p>
            The new key, shown only now: <code data-plain-key>{create.done.plainKey}</code>
          </p>
          <CopyButton text={create.done.plainKey} label="the new key" />
        </div>
      ) : null}
    </>
  )
}

function KeyRow(props: { session: Session; apiKey: ApiKey; revoking: boolean; onRevoke: () => void }) {
  const { apiKey: key } = props
  const signedInWith = props.session.apiKey.startsWith(key.keyPrefix)
  return (
    <tr data-key={key.name}>
      <td>{key.name}</td>
      <td>
        <code>{key.keyPrefix}…</code>
      </td>
      <td>{key.scopes.join(', ')}</td>
      <td>{formatDateTime(key.lastUsedAt)}</td>
      <td>
        {key.status === 'revoked'
          ? 'Revoked'
          : key.expiresAt
            ? `Active until ${formatDateTime(key.expiresAt)}`
            : 'Active'}
      </td>
      <td>
        {key.status === 'active' ? (
          <button
            type="button"
            class="secondary danger"
            aria-label={`Revoke ${key.name}`}
            disabled={props.revoking || signedInWith}
            title={signedInWith ? 'The key you signed in with' : undefined}
            onClick={props.onRevoke}
          >
            Revoke
          </button>
        ) : null}
      </td>
    </tr>
  )
}

/** Every key of the organization, revoked ones included, each active one with a revoke button. */
function KeyTable({ session, keys }: { session: Session; keys: Loaded<Keys> }) {
  const revoke = useAction((keyId: string) =>
    api(session).delete('/organization/{organizationId}/api-keys/{keyId}', {
      params: { path: { organizationId: session.organizationId, keyId } },
    }),
  )
  const onRevoke = async (key: ApiKey) => {
    if (confirm(`Revoke "${key.name}"? Calls with it fail at once.`) && (await revoke.run(key.id)))
      keys.reload()
  }
  return (
    <>
      <ErrorMessage error={revoke.error} />
      <Show loaded={keys}>
        {({ apiKeys }) =>
          apiKeys.length === 0 ? (
            <Empty title="No keys" />
          ) : (
            <div class="table-wrap">
              <table>
                <caption class="visually-hidden">API keys</caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Prefix</th>
                    <th scope="col">Scopes</th>
                    <th scope="col">Last used</th>
                    <th scope="col">Status</th>
                    <th scope="col">Actions</th>
                  </tr>
                </thead>
                <tbody>
                  {apiKeys.map((key) => (
                    <KeyRow
                      key={key.id}
                      session={session}
                      apiKey={key}
                      revoking={revoke.busy}
                      onRevoke={() => onRevoke(key)}
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

export function ApiKeys({ session }: { session: Session }) {
  const keys = useLoad(
    (signal) =>
      api(session).get('/organization/{organizationId}/api-keys', {
        params: { path: { organizationId: session.organizationId } },
        signal,
      }),
    [],
  )
  return (
    <section class="card" aria-labelledby="keys-title">
      <h2 id="keys-title">API keys</h2>
      <NewKey session={session} onCreated={keys.reload} />
      <KeyTable session={session} keys={keys} />
    </section>
  )
}
