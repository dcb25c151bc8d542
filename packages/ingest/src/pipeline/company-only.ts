// Company-only mode (an organization's privacy settings): a hit whose IP country is one of the
// organization's company-only countries identifies its company from the network, never a person,
// and keeps no IP address. The settings are an entity served from memory, so reading them per hit
// costs a map lookup.
import { companyOnlyCountries, type PrivacySettingsRow } from '@visitor-id/core/privacy'
import type { EntityRepository } from '@visitor-id/core/store'
import type { PageViewRow } from '../page-view-row.js'

export type PrivacySettingsSource = Pick<EntityRepository<PrivacySettingsRow>, 'get'>

/**
 * Applies the mode to an enriched row (its `country` comes from the network step). Returns
 * 'company_only' for an identify hit, which must then be dropped; otherwise clears the IP address.
 * An unknown country (no IP data, a private address) is never company-only.
 */
export async function applyCompanyOnly(
  row: PageViewRow,
  settings: PrivacySettingsSource,
): Promise<'company_only' | undefined> {
  if (!row.country) return undefined
  const countries = companyOnlyCountries(await settings.get({ organization_id: row.organization_id }))
  if (!countries.includes(row.country)) return undefined
  if (row.type === 'identify') return 'company_only'
  row.ip = ''
  return undefined
}
