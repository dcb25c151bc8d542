// Settings: the pixel's configuration, the two install snippets, privacy (retention, a person's
// export or erasure), API keys; with a partner key,
// webhooks, the custom domain and email preferences too.
import { useState } from 'preact/hooks'
import { api, type Session } from '../api.js'
import { CopyButton, ErrorMessage, Show, useAction, useLoad } from '../components/ui.js'
import type { PixelConfig } from '../types.js'
import { ApiKeys } from './api-keys.js'
import { PartnerSettings } from './partner-settings.js'
import { PrivacySettings } from './privacy.js'

const lines = (text: string) =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)

/** A textarea of one value a line. */
function LinesField(props: { id: string; label: string; value: string; onInput: (value: string) => void }) {
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      <textarea
        id={props.id}
        rows={3}
        value={props.value}
        onInput={(e) => props.onInput((e.target as HTMLTextAreaElement).value)}
      />
    </div>
  )
}

type PrivacyFlags = Pick<PixelConfig, 'ipTracking' | 'respectPrivacySignals' | 'formCapture'>

/** Each privacy switch: its label and what it does. */
const privacySwitches: [keyof PrivacyFlags, string, string][] = [
  ['ipTracking', 'Use IP addresses', 'to find the company of a visit'],
  ['respectPrivacySignals', 'Respect privacy signals', 'Do Not Track and Global Privacy Control'],
  ['formCapture', 'Capture form emails', 'identify visitors who type their email in a form'],
]

function PrivacyFields({
  flags,
  onChange,
}: {
  flags: PrivacyFlags
  onChange: (flags: PrivacyFlags) => void
}) {
  return (
    <fieldset>
      <legend>Privacy</legend>
      {privacySwitches.map(([key, label, hint]) => (
        <label class="toggle" key={key}>
          <input
            type="checkbox"
            checked={flags[key]}
            onChange={(e) => onChange({ ...flags, [key]: (e.target as HTMLInputElement).checked })}
          />
          {label} <span class="hint">{hint}</span>
        </label>
      ))}
    </fieldset>
  )
}

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
  const [flags, setFlags] = useState<PrivacyFlags>({
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
      <LinesField
        id="allowed-referrers"
        label="Allowed referrers (one URL a line; empty: any site)"
        value={referrers}
        onInput={setReferrers}
      />
      <LinesField
        id="verified-domains"
        label="Verified domains (one a line)"
        value={domains}
        onInput={setDomains}
      />
      <PrivacyFields flags={flags} onChange={setFlags} />
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
      <PrivacySettings session={session} />
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
