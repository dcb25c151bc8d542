// The `integration_reconnect` email (docs/decisions.md, "Email" and "Integrations"): a periodic pass
// of the worker finds the integrations whose grant has no refresh token and ends within the margin
// (`reconnect_soon`, integrations/grant-expiry.ts), and mails the organization's members once per
// grant. Once is kept in the store (`integration_reconnect_notices`, by organization, type and
// expiry), not by the email jobs' ids alone, which dedupe only while a job waits: the pass runs
// every hour for a week of each grant. Installing again brings a new expiry, so a new grant is
// mailed in its turn.
import type { Config } from '../config.js'
import { nextVersion } from '../ids.js'
import { integrationStatus, reconnectMarginMs } from '../integrations/grant-expiry.js'
import type { IntegrationType } from '../integrations/integration-store.js'
import { integrationName } from '../integrations/integrations.js'
import type { Store } from '../store/client.js'
import { storedTime } from '../store/time.js'
import { type LifecycleEmailDeps, queueLifecycleEmail } from './lifecycle.js'

export interface ReconnectEmailDeps extends Pick<LifecycleEmailDeps, 'store' | 'repos' | 'coordination'> {
  /** The integration names the email uses. */
  settings: Config['integrations']
  /** The service's public URL: the email links to its dashboard (`/app/`), whose banner reconnects. */
  publicUrl: string
}

interface ExpiringGrant {
  organization: string
  type: IntegrationType
  status: 'connected' | 'reauthorization_required'
  expires_at: string
}

const toDateTime = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace('Z', '')

/**
 * The grants without a refresh token that end within the margin of `now` and whose members were
 * not mailed about them yet. A recorded refusal, a grant already past its end, and a grant with a
 * refresh token are not asked for (integrationStatus decides, as the integrations list shows it).
 */
async function unnoticedGrants(store: Store, now: number): Promise<ExpiringGrant[]> {
  const rows = await store.query<ExpiringGrant>(
    `SELECT toString(organization_id) AS organization, type, status, expires_at
     FROM integrations FINAL
     WHERE refresh_token = '' AND expires_at IS NOT NULL AND expires_at <= {until:DateTime64(3)}
       AND (organization_id, type, expires_at) NOT IN (
         SELECT organization_id, type, expires_at FROM integration_reconnect_notices)`,
    { until: toDateTime(now + reconnectMarginMs) },
  )
  return rows
    .map((row) => ({ ...row, expires_at: storedTime(row.expires_at) }))
    .filter((row) => integrationStatus({ ...row, refresh_token: '' }, now) === 'reconnect_soon')
}

/**
 * One pass: queues `integration_reconnect` to the members of each organization whose grant ends
 * within 7 days of `now` (ms since the epoch) and was not mailed about, then records the grant as
 * mailed. An organization whose preference is off (or that has no member) gets nothing and is not
 * recorded: turned on before the end, the next pass mails it. Returns how many emails were queued.
 * @example await integrationReconnectEmails({ store, repos, coordination, settings, publicUrl })
 */
export async function integrationReconnectEmails(
  deps: ReconnectEmailDeps,
  now: number = Date.now(),
): Promise<number> {
  let queued = 0
  for (const grant of await unnoticedGrants(deps.store, now)) {
    const sent = await queueLifecycleEmail(deps, {
      key: 'integration_reconnect',
      organizationId: grant.organization,
      // A record lost after the queueing (a crash) is covered while the jobs wait.
      dedupe: `integration_reconnect:${grant.organization}:${grant.type}:${grant.expires_at}`,
      data: {
        integration: integrationName(deps.settings, grant.type),
        expiresAt: grant.expires_at,
        appUrl: `${deps.publicUrl.replace(/\/+$/, '')}/app/`,
      },
    })
    if (sent === 0) continue
    queued += sent
    await deps.store.insert('integration_reconnect_notices', [
      {
        organization_id: grant.organization,
        type: grant.type,
        expires_at: grant.expires_at,
        queued_at: new Date(now).toISOString(),
        version: nextVersion(),
      },
    ])
  }
  return queued
}
