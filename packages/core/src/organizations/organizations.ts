import { hasScope, userActedFor } from '../access/access.js'
import type { Principal } from '../access/auth.js'
import {
  type MembershipRow,
  type OrganizationRow,
  organizationsTable,
  type UserRow,
} from '../accounts/rows.js'
import { appError } from '../errors.js'
import type { Repositories } from '../repositories.js'
import type { Store } from '../store/client.js'
import { createOrganization, type InitialCredits } from './tenancy.js'

type OrganizationPrincipal = Extract<Principal, { kind: 'organization' }>

const now = () => new Date().toISOString()

// Lists are bounded: an agency with more sub-organizations than this pages through the partner API.
const listLimit = 1000

/** The caller's own organization; a key whose organization is gone is no longer valid. */
export async function callerOrganization(
  repos: Repositories,
  principal: OrganizationPrincipal,
): Promise<OrganizationRow> {
  const organization = await repos.organizations.get({ id: principal.organizationId })
  if (!organization) throw appError('unauthorized')
  return organization
}

export interface NewOrganizationInput {
  name: string
  domain?: string | undefined
  /** The grant its credit ledger opens with (`INITIAL_CREDITS`). */
  initialCredits?: InitialCredits | undefined
}

/**
 * Creates an organization owned by the key's user (a key without a user: the owner of the key's
 * organization). Under an agency key with `agency:write` it becomes a sub-organization of the agency;
 * otherwise it is a separate organization of the same partner. Either way the user's keys with
 * `admin` address it (`addressOrganization`), so its creator configures it and creates its keys.
 * @example const org = await createOrganizationFor(repos, principal, caller, { name: 'Acme' })
 */
export async function createOrganizationFor(
  repos: Repositories,
  principal: OrganizationPrincipal,
  caller: OrganizationRow,
  input: NewOrganizationInput,
): Promise<OrganizationRow> {
  const ownerUserId = principal.userId ?? (await ownerOf(repos, caller.id))
  if (!ownerUserId)
    throw appError('invalid_request', 'The API key belongs to no user who could own the organization')
  const asSubOrganization = caller.is_agency && hasScope(principal.scopes, 'agency:write')
  const { organization } = await createOrganization(repos, {
    name: input.name,
    ...(input.domain ? { domain: input.domain } : {}),
    ownerUserId,
    agencyId: asSubOrganization ? caller.id : null,
    partnerId: caller.partner_id,
    initialCredits: input.initialCredits,
  })
  return organization
}

async function ownerOf(repos: Repositories, organizationId: string): Promise<string | undefined> {
  const [owner] = await repos.memberships.find(
    { organization_id: organizationId, role: 'owner' },
    { limit: 1 },
  )
  return owner?.user_id
}

/**
 * The organizations the key may address (the rule of `addressOrganization`): its own first, then
 * (with `agency:read`) the agency's sub-organizations, then (with `admin`) the other organizations
 * its user belongs to, in the order the user joined them.
 */
export async function listAddressableOrganizations(
  repos: Repositories,
  principal: OrganizationPrincipal,
  caller: OrganizationRow,
): Promise<OrganizationRow[]> {
  const subOrganizations =
    caller.is_agency && hasScope(principal.scopes, 'agency:read')
      ? await repos.organizations.find(
          { agency_id: caller.id },
          { orderBy: { column: 'created_at' }, limit: listLimit },
        )
      : []
  const listed = [caller, ...subOrganizations]
  const seen = new Set(listed.map((organization) => organization.id))
  for (const organization of await userOrganizations(repos, principal)) {
    if (!seen.has(organization.id)) listed.push(organization)
    seen.add(organization.id)
  }
  return listed
}

/** The organizations the key's user belongs to, if the key acts for its user elsewhere (`userRoleIn`). */
async function userOrganizations(
  repos: Repositories,
  principal: OrganizationPrincipal,
): Promise<OrganizationRow[]> {
  const userId = userActedFor(principal)
  if (!userId) return []
  const memberships = await repos.memberships.find(
    { user_id: userId },
    { orderBy: { column: 'created_at' }, limit: listLimit },
  )
  const organizations = await Promise.all(
    memberships.map((membership) => repos.organizations.get({ id: membership.organization_id })),
  )
  return organizations.filter((organization) => organization !== undefined)
}

