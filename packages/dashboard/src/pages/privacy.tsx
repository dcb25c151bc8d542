// Privacy on the settings page: the organization's retention (empty: the server's default) and
// company-only mode, and a person's export or erasure, named by an email, its SHA-256 or a visitor id (an `admin` key).
import { useState } from 'preact/hooks'
import { type Answer, api, type Session, saveFile } from '../api.js'
import { ErrorMessage, Show, useAction, useLoad } from '../components/ui.js'
import { formatDateTime } from '../format.js'

type Settings = Answer<'get', '/organization/{organizationId}/privacy'>
type Erased = Answer<'delete', '/organization/{organizationId}/persons'>

/** A days field: a positive whole number, or empty for the server's default. */
function DaysField(props: { id: string; label: string; value: string; onInput: (value: string) => void }) {
  return (
    <div class="field narrow">
      <label for={props.id}>{props.label}</label>
      <input
        id={props.id}
        type="number"
        min={1}
        max={3650}
        step={1}
        placeholder="server default"
        value={props.value}
        onInput={(e) => props.onInput((e.target as HTMLInputElement).value)}
      />
    </div>
  )
}

const daysOrDefault = (value: string) => (value.trim() === '' ? null : Number(value))
const described = (days: number | null) =>
  days === null ? 'forever' : `${days.toLocaleString('en-US')} days`

function RetentionForm({
  session,
  settings,
  onSaved,
}: {
  session: Session
  settings: Settings
  onSaved: () => void
}) {
  const [raw, setRaw] = useState(settings.own.retentionDays?.toString() ?? '')
  const [ip, setIp] = useState(settings.own.ipRetentionDays?.toString() ?? '')
  const [companyOnly, setCompanyOnly] = useState(settings.companyOnly.enabled)
  const [countries, setCountries] = useState(settings.companyOnly.countries.join(', '))
  const save = useAction(() =>
    api(session).put('/organization/{organizationId}/privacy', {
      params: { path: { organizationId: session.organizationId } },
      body: {
        retentionDays: daysOrDefault(raw),
        ipRetentionDays: daysOrDefault(ip),
        companyOnly: {
          enabled: companyOnly,
          countries: countries
            .split(/[\s,]+/)
            .map((code) => code.trim().toUpperCase())
            .filter(Boolean),
        },
      },
    }),
  )
  return (
    <form
      aria-label="Retention and regions"
      onSubmit={async (event) => {
        event.preventDefault()
        if (await save.run()) onSaved()
      }}
    >
      <h3>Retention</h3>
      <p class="hint" data-retention>
        Raw data is kept {described(settings.retentionDays)}, full IP addresses{' '}
        {described(settings.ipRetentionDays)}
        {settings.rawDataFrom ? `; raw data from ${formatDateTime(settings.rawDataFrom)}` : ''}.
      </p>
      <div class="row">
        <DaysField id="retention-days" label="Keep raw data (days)" value={raw} onInput={setRaw} />
        <DaysField id="ip-retention-days" label="Keep full IP addresses (days)" value={ip} onInput={setIp} />
      </div>
      <h3>Company-only mode</h3>
      <p class="hint" data-company-only>
        {settings.companyOnly.enabled
          ? `On: companies only, no people and no IP addresses, for ${settings.companyOnly.appliedCountries.length} countries.`
          : 'Off: people are identified wherever visitors are.'}
      </p>
      <label class="toggle">
        <input
          type="checkbox"
          checked={companyOnly}
          onChange={(e) => setCompanyOnly((e.target as HTMLInputElement).checked)}
        />
        Identify companies only <span class="hint">for visitors from the countries below</span>
      </label>
      <div class="field">
        <label for="company-only-countries">Countries (ISO codes; empty: the EEA)</label>
        <input
          id="company-only-countries"
          placeholder="EEA"
          value={countries}
          onInput={(e) => setCountries((e.target as HTMLInputElement).value)}
        />
      </div>
      <ErrorMessage error={save.error} />
      <button type="submit" disabled={save.busy}>
        {save.busy ? 'Saving…' : 'Save privacy settings'}
      </button>
    </form>
  )
}

