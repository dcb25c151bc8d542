// Stored rows (snake_case) -> REST bodies (camelCase). Secrets (key hashes) never pass through here.
import type { OrganizationRow } from '@visitor-id/core/accounts'
import type { ApiKeyRow } from '@visitor-id/core/api-keys'
import type { Member } from '@visitor-id/core/organizations'
import { storedTime } from '@visitor-id/core/store'
import { type PixelConfigRow, parseIcpSettings } from '@visitor-id/core/visitor-tracking'
import { renderSnippet } from '@visitor-id/pixel'

/** Any timestamp the store returns, as ISO 8601 UTC with milliseconds. */
export const iso = storedTime

const isoOrNull = (value: string | null) => (value ? iso(value) : null)

/** An API key as the API shows it: never its hash. */
export function presentApiKey(row: ApiKeyRow) {
  return {
    id: row.id,
    organizationId: row.organization_id ?? '',
    createdByUserId: row.created_by_user_id,
    name: row.name,
    keyPrefix: row.key_prefix,
    scopes: row.scopes,
    status: row.status,
    expiresAt: isoOrNull(row.expires_at),
    lastUsedAt: isoOrNull(row.last_used_at),
    createdAt: iso(row.created_at),
  }
}

/** An organization as the API shows it, with its credit balance (the sum of its ledger). */
export function presentOrganization(row: OrganizationRow, identificationCredits: number) {
  return {
    id: row.id,
    name: row.name,
    domain: row.domain || null,
    productType: row.product_type,
    isAgency: row.is_agency,
    agencyId: row.agency_id,
    maxOverages: row.max_overages,
    autoPhoneEnrichmentEnabled: row.auto_phone_enrichment,
    identificationCredits,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  }
}

/** The membership list (the reply of a member removal). */
export function presentMembers(organizationId: string, members: Member[]) {
  return {
    organizationId,
    members: members.map(({ membership, user }) => ({
      userId: membership.user_id,
      role: membership.role,
      email: user?.email ?? null,
      name: user?.name || null,
      joinedAt: iso(membership.created_at),
    })),
  }
}

/** The pixel config with its install information; `host` is the public base URL of the collector. */
export function presentPixelConfig(row: PixelConfigRow, host: string) {
  const options = { host, trackingKey: row.tracking_key }
  return {
    id: row.id,
    organizationId: row.organization_id,
    trackingKey: row.tracking_key,
    allowedReferrers: row.allowed_referrers,
    verifiedDomains: row.verified_domains,
    ipTracking: row.ip_tracking,
    respectPrivacySignals: row.respect_privacy_signals,
    formCapture: row.form_capture,
    icpSettings: parseIcpSettings(row),
    scriptTag: {
      scriptUrl: `${host.replace(/\/+$/, '')}/p.js`,
      jsSnippet: renderSnippet('jsSnippet', options),
      tagManagerSnippet: renderSnippet('tagManager', options),
    },
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  }
}
