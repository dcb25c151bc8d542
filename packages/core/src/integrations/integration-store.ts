// An organization's connection to each ads platform as stored (migrations 0017 and 0025,
// `integrations`): its sealed tokens, its ads accounts and the one selected, and the consent its
// audiences are sent with. One row per organization and type; a new authorization replaces it.
import { nextVersion } from '../ids.js'
import type { Store } from '../store/client.js'
import { storedTime } from '../store/time.js'
import type { AdsAccount, AdsConsent } from './ads-platform.js'

export const integrationTypes = ['searchAds', 'socialAds'] as const
export type IntegrationType = (typeof integrationTypes)[number]

export interface IntegrationRow {
  organization_id: string
  type: IntegrationType
  status: 'connected' | 'reauthorization_required'
  access_token: string
  refresh_token: string
  expires_at: string | null
  scope: string
  /** null: the platform lists no accounts; the organization enters the id (`selectAdsAccount`). */
  ads_accounts: AdsAccount[] | null
  selected_account_id: string
  /** What the organization's users agreed to, for platforms that take it (Google); null: the server's default. */
  consent: AdsConsent | null
  connected_at: string
  updated_at: string
}

const iso = storedTime

const columns = `toString(organization_id) AS organization, type, status, access_token, refresh_token, expires_at,
  scope, ads_accounts, selected_account_id, consent, connected_at, updated_at`

type StoredIntegration = Omit<IntegrationRow, 'organization_id' | 'ads_accounts' | 'consent'> & {
  organization: string
  ads_accounts: string
  consent: string
}

const fromStored = ({ organization, ...row }: StoredIntegration): IntegrationRow => ({
  ...row,
  organization_id: organization,
  // 'null' (stored as such): the platform lists none.
  ads_accounts: JSON.parse(row.ads_accounts || '[]') as AdsAccount[] | null,
  // '' (rows made before the column): the server's default.
  consent: row.consent ? (JSON.parse(row.consent) as AdsConsent) : null,
  expires_at: row.expires_at === null ? null : iso(row.expires_at),
  connected_at: iso(row.connected_at),
  updated_at: iso(row.updated_at),
})

/** The organization's connected integrations, by type. */
export async function readIntegrations(
  store: Store,
  organizationId: string,
): Promise<Map<IntegrationType, IntegrationRow>> {
  const rows = await store.query<StoredIntegration>(
    `SELECT ${columns} FROM integrations FINAL WHERE organization_id = {organizationId:UUID}`,
    { organizationId },
  )
  return new Map(rows.map((row) => [row.type, fromStored(row)]))
}

export async function readIntegration(
  store: Store,
  organizationId: string,
  type: IntegrationType,
): Promise<IntegrationRow | undefined> {
  return (await readIntegrations(store, organizationId)).get(type)
}

export async function writeIntegration(store: Store, row: IntegrationRow, deleted = false): Promise<void> {
  await store.insert('integrations', [
    {
      ...row,
      ads_accounts: JSON.stringify(row.ads_accounts),
      consent: row.consent ? JSON.stringify(row.consent) : '',
      version: nextVersion(),
      is_deleted: deleted ? 1 : 0,
    },
  ])
}
