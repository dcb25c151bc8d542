import type { Principal } from '@visitor-id/core/access'
import type { OrganizationRow } from '@visitor-id/core/accounts'
import { appError } from '@visitor-id/core/errors'

/** The organization resolved by the route's tenancy; its absence is a bug in the route table. */
export function addressed(organization: OrganizationRow | undefined): OrganizationRow {
  if (!organization) throw new Error('This route has no resolved organization: check its tenancy')
  return organization
}

/** The principal of an organization route (partner keys never reach one). */
export function callerPrincipal(principal: Principal): Extract<Principal, { kind: 'organization' }> {
  if (principal.kind !== 'organization') throw appError('unauthorized')
  return principal
}

/** The principal of a partner route. */
export function partnerPrincipal(principal: Principal): Extract<Principal, { kind: 'partner' }> {
  if (principal.kind !== 'partner') throw appError('unauthorized')
  return principal
}
