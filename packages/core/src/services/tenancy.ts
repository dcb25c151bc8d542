import { newId } from '../ids.js'
import type { ProductType, Repositories } from '../store/entities.js'
import { issueKey, newTrackingKey } from './keys.js'

export interface CreateOrganizationInput {
  name: string
  domain?: string
  ownerUserId: string
  productType?: ProductType
  isAgency?: boolean
  agencyId?: string | null
  partnerId?: string | null
}

const now = () => new Date().toISOString()

/**
 * Creates an organization with its owner membership and its pixel config (tracking key).
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

/** Creates a partner and its first partner key; the plain key is returned once. */
export async function createPartner(repos: Repositories, input: { name: string }) {
  const at = now()
  const partner = await repos.partners.save({ id: newId(), name: input.name, created_at: at, updated_at: at })
  const key = issueKey('partner')
  await repos.apiKeys.save({
    id: `key_${newId().replace(/-/g, '')}`,
    kind: 'partner',
    organization_id: null,
    partner_id: partner.id,
    created_by_user_id: null,
    name: 'Partner key',
    key_hash: key.keyHash,
    key_prefix: key.keyPrefix,
    scopes: ['admin'],
    status: 'active',
    expires_at: null,
    last_used_at: null,
    created_at: at,
    updated_at: at,
  })
  return { partner, plainKey: key.plainKey }
}

export interface CreateApiKeyInput {
  organizationId: string
  createdByUserId: string | null
  name: string
  scopes: string[]
  expiresAt?: string | null
}

/** Creates an organization API key; the plain key is in the result only. */
export async function createApiKey(repos: Repositories, input: CreateApiKeyInput) {
  const at = now()
  const key = issueKey('organization')
  const row = await repos.apiKeys.save({
    id: `key_${newId().replace(/-/g, '')}`,
    kind: 'organization',
    organization_id: input.organizationId,
    partner_id: null,
    created_by_user_id: input.createdByUserId,
    name: input.name,
    key_hash: key.keyHash,
    key_prefix: key.keyPrefix,
    scopes: input.scopes,
    status: 'active',
    expires_at: input.expiresAt ?? null,
    last_used_at: null,
    created_at: at,
    updated_at: at,
  })
  return { apiKey: row, plainKey: key.plainKey }
}
