// The partner's settings: its two webhooks (with a test and the delivery log), its custom
// tracking domain (custom-domain.tsx), and the email defaults of its organizations.
import { useState } from 'preact/hooks'
import { type Answer, partnerApi, type Session } from '../api.js'
import { Empty, ErrorMessage, Pager, Show, useAction, useLoad } from '../components/ui.js'
import { formatDateTime } from '../format.js'
import { CustomDomain } from './custom-domain.js'
import { EmailPreferences } from './email-preferences.js'

type Webhooks = Answer<'get', '/partner/webhooks'>
type WebhookType = keyof Webhooks

function WebhookForm(props: {
  session: Session
  type: WebhookType
  webhook: Webhooks[WebhookType]
  onSaved: () => void
}) {
  const { session, type } = props
  const [url, setUrl] = useState(props.webhook.url)
  const [secret, setSecret] = useState('')
  const [enabled, setEnabled] = useState(props.webhook.enabled)
  const save = useAction(() =>
    partnerApi(session).put(`/partner/webhooks/${type}`, {
      body: { url: url.trim(), enabled, ...(secret ? { secret } : {}) },
    }),
  )
  const test = useAction(() => partnerApi(session).post('/partner/webhooks/test', { body: { type } }))
  const title = type === 'identification' ? 'Identification webhook' : 'Billing webhook'
  return (
    <form
      class="webhook"
      aria-label={title}
      onSubmit={async (event) => {
        event.preventDefault()
        if (await save.run()) {
          setSecret('')
          props.onSaved()
        }
      }}
    >
      <h3>{title}</h3>
      <div class="field">
        <label for={`${type}-url`}>URL</label>
        <input
          id={`${type}-url`}
          type="url"
          placeholder="https://"
          value={url}
          onInput={(e) => setUrl((e.target as HTMLInputElement).value)}
        />
      </div>
      <div class="field">
        <label for={`${type}-secret`}>
          Signing secret {props.webhook.hasSecret ? '(set; leave empty to keep it)' : '(none yet)'}
        </label>
        <input
          id={`${type}-secret`}
          type="password"
          autoComplete="off"
          value={secret}
          onInput={(e) => setSecret((e.target as HTMLInputElement).value)}
        />
      </div>
      <label class="toggle">
        <input
          type="checkbox"
          checked={enabled}
          onChange={(e) => setEnabled((e.target as HTMLInputElement).checked)}
        />
        Enabled
      </label>
      <ErrorMessage error={save.error ?? test.error} />
      {test.done ? (
        <p class={test.done.success ? 'valid' : 'error-text'} role="status">
          Test: {test.done.message}
        </p>
      ) : null}
      <div class="actions">
        <button type="submit" disabled={save.busy}>
          {save.busy ? 'Saving…' : 'Save'}
        </button>
        <button type="button" class="secondary" disabled={test.busy} onClick={() => test.run()}>
          {test.busy ? 'Sending…' : 'Send a test event'}
        </button>
      </div>
    </form>
  )
}

type Delivery = Answer<'get', '/partner/webhooks/logs'>['logs'][number]

/** One attempt: when, which webhook and event, how it went, and a button to send it again. */
function DeliveryRow(props: { entry: Delivery; busy: boolean; onRedeliver: () => void }) {
  const { entry } = props
  return (
    <tr>
      <td>{formatDateTime(entry.attemptedAt)}</td>
      <td>{entry.type}</td>
      <td>
        {entry.eventType} <span class="muted">attempt {entry.attempt}</span>
      </td>
      <td>
        {entry.status}
        {entry.statusCode ? ` (HTTP ${entry.statusCode}, ${entry.responseTimeMs} ms)` : ''}
        {entry.error ? <span class="muted"> {entry.error}</span> : null}
      </td>
      <td>
        <button
          type="button"
          class="secondary"
          aria-label={`Send again: ${entry.eventType} of ${formatDateTime(entry.attemptedAt)}`}
          disabled={props.busy}
          onClick={props.onRedeliver}
        >
          Send again
        </button>
      </td>
    </tr>
  )
}

function DeliveryLog({ session }: { session: Session }) {
  const [page, setPage] = useState(1)
  const logs = useLoad(
    (signal) =>
      partnerApi(session).get('/partner/webhooks/logs', {
        params: { query: { page, pageSize: 10 } },
        signal,
      }),
    [page],
  )
  const redeliver = useAction((id: string) =>
    partnerApi(session).post('/partner/webhooks/logs/{id}/redeliver', { params: { path: { id } } }),
  )
  return (
    <section aria-labelledby="log-title">
      <div class="section-head">
        <h3 id="log-title">Delivery log</h3>
        <button type="button" class="secondary" onClick={logs.reload}>
          Reload
        </button>
      </div>
      <ErrorMessage error={redeliver.error} />
      <Show loaded={logs}>
        {(result) =>
          result.total === 0 ? (
            <Empty title="No deliveries yet">
              Send a test event, or wait for the next identified visitor.
            </Empty>
          ) : (
            <>
              <div class="table-wrap">
                <table>
                  <caption class="visually-hidden">Webhook deliveries</caption>
                  <thead>
                    <tr>
                      <th scope="col">When</th>
                      <th scope="col">Webhook</th>
                      <th scope="col">Event</th>
                      <th scope="col">Result</th>
                      <th scope="col">Actions</th>
                    </tr>
                  </thead>
                  <tbody>
                    {result.logs.map((entry) => (
                      <DeliveryRow
                        key={entry.id}
                        entry={entry}
                        busy={redeliver.busy}
                        onRedeliver={async () => {
                          if (await redeliver.run(entry.id)) logs.reload()
                        }}
                      />
                    ))}
                  </tbody>
                </table>
              </div>
              <Pager
                page={result.page}
                totalPages={Math.ceil(result.total / result.pageSize)}
                total={result.total}
                onPage={setPage}
              />
            </>
          )
        }
      </Show>
    </section>
  )
}

export function PartnerSettings({ session }: { session: Session }) {
  const webhooks = useLoad((signal) => partnerApi(session).get('/partner/webhooks', { signal }), [])
  return (
    <>
      <section class="card" aria-labelledby="webhooks-title">
        <h2 id="webhooks-title">Webhooks</h2>
        <Show loaded={webhooks}>
          {(config) => (
            <div class="columns">
              <WebhookForm
                session={session}
                type="identification"
                webhook={config.identification}
                onSaved={webhooks.reload}
              />
              <WebhookForm
                session={session}
                type="billing"
                webhook={config.billing}
                onSaved={webhooks.reload}
              />
            </div>
          )}
        </Show>
        <DeliveryLog session={session} />
      </section>
      <CustomDomain session={session} />
      <EmailPreferences session={session} scope="partner" />
      <EmailPreferences session={session} scope="organization" />
    </>
  )
}
