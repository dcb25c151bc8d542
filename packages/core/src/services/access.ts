import { appError } from '../errors.js'
import type { OrganizationRow, Repositories } from '../store/entities.js'
import type { Principal } from './auth.js'

export type Scope = 'read' | 'write' | 'admin' | 'agency:read' | 'agency:write'

export const scopes: readonly Scope[] = ['read', 'write', 'admin', 'agency:read', 'agency:write']

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** `admin` grants the base scopes; agency scopes are granted only explicitly. */
export function hasScope(granted: readonly string[], needed: Scope): boolean {
  return scopesGranting(needed).some((scope) => granted.includes(scope))
}

/** The scopes a key may hold to pass a check of `needed`, any one of them: `admin` grants read and write. */
export function scopesGranting(needed: Scope): Scope[] {
  return needed === 'read' || needed === 'write' ? [needed, 'admin'] : [needed]
}

/** Throws `forbidden` unless the principal holds the scope. */
export function requireScope(principal: Principal, needed: Scope): void {
  if (!hasScope(principal.scopes, needed)) throw appError('forbidden')
}

/**
 * The organization a principal asks for, if it may address it: its own organization, or, for an
 * agency key with agency scopes, one of the agency's sub-organizations. Anything else is
 * `resource_not_found` (404), so other tenants' ids are indistinguishable from unknown ones.
 */
export async function addressOrganization(
  repos: Repositories,
  principal: Principal,
  organizationId: string,
  access: 'read' | 'write',
): Promise<OrganizationRow> {
  const notFound = appError('resource_not_found', 'Organization not found')
  if (principal.kind !== 'organization' || !uuidPattern.test(organizationId)) throw notFound
  const organization = await repos.organizations.get({ id: organizationId.toLowerCase() })
  if (!organization) throw notFound
  if (organization.id === principal.organizationId) return organization
  const agencyScope: Scope = access === 'read' ? 'agency:read' : 'agency:write'
  if (organization.agency_id === principal.organizationId && hasScope(principal.scopes, agencyScope)) {
    return organization
  }
  throw notFound
}

/**
 * The organization a partner key asks for, if the partner manages it: an organization of the
 * partner (`partner_id`), or a sub-organization of an agency of the partner (whatever the
 * sub-organization's own `partner_id`). Anything else, malformed ids and organization keys
 * included, is `resource_not_found` (404), as in `addressOrganization`. Reads go through the
 * repositories, so the read model serves them from memory.
 * @example const organization = await addressPartnerOrganization(repos, principal, params.organizationId)
 */
export async function addressPartnerOrganization(
  repos: Repositories,
  principal: Principal,
  organizationId: string,
): Promise<OrganizationRow> {
  const notFound = appError('resource_not_found', 'Organization not found')
  if (principal.kind !== 'partner' || !uuidPattern.test(organizationId)) throw notFound
  const organization = await repos.organizations.get({ id: organizationId.toLowerCase() })
  if (!organization) throw notFound
  if (organization.partner_id === principal.partnerId) return organization
  if (organization.agency_id) {
    const agency = await repos.organizations.get({ id: organization.agency_id })
    if (agency?.partner_id === principal.partnerId) return organization
  }
  throw notFound
}

/**
 * The partner that manages the organization: its own (`partner_id`), else its agency's, as partner
 * tenancy reads it; undefined when none does. From memory (the read model).
 */
export async function managingPartnerId(
  repos: Repositories,
  organizationId: string,
): Promise<string | undefined> {
  const organization = await repos.organizations.get({ id: organizationId })
  if (!organization) return undefined
  if (organization.partner_id) return organization.partner_id
  if (!organization.agency_id) return undefined
  return (await repos.organizations.get({ id: organization.agency_id }))?.partner_id ?? undefined
}
