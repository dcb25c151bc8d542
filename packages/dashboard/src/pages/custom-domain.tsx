// The partner's custom tracking domain: the DNS records to create, a verification on demand, and
// the form that sets or changes the domain.
import { useState } from 'preact/hooks'
import { type Answer, partnerApi, type Session } from '../api.js'
import { ErrorMessage, Show, useAction, useLoad } from '../components/ui.js'

type Domain = Answer<'get', '/partner/domain/verification'>

function DnsRecords({ records }: { records: Domain['dnsRecords'] }) {
  return (
    <div class="table-wrap">
      <table>
        <caption>DNS records to create</caption>
        <thead>
          <tr>
            <th scope="col">Type</th>
            <th scope="col">Name</th>
            <th scope="col">Value</th>
            <th scope="col">Status</th>
          </tr>
        </thead>
        <tbody>
          {records.map((record) => (
            <tr key={record.name}>
              <td>{record.type}</td>
              <td>
                <code>{record.name}</code>
              </td>
              <td>
                <code>{record.value}</code>
              </td>
              <td>{record.status ?? 'pending'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}

/** The domain set, its records, and a check of its DNS now. */
function DomainStatus({
  session,
  found,
  onVerified,
}: {
  session: Session
  found: Domain
  onVerified: () => void
}) {
  const verify = useAction(() => partnerApi(session).post('/partner/domain/verify'))
  return (
    <>
      <p>
        <strong>{found.domain}</strong>: {found.verified ? 'verified' : 'not verified yet'}
      </p>
      <p class="hint">{found.instructions}</p>
      <DnsRecords records={found.dnsRecords} />
      <button
        type="button"
        disabled={verify.busy}
        onClick={async () => {
          if (await verify.run()) onVerified()
        }}
      >
        {verify.busy ? 'Checking DNS…' : 'Verify now'}
      </button>
      {verify.done ? (
        <p class={verify.done.verified ? 'valid' : 'error-text'} role="status">
          {verify.done.verified ? 'Verified.' : (verify.done.message ?? 'Not verified yet.')}
        </p>
      ) : null}
      <ErrorMessage error={verify.error} />
    </>
  )
}

function DomainForm({
  session,
  changing,
  onSet,
}: {
  session: Session
  changing: boolean
  onSet: () => void
}) {
  const [domain, setDomain] = useState('')
  const set = useAction(() => partnerApi(session).put('/partner/domain', { body: { domain: domain.trim() } }))
  return (
    <form
      onSubmit={async (event) => {
        event.preventDefault()
        if (await set.run()) {
          setDomain('')
          onSet()
        }
      }}
    >
      <div class="field">
        <label for="custom-domain">{changing ? 'Change the domain' : 'Domain'}</label>
        <input
          id="custom-domain"
          required
          placeholder="track.example.com"
          value={domain}
          onInput={(e) => setDomain((e.target as HTMLInputElement).value)}
        />
      </div>
      <ErrorMessage error={set.error} />
      <button type="submit" disabled={set.busy}>
        {set.busy ? 'Saving…' : 'Set domain'}
      </button>
    </form>
  )
}

export function CustomDomain({ session }: { session: Session }) {
  const current = useLoad(
    (signal) =>
      partnerApi(session)
        .get('/partner/domain/verification', { signal })
        .then(
          (found) => (found.domain ? found : null),
          (error) => {
            // No domain set yet is not a failure of the page: the form below sets one.
            if ((error as { status?: number }).status === 404) return null
            throw error
          },
        ),
    [],
  )
  return (
    <section class="card" aria-labelledby="domain-title">
      <h2 id="domain-title">Custom tracking domain</h2>
      <Show loaded={current}>
        {(found) =>
          found ? (
            <DomainStatus session={session} found={found} onVerified={current.reload} />
          ) : (
            <p class="hint">No custom domain yet: snippets load the pixel from this server’s address.</p>
          )
        }
      </Show>
      <DomainForm session={session} changing={Boolean(current.data)} onSet={current.reload} />
    </section>
  )
}
