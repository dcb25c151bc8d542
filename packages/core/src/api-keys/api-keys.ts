import { findPartner, hasScope, requireKeyManagement, type Scope } from '../access/access.js'
import type { Principal } from '../access/auth.js'
import type { OrganizationRow } from '../accounts/rows.js'
import { appError } from '../errors.js'
import type { Repositories } from '../repositories.js'
import type { Store } from '../store/client.js'
import { createApiKey } from './issue.js'
import { readKeyUsage } from './key-usage.js'
import { type KeyKind, keyExpiry } from './keys.js'
import type { ApiKeyRow } from './rows.js'

const invalid = (path: string, message: string) =>
  appError('invalid_request', `${path} ${message}`, { issues: [{ path, message }] })

/**
 * The organization's keys, revoked ones included, oldest first, with `last_used_at` from usage.
 * @example const keys = await listApiKeys(store, repos, organization.id)
 */
export async function listApiKeys(store: Store, repos: Repositories, organizationId: string) {
  const rows = await repos.apiKeys.find(
    { organization_id: organizationId, kind: 'organization' },
    { orderBy: { column: 'created_at' }, limit: 10_000 },
  )
  const usage = await readKeyUsage(
    store,
    rows.map((row) => row.id),
  )
  return rows.map((row) => withUsage(row, usage.get(row.id)))
}

function withUsage(row: ApiKeyRow, used: string | undefined): ApiKeyRow {
  if (!used) return row
  if (row.last_used_at && Date.parse(row.last_used_at) >= Date.parse(used)) return row
  return { ...row, last_used_at: used }
}

export interface NewApiKeyInput {
  name: string
  scopes: readonly Scope[]
  /** RFC 3339; must be in the future. */
  expiresAt?: string | null | undefined
}

/**
 * Creates a key for an organization the caller may address and manage (`requireKeyManagement`:
 * not one its user is only a member of). A key cannot grant a scope its creator lacks
 * (`forbidden`), and agency scopes exist only on agency organizations (`invalid_request`).
 * The new key belongs to that organization and acts for the creating key's user.
 * @example const { apiKey, plainKey } = await createOrganizationApiKey(repos, principal, org, { name: 'ci', scopes: ['read'] })
 */
export async function createOrganizationApiKey(
  repos: Repositories,
  principal: Principal,
  organization: OrganizationRow,
  input: NewApiKeyInput,
  now = Date.now(),
) {
  await requireKeyManagement(repos, principal, organization)
  const scopes = [...new Set(input.scopes)]
  const agencyScope = scopes.find((scope) => scope.startsWith('agency:'))
  if (agencyScope && !organization.is_agency) {
    throw invalid('scopes', `${agencyScope} is only available to agency organizations`)
  }
  const beyond = scopes.find((scope) => !hasScope(principal.scopes, scope))
  if (beyond) throw appError('forbidden', `The API key cannot grant the scope ${beyond}, which it lacks`)
  const expiresAt = keyExpiry(input.expiresAt, now)
  return createApiKey(repos, {
    organizationId: organization.id,
    createdByUserId: principal.kind === 'organization' ? principal.userId : null,
    name: input.name,
    scopes,
    expiresAt,
  })
}

/**
 * Revokes an organization's key. Saved through the read model, the change reaches every process's
 * copy at once, so the key gets 401 everywhere. Revoking a revoked key succeeds again (and announces
 * again). Another organization's key is `resource_not_found`.
 */
export async function revokeApiKey(
  repos: Repositories,
  organizationId: string,
  keyId: string,
): Promise<void> {
  await revokeKey(repos, { kind: 'organization', id: organizationId }, keyId)
}

/**
 * The partner's keys, revoked and expired ones included, oldest first. Unknown partner:
 * `resource_not_found`.
 * @example const keys = await listPartnerKeys(repos, partnerId)
 */
export async function listPartnerKeys(repos: Repositories, partnerId: string): Promise<ApiKeyRow[]> {
  const partner = await findPartner(repos, partnerId)
  return repos.apiKeys.find(
    { partner_id: partner.id, kind: 'partner' },
    { orderBy: { column: 'created_at' }, limit: 10_000 },
  )
}

/**
 * Revokes a partner's key, as `revokeApiKey` does an organization's: at once in every process,
 * again if already revoked. An unknown partner, another partner's key or an organization key:
 * `resource_not_found`.
 * @example const revoked = await revokePartnerKey(repos, partnerId, 'key_...')
 */
export async function revokePartnerKey(
  repos: Repositories,
  partnerId: string,
  keyId: string,
): Promise<ApiKeyRow> {
  const partner = await findPartner(repos, partnerId)
  return revokeKey(repos, { kind: 'partner', id: partner.id }, keyId)
}

/** Revokes a key of either kind if it belongs to the owner (an organization or a partner). */
async function revokeKey(
  repos: Repositories,
  owner: { kind: KeyKind; id: string },
  keyId: string,
): Promise<ApiKeyRow> {
  const row = keyId.length <= 64 ? await repos.apiKeys.get({ id: keyId }) : undefined
  const ownerId = row?.kind === 'organization' ? row.organization_id : row?.partner_id
  if (!row || row.kind !== owner.kind || ownerId !== owner.id) {
    throw appError('resource_not_found', 'API key not found')
  }
  // Saved again when already revoked: the save is what announces it, so a repeat reaches a process
  // that missed the first announcement.
  return repos.apiKeys.save({ ...row, status: 'revoked', updated_at: new Date().toISOString() })
}
