import type { MembershipRow, OrganizationRow, PartnerRow } from '../accounts/rows.js'
import { appError } from '../errors.js'
import type { Repositories } from '../repositories.js'
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
 * How a key reaches an organization other than its own through its user: only a key with `admin`
 * acts for its user there (a read/write key stays in its own organization), and only while the user
 * belongs to that organization. Read through the repositories, so from the read model: removing the
 * membership (DELETE member) drops every process's copy through pub/sub, ending the access at once.
 * `owner`: the user owns the organization (the key may also manage its keys); `member`: read and
 * write only; undefined: no access through the user.
 */
export async function userRoleIn(
  repos: Repositories,
  principal: Principal,
  organizationId: string,
): Promise<MembershipRow['role'] | undefined> {
  const userId = userActedFor(principal)
  if (!userId) return undefined
  const membership = await repos.memberships.get({ organization_id: organizationId, user_id: userId })
  return membership?.role
}

/**
 * The user a key acts for outside its own organization: its creating user, when the key holds
 * `admin`; otherwise none (a read/write key stays in its own organization).
 */
export function userActedFor(principal: Principal): string | undefined {
  if (principal.kind !== 'organization' || !principal.scopes.includes('admin')) return undefined
  return principal.userId ?? undefined
}

/**
 * The organization a principal asks for, if it may address it: its own organization; for an agency
 * key with agency scopes, one of the agency's sub-organizations; for a key with `admin`, any
 * organization its user belongs to (`userRoleIn`). Anything else is `resource_not_found` (404), so
 * other tenants' ids are indistinguishable from unknown ones.
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
  if (await userRoleIn(repos, principal, organization.id)) return organization
  throw notFound
}

/**
 * Throws `forbidden` (403) unless the key may create and revoke the keys of this organization, which
 * it addresses already: its own, an agency's sub-organization under `agency:write`, or one its user
 * owns. A user who is only a member of another organization cannot mint its keys through their own
 * key: such keys would outlive their removal from it.
 */
export async function requireKeyManagement(
  repos: Repositories,
  principal: Principal,
  organization: OrganizationRow,
): Promise<void> {
  requireScope(principal, 'admin')
  if (principal.kind !== 'organization') throw appError('forbidden')
  if (organization.id === principal.organizationId) return
  if (organization.agency_id === principal.organizationId && hasScope(principal.scopes, 'agency:write')) {
    return
  }
  if ((await userRoleIn(repos, principal, organization.id)) === 'owner') return
  throw appError(
    'forbidden',
    "The API key's user is a member, not the owner, of this organization: only the owner's keys manage its keys",
  )
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

/** The partner with this id; unknown and malformed ids are `resource_not_found`. */
export async function findPartner(repos: Repositories, partnerId: string): Promise<PartnerRow> {
  const partner = uuidPattern.test(partnerId)
    ? await repos.partners.get({ id: partnerId.toLowerCase() })
    : undefined
  if (!partner) throw appError('resource_not_found', 'Partner not found')
  return partner
}
