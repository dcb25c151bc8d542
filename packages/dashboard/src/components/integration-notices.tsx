// The organization's integrations that need it, on every page: one whose grant ends within a week
// (`reconnect_soon`, a grant without a refresh token such as Meta's) or has stopped working
// (`reauthorization_required`). Reconnecting is installing again: the API gives the platform's
// authorization page (`request-install`, which needs the key, so a button rather than a link).
import { api, type Session } from '../api.js'
import { formatDateTime } from '../format.js'
import type { Integration } from '../types.js'
import { ErrorMessage, useAction, useLoad } from './ui.js'

const needsReconnect = (integration: Integration) =>
  integration.status === 'reconnect_soon' || integration.status === 'reauthorization_required'

/** What the banner says: by when, or that it stopped. */
function message({ name, status, expiresAt }: Integration): string {
  if (status === 'reconnect_soon') {
    return `${name} stops working on ${formatDateTime(expiresAt)}: reconnect it before then to keep audiences syncing.`
  }
  const since = expiresAt && Date.parse(expiresAt) <= Date.now() ? ` on ${formatDateTime(expiresAt)}` : ''
  return `${name} stopped working${since}: reconnect it to sync audiences again.`
}

function Notice({ session, integration }: { session: Session; integration: Integration }) {
  const reconnect = useAction(async () => {
    const { url } = await api(session).get('/integrations/request-install', {
      params: { query: { integrationType: integration.type, organizationId: session.organizationId } },
    })
    location.assign(url)
  })
  return (
    <div class="reconnect" data-integration={integration.type} data-status={integration.status}>
      <p>{message(integration)}</p>
      <button type="button" disabled={reconnect.busy} onClick={() => reconnect.run()}>
        Reconnect {integration.name}
      </button>
      <ErrorMessage error={reconnect.error} />
    </div>
  )
}

/**
 * The banners of the signed-in organization's integrations to reconnect, in a box saying whether the
 * integrations were read (`data-integrations`): no banner once read means none is due.
 */
export function IntegrationNotices({ session }: { session: Session }) {
  const { organizationId } = session
  const loaded = useLoad(
    (signal) =>
      api(session).get('/integrations/{organizationId}', { params: { path: { organizationId } }, signal }),
    [organizationId],
  )
  // A failed read shows nothing here: the page's own content says what went wrong with the key.
  const due = (loaded.data ?? []).filter(needsReconnect)
  const state = loaded.loading ? 'loading' : loaded.error ? 'failed' : 'read'
  return (
    <div class="integration-notices" data-integrations={state}>
      {due.length > 0 ? (
        <section class="reconnects" aria-label="Integrations to reconnect">
          {due.map((integration) => (
            <Notice key={integration.type} session={session} integration={integration} />
          ))}
        </section>
      ) : null}
    </div>
  )
}
