// When a stored grant stops working, and what the integration's status says about it. A grant with
// a refresh token renews itself (integrations.ts, `accessToken`): it has no end the organization
// must act on. A grant without one (Meta's long-lived token, about 60 days) ends at `expires_at`:
// only a new authorization (installing again) renews it, so the integration asks for one a week
// ahead (`reconnect_soon`) and, once the date is past, needs it (`reauthorization_required`)
// without waiting for a call to the platform to be refused.

/** How long before a grant without a refresh token expires the integration asks to be reconnected. */
export const reconnectMarginMs = 7 * 24 * 3600_000

/** What `GET /integrations/{organizationId}` says of an installed integration. */
export type IntegrationStatus = 'connected' | 'reconnect_soon' | 'reauthorization_required'

/** The part of a stored integration (IntegrationRow) this reads. */
export interface StoredGrant {
  status: 'connected' | 'reauthorization_required'
  /** Sealed; empty when the provider gave none. */
  refresh_token: string
  /** ISO 8601; null when the provider said nothing. */
  expires_at: string | null
}

/**
 * When the stored grant stops working (ISO 8601), or null when it renews itself (a refresh token)
 * or the provider gave no expiry.
 * @example grantExpiresAt({ status: 'connected', refresh_token: '', expires_at: '2026-08-01T00:00:00.000Z' })
 * // '2026-08-01T00:00:00.000Z'
 */
export function grantExpiresAt(grant: StoredGrant): string | null {
  return grant.refresh_token ? null : grant.expires_at
}

/**
 * The status to show at `now` (ms since the epoch): a refusal already recorded stands; a grant
 * without a refresh token is `reauthorization_required` once past its expiry and `reconnect_soon`
 * within `marginMs` of it; anything else is `connected`.
 * @example integrationStatus(metaRow, Date.parse('2026-07-29T00:00:00Z')) // 'reconnect_soon' (3 days left)
 */
export function integrationStatus(
  grant: StoredGrant,
  now: number,
  marginMs: number = reconnectMarginMs,
): IntegrationStatus {
  if (grant.status === 'reauthorization_required') return 'reauthorization_required'
  const expiresAt = grantExpiresAt(grant)
  if (expiresAt === null) return 'connected'
  const left = Date.parse(expiresAt) - now
  if (left <= 0) return 'reauthorization_required'
  return left <= marginMs ? 'reconnect_soon' : 'connected'
}
