import { appError } from '../errors.js'
import type { Store } from '../store/client.js'
import type { ApiKeyRow, OrganizationRow, Repositories } from '../store/entities.js'
import { hasScope, type Scope } from './access.js'
import type { Principal } from './auth.js'
import { readKeyUsage } from './key-usage.js'
import { createApiKey } from './tenancy.js'

/** Keys further in the future than this are refused: a key that never expires says so with null. */
const maxExpiryMs = 10 * 365 * 24 * 3600_000

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
 * Creates a key for an organization the caller may address. A key cannot grant a scope its creator
 * lacks (`forbidden`), and agency scopes exist only on agency organizations (`invalid_request`).
 * @example const { apiKey, plainKey } = await createOrganizationApiKey(repos, principal, org, { name: 'ci', scopes: ['read'] })
 */
export async function createOrganizationApiKey(
  repos: Repositories,
  principal: Principal,
  organization: OrganizationRow,
  input: NewApiKeyInput,
  now = Date.now(),
) {
  const scopes = [...new Set(input.scopes)]
  const agencyScope = scopes.find((scope) => scope.startsWith('agency:'))
  if (agencyScope && !organization.is_agency) {
    throw invalid('scopes', `${agencyScope} is only available to agency organizations`)
  }
  const beyond = scopes.find((scope) => !hasScope(principal.scopes, scope))
  if (beyond) throw appError('forbidden', `The API key cannot grant the scope ${beyond}, which it lacks`)
  let expiresAt: string | null = null
  if (input.expiresAt) {
    const at = Date.parse(input.expiresAt)
    if (Number.isNaN(at)) throw invalid('expiresAt', 'must be an RFC 3339 date-time')
    if (at <= now) throw invalid('expiresAt', 'must be in the future')
    if (at > now + maxExpiryMs) throw invalid('expiresAt', 'must be within 10 years')
    expiresAt = new Date(at).toISOString()
  }
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
  const row = keyId.length <= 64 ? await repos.apiKeys.get({ id: keyId }) : undefined
  if (row?.kind !== 'organization' || row.organization_id !== organizationId) {
    throw appError('resource_not_found', 'API key not found')
  }
  // Saved again when already revoked: the save is what announces it, so a repeat reaches a process
  // that missed the first announcement.
  await repos.apiKeys.save({ ...row, status: 'revoked', updated_at: new Date().toISOString() })
}
