import { issueKey, type KeyKind, keyExpiry, newTrackingKey } from '../api-keys/keys.js'
import { grantCredits, initialGrantEntryId } from '../credits/ledger.js'
import { appError } from '../errors.js'
import { newId } from '../ids.js'
import type { Store } from '../store/client.js'
import type { ApiKeyRow, PartnerRow, ProductType, Repositories } from '../store/entities.js'
import type { Scope } from './access.js'

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

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** The partner with this id; unknown and malformed ids are `resource_not_found`. */
export async function findPartner(repos: Repositories, partnerId: string): Promise<PartnerRow> {
  const partner = uuidPattern.test(partnerId)
    ? await repos.partners.get({ id: partnerId.toLowerCase() })
    : undefined
  if (!partner) throw appError('resource_not_found', 'Partner not found')
  return partner
}

/** The scopes a partner key may carry: agency scopes belong to agency organizations' keys only. */
export const partnerKeyScopes: readonly Scope[] = ['read', 'write', 'admin']

export interface CreatePartnerKeyInput {
  partnerId: string
  name: string
  /** Among `read`, `write`, `admin`; at least one. */
  scopes: readonly string[]
  /** RFC 3339, in the future and within 10 years; absent or null: never expires. */
  expiresAt?: string | null | undefined
}

/**
 * Creates a key of a partner; the plain key (`bsk_partner_` + 32 hex) is in the result only.
 * Unknown partner: `resource_not_found`; an agency or unknown scope, no scope, an empty name or a
 * bad expiry: `invalid_request`.
 * @example const { apiKey, plainKey } = await createPartnerKey(repos, { partnerId, name: 'ci', scopes: ['read'] })
 */
export async function createPartnerKey(
  repos: Repositories,
  input: CreatePartnerKeyInput,
  nowMs = Date.now(),
) {
  const partner = await findPartner(repos, input.partnerId)
  const invalid = (path: string, message: string) =>
    appError('invalid_request', `${path} ${message}`, { issues: [{ path, message }] })
  const name = input.name.trim()
  if (name.length === 0 || name.length > 100) throw invalid('name', 'must be 1 to 100 characters')
  const scopes = [...new Set(input.scopes)]
  if (scopes.length === 0) throw invalid('scopes', 'must name at least one of read, write, admin')
  for (const scope of scopes) {
    if (scope.startsWith('agency:')) {
      throw invalid(
        'scopes',
        `${scope} is an agency organization's scope; a partner key takes read, write or admin`,
      )
    }
    if (!partnerKeyScopes.includes(scope as Scope)) {
      throw invalid('scopes', `${scope} is not a scope; a partner key takes read, write or admin`)
    }
  }
  const expiresAt = keyExpiry(input.expiresAt, nowMs)
  return saveKey(repos, 'partner', {
    organization_id: null,
    partner_id: partner.id,
    created_by_user_id: null,
    name,
    scopes,
    expires_at: expiresAt,
  })
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
  return saveKey(repos, 'organization', {
    organization_id: input.organizationId,
    partner_id: null,
    created_by_user_id: input.createdByUserId,
    name: input.name,
    scopes: input.scopes,
    expires_at: input.expiresAt ?? null,
  })
}

type KeyFields = Pick<
  ApiKeyRow,
  'organization_id' | 'partner_id' | 'created_by_user_id' | 'name' | 'scopes' | 'expires_at'
>

/** Issues a key of either kind and stores its row (hash and prefix only). */
async function saveKey(repos: Repositories, kind: KeyKind, fields: KeyFields) {
  const at = now()
  const key = issueKey(kind)
  const row = await repos.apiKeys.save({
    id: `key_${newId().replace(/-/g, '')}`,
    kind,
    ...fields,
    key_hash: key.keyHash,
    key_prefix: key.keyPrefix,
    status: 'active',
    last_used_at: null,
    created_at: at,
    updated_at: at,
  })
  return { apiKey: row, plainKey: key.plainKey }
}