export interface OrganizationUpdate {
  name?: string | undefined
  /** A hostname; null or empty clears it. */
  domain?: string | null | undefined
}

/** Updates the name and/or the primary domain. */
export async function updateOrganization(
  repos: Repositories,
  organization: OrganizationRow,
  update: OrganizationUpdate,
): Promise<OrganizationRow> {
  return repos.organizations.save({
    ...organization,
    ...(update.name === undefined ? {} : { name: update.name }),
    ...(update.domain === undefined ? {} : { domain: update.domain ?? '' }),
    updated_at: now(),
  })
}

/** A member with the user's name and email. */
export interface Member {
  membership: MembershipRow
  user: UserRow | undefined
}

/** The organization's members, owner first. */
export async function listMembers(repos: Repositories, organizationId: string): Promise<Member[]> {
  const memberships = await repos.memberships.find(
    { organization_id: organizationId },
    { orderBy: { column: 'created_at' }, limit: listLimit },
  )
  memberships.sort((a, b) => Number(b.role === 'owner') - Number(a.role === 'owner'))
  const users = await Promise.all(memberships.map((m) => repos.users.get({ id: m.user_id })))
  return memberships.map((membership, index) => ({ membership, user: users[index] }))
}

/**
 * Removes a member and returns the remaining members. The owner cannot be removed
 * (`owner_not_removable`, 409); someone who is not a member is `resource_not_found`.
 */
export async function removeMember(
  repos: Repositories,
  organizationId: string,
  userId: string,
): Promise<Member[]> {
  const id = userId.toLowerCase()
  const membership = /^[0-9a-f-]{36}$/.test(id)
    ? await repos.memberships.get({ organization_id: organizationId, user_id: id })
    : undefined
  if (!membership) throw appError('resource_not_found', 'Member not found')
  if (membership.role === 'owner') throw appError('owner_not_removable')
  await repos.memberships.remove({ organization_id: organizationId, user_id: id })
  return listMembers(repos, organizationId)
}

/** Sets the maximum overage (a non-negative amount). */
export async function setMaxOverages(
  repos: Repositories,
  organization: OrganizationRow,
  maxOverages: number,
): Promise<OrganizationRow> {
  if (!Number.isFinite(maxOverages) || maxOverages < 0) {
    throw appError('invalid_request', 'maxOverages must be a non-negative number', {
      issues: [{ path: 'maxOverages', message: 'must be a non-negative number' }],
    })
  }
  return repos.organizations.save({ ...organization, max_overages: maxOverages, updated_at: now() })
}

/** Switches automatic phone enrichment; only `plus_employee` (B2B) organizations have it. */
export async function setAutoPhoneEnrichment(
  repos: Repositories,
  organization: OrganizationRow,
  enabled: boolean,
): Promise<OrganizationRow> {
  if (organization.product_type !== 'plus_employee') throw appError('not_plus_employee')
  return repos.organizations.save({ ...organization, auto_phone_enrichment: enabled, updated_at: now() })
}

/**
 * The organizations a partner manages: its own, and its agencies' sub-organizations, whatever their
 * own partner_id (the same rule as addressPartnerOrganization).
 */
const managedBy = `partner_id = {partnerId:UUID} OR agency_id IN (
  SELECT id FROM organizations FINAL WHERE partner_id = {partnerId:UUID} AND is_agency)`

/** The organizations a partner manages, a page at a time. */
export async function listPartnerOrganizations(
  store: Store,
  partnerId: string,
  page: { offset: number; limit: number },
): Promise<{ rows: OrganizationRow[]; total: number }> {
  const columns = Object.keys(organizationsTable.columns).join(', ')
  const params = { partnerId, limit: page.limit, offset: page.offset }
  // Ordered by creation, then id, so pages never overlap when two organizations share a millisecond.
  const [rows, counts] = await Promise.all([
    store.query<OrganizationRow>(
      `SELECT ${columns} FROM organizations FINAL WHERE ${managedBy}
       ORDER BY created_at, id LIMIT {limit:UInt32} OFFSET {offset:UInt64}`,
      params,
    ),
    store.query<{ n: number }>(`SELECT count() AS n FROM organizations FINAL WHERE ${managedBy}`, params),
  ])
  return { rows, total: Number(counts[0]?.n ?? 0) }
}
