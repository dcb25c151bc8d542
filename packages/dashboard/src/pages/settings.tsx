// Settings: the pixel's configuration, the two install snippets, API keys; with a partner key,
// webhooks, the custom domain and email preferences too.
import { useState } from 'preact/hooks'
import { api, type Session } from '../api.js'
import { CopyButton, Empty, ErrorMessage, Show, useAction, useLoad } from '../components/ui.js'
import { formatDateTime } from '../format.js'
import type { ApiScope, PixelConfig } from '../types.js'
import { PartnerSettings } from './partner-settings.js'

const lines = (text: string) =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)

function PixelForm({
  session,
  config,
  onSaved,
}: {
  session: Session
  config: PixelConfig
  onSaved: () => void
}) {
  const [referrers, setReferrers] = useState(config.allowedReferrers.join('\n'))
  const [domains, setDomains] = useState(config.verifiedDomains.join('\n'))
  const [flags, setFlags] = useState({
    ipTracking: config.ipTracking,
    respectPrivacySignals: config.respectPrivacySignals,
    formCapture: config.formCapture,
  })
  const save = useAction(() =>
    api(session).put('/visitor-tracking/{organizationId}/pixel-config', {
      params: { path: { organizationId: session.organizationId } },
      body: { allowedReferrers: lines(referrers), verifiedDomains: lines(domains), ...flags },
    }),
  )
  const flag = (key: keyof typeof flags, label: string, hint: string) => (
    <label class="toggle" key={key}>
      <input
        type="checkbox"
        checked={flags[key]}
        onChange={(e) => setFlags({ ...flags, [key]: (e.target as HTMLInputElement).checked })}
      />
      {label} <span class="hint">{hint}</span>
    </label>
  )
  return (
    <form
      class="card"
      aria-labelledby="pixel-title"
      onSubmit={async (event) => {
        event.preventDefault()
        if (await save.run()) onSaved()
      }}
    >
      <h2 id="pixel-title">Pixel</h2>
      <p>
        Tracking key <code>{config.trackingKey}</code>
      </p>
      <div class="field">
        <label for="allowed-referrers">Allowed referrers (one URL a line; empty: any site)</label>
        <textarea
          id="allowed-referrers"
          rows={3}
          value={referrers}
          onInput={(e) => setReferrers((e.target as HTMLTextAreaElement).value)}
        />
      </div>
      <div class="field">
        <label for="verified-domains">Verified domains (one a line)</label>
        <textarea
          id="verified-domains"
          rows={3}
          value={domains}
          onInput={(e) => setDomains((e.target as HTMLTextAreaElement).value)}
        />
      </div>
      <fieldset>
        <legend>Privacy</legend>
        {flag('ipTracking', 'Use IP addresses', 'to find the company of a visit')}
        {flag('respectPrivacySignals', 'Respect privacy signals', 'Do Not Track and Global Privacy Control')}
        {flag('formCapture', 'Capture form emails', 'identify visitors who type their email in a form')}
      </fieldset>
      <ErrorMessage error={save.error} />
      <button type="submit" disabled={save.busy}>
        {save.busy ? 'Saving…' : 'Save pixel settings'}
      </button>
      {save.done && !save.busy ? (
        <span class="valid" role="status">
          {' '}
          Saved.
        </span>
      ) : null}
    </form>
  )
}

function Snippet({
  session,
  type,
  title,
}: {
  session: Session
  type: 'jsSnippet' | 'tagManager'
  title: string
}) {
  const loaded = useLoad(
    (signal) =>
      api(session).get('/visitor-tracking/{organizationId}/installation/script/{type}', {
        params: { path: { organizationId: session.organizationId, type } },
        signal,
      }),
    [],
  )
  const id = `snippet-${type}`
  return (
    <div class="snippet">
      <h3 id={id}>{title}</h3>
      <Show loaded={loaded}>
        {({ script }) => (
          <>
            <pre>
              <code>{script}</code>
            </pre>
            <CopyButton text={script} label={`the ${title.toLowerCase()}`} />
          </>
        )}
      </Show>
    </div>
  )
}

const scopes = ['read', 'write', 'admin', 'agency:read', 'agency:write'] as const satisfies ApiScope[]

function ApiKeys({ session }: { session: Session }) {
  const { organizationId } = session
  const keys = useLoad(
    (signal) =>
      api(session).get('/organization/{organizationId}/api-keys', {
        params: { path: { organizationId } },
        signal,
      }),
    [],
  )
  const [name, setName] = useState('')
  const [chosen, setChosen] = useState<ApiScope[]>(['read'])
  const [expires, setExpires] = useState('')
  const create = useAction(() =>
    api(session).post('/organization/{organizationId}/api-keys', {
      params: { path: { organizationId } },
      body: {
        name: name.trim(),
        scopes: chosen,
        ...(expires ? { expiresAt: new Date(`${expires}T23:59:59`).toISOString() } : {}),
      },
    }),
  )
  const revoke = useAction((keyId: string) =>
    api(session).delete('/organization/{organizationId}/api-keys/{keyId}', {
      params: { path: { organizationId, keyId } },
    }),
  )
  return (
    <section class="card" aria-labelledby="keys-title">
      <h2 id="keys-title">API keys</h2>
      <form
        aria-label="Create an API key"
        onSubmit={async (event) => {
          event.preventDefault()
          if (await create.run()) {
            setName('')
            keys.reload()
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
        <fieldset>
          <legend>Scopes</legend>
          {scopes.map((scope) => (
            <label class="toggle" key={scope}>
              <input
                type="checkbox"
                checked={chosen.includes(scope)}
                onChange={(e) =>
                  setChosen(
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
                    <tr key={key.id} data-key={key.name}>
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
                            disabled={revoke.busy || session.apiKey.startsWith(key.keyPrefix)}
                            title={
                              session.apiKey.startsWith(key.keyPrefix)
                                ? 'The key you signed in with'
                                : undefined
                            }
                            onClick={async () => {
                              if (
                                confirm(`Revoke "${key.name}"? Calls with it fail at once.`) &&
                                (await revoke.run(key.id))
                              )
                                keys.reload()
                            }}
                          >
                            Revoke
                          </button>
                        ) : null}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Show>
    </section>
  )
}

export function SettingsPage({ session }: { session: Session }) {
  const pixel = useLoad(
    (signal) =>
      api(session).get('/visitor-tracking/{organizationId}', {
        params: { path: { organizationId: session.organizationId } },
        signal,
      }),
    [],
  )
  return (
    <>
      <Show loaded={pixel}>
        {({ pixelConfig }) => <PixelForm session={session} config={pixelConfig} onSaved={pixel.reload} />}
      </Show>
      <section class="card" aria-labelledby="install-title">
        <h2 id="install-title">Install</h2>
        <p class="hint">Paste one of these once on every page of your site, in the &lt;head&gt;.</p>
        <div class="columns">
          <Snippet session={session} type="jsSnippet" title="Script tag" />
          <Snippet session={session} type="tagManager" title="Tag manager snippet" />
        </div>
      </section>
      <ApiKeys session={session} />
      {session.partnerKey ? (
        <PartnerSettings session={session} />
      ) : (
        <section class="card">
          <h2>Partner settings</h2>
          <p class="hint">
            Sign in with a partner key as well for webhooks, a custom domain and email preferences.
          </p>
        </section>
      )}
    </>
  )
}
