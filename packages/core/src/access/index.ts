// The public face of core's access domain: what other packages import as @visitor-id/core/access.
export {
  addressOrganization,
  addressPartnerOrganization,
  hasScope,
  managingPartnerId,
  requireKeyManagement,
  requireScope,
  type Scope,
  scopes,
  scopesGranting,
  userActedFor,
  userRoleIn,
} from './access.js'
export type { Principal } from './auth.js'
