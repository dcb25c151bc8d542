import type { ProductType } from '../accounts/rows.js'
import { createPartnerKey } from '../api-keys/issue.js'
import { newTrackingKey } from '../api-keys/keys.js'
import { grantCredits, initialGrantEntryId } from '../credits/ledger.js'
import { newId } from '../ids.js'
import type { Repositories } from '../repositories.js'
import type { Store } from '../store/client.js'

export interface CreateOrganizationInput {
  name: string
  domain?: string
  ownerUserId: string
  productType?: ProductType
  isAgency?: boolean
  agencyId?: string | null
  partnerId?: string | null
  /**
   * The grant the organization's credit ledger opens with (`INITIAL_CREDITS`), written to `store`
   * as the entry `initial`, so writing it again counts once. Absent or an amount of 0: no grant.
   */
  initialCredits?: InitialCredits | undefined
}

/** Where and how many credits a new organization starts with. */
export interface InitialCredits {
  store: Store
  amount: number
}

const now = () => new Date().toISOString()

/**
 * Creates an organization with its owner membership, its pixel config (tracking key) and, with
 * `initialCredits`, the opening grant of its credit ledger.
 * @example const org = await createOrganization(repos, { name: 'Acme', ownerUserId: user.id })
 */
export async function createOrganization(repos: Repositories, input: CreateOrganizationInput) {
  const at = now()
  const organization = await repos.organizations.save({
    id: newId(),
    name: input.name,
    domain: input.domain ?? '',
    product_type: input.productType ?? 'standard',
    is_agency: input.isAgency ?? false,
    agency_id: input.agencyId ?? null,
    partner_id: input.partnerId ?? null,
    max_overages: null,
    auto_phone_enrichment: false,
    created_by_user_id: input.ownerUserId,
    created_at: at,
    updated_at: at,
  })
  await repos.memberships.save({
    organization_id: organization.id,
    user_id: input.ownerUserId,
    role: 'owner',
    created_at: at,
    updated_at: at,
  })
  const pixelConfig = await repos.pixelConfigs.save({
    id: `px_${organization.id.replace(/-/g, '')}`,
    organization_id: organization.id,
    tracking_key: newTrackingKey(),
    allowed_referrers: [],
    verified_domains: input.domain ? [input.domain] : [],
    ip_tracking: true,
    respect_privacy_signals: false,
    form_capture: false,
    icp_settings: '{}',
    created_at: at,
    updated_at: at,
  })
  if (input.initialCredits && input.initialCredits.amount > 0) {
    await grantCredits(input.initialCredits.store, {
      organizationId: organization.id,
      amount: input.initialCredits.amount,
      reason: 'initial credits',
      entryId: initialGrantEntryId,
    })
  }
  return { organization, pixelConfig }
}

/** Creates a user (the owner of organizations and keys). */
export async function createUser(repos: Repositories, input: { email: string; name?: string }) {
  const at = now()
  return repos.users.save({
    id: newId(),
    email: input.email,
    name: input.name ?? '',
    created_at: at,
    updated_at: at,
  })
}

/** Creates a partner and its first partner key (scope `admin`); the plain key is returned once. */
export async function createPartner(repos: Repositories, input: { name: string }) {
  const at = now()
  const partner = await repos.partners.save({ id: newId(), name: input.name, created_at: at, updated_at: at })
  const { plainKey } = await createPartnerKey(repos, {
    partnerId: partner.id,
    name: 'Partner key',
    scopes: ['admin'],
  })
  return { partner, plainKey }
}