type KeyKind = 'email' | 'emailSha256' | 'visitorId'
const keyKinds: [KeyKind, string][] = [
  ['email', 'Email'],
  ['emailSha256', 'Email SHA-256'],
  ['visitorId', 'Visitor id'],
]

/** Export or erase one person: the erasure asks to be confirmed first. */
function PersonRequest({ session }: { session: Session }) {
  const [kind, setKind] = useState<KeyKind>('email')
  const [value, setValue] = useState('')
  const [confirming, setConfirming] = useState(false)
  const organization = { path: { organizationId: session.organizationId } }
  const body = () => {
    const key = value.trim()
    return kind === 'email'
      ? { email: key }
      : kind === 'emailSha256'
        ? { emailSha256: key }
        : { visitorId: key }
  }
  const exported = useAction(async () => {
    const data = await api(session).post('/organization/{organizationId}/persons/export', {
      params: organization,
      body: body(),
    })
    saveFile(new Blob([JSON.stringify(data, null, 2)], { type: 'application/json' }), 'person-export.json')
    return data
  })
  const erased = useAction<[], Erased>(() =>
    api(session).delete('/organization/{organizationId}/persons', { params: organization, body: body() }),
  )
  const rows = erased.done ? Object.values(erased.done.erasure.rows).reduce((sum, n) => sum + n, 0) : 0
  return (
    <form aria-label="A person's data" onSubmit={(event) => event.preventDefault()}>
      <h3>A person's data</h3>
      <p class="hint">Export everything held about someone, or erase them from every table.</p>
      <div class="row">
        <div class="field narrow">
          <label for="person-kind">Named by</label>
          <select
            id="person-kind"
            value={kind}
            onChange={(e) => setKind((e.target as HTMLSelectElement).value as KeyKind)}
          >
            {keyKinds.map(([k, label]) => (
              <option key={k} value={k}>
                {label}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="person-key">Value</label>
          <input
            id="person-key"
            required
            value={value}
            onInput={(e) => {
              setValue((e.target as HTMLInputElement).value)
              setConfirming(false)
            }}
          />
        </div>
      </div>
      <ErrorMessage error={exported.error ?? erased.error} />
      <button type="button" disabled={!value.trim() || exported.busy} onClick={() => exported.run()}>
        {exported.busy ? 'Exporting…' : 'Export'}
      </button>{' '}
      {confirming ? (
        <button
          type="button"
          class="danger"
          disabled={erased.busy}
          onClick={async () => {
            if (await erased.run()) setConfirming(false)
          }}
        >
          {erased.busy ? 'Erasing…' : 'Erase for good'}
        </button>
      ) : (
        <button type="button" disabled={!value.trim()} onClick={() => setConfirming(true)}>
          Erase…
        </button>
      )}
      {erased.done && !erased.busy ? (
        <p role="status" data-erased>
          Erased: {erased.done.erasure.visitors} visitor(s), {erased.done.erasure.contacts} contact(s),{' '}
          {rows.toLocaleString('en-US')} rows.
        </p>
      ) : null}
    </form>
  )
}

export function PrivacySettings({ session }: { session: Session }) {
  const settings = useLoad(
    (signal) =>
      api(session).get('/organization/{organizationId}/privacy', {
        params: { path: { organizationId: session.organizationId } },
        signal,
      }),
    [],
  )
  return (
    <section class="card" aria-labelledby="privacy-title">
      <h2 id="privacy-title">Privacy</h2>
      <Show loaded={settings}>
        {(loaded) => <RetentionForm session={session} settings={loaded} onSaved={settings.reload} />}
      </Show>
      <PersonRequest session={session} />
    </section>
  )
}
