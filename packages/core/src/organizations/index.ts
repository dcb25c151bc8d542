// The public face of core's organizations domain: what other packages import as @visitor-id/core/organizations.
export { type BootstrapFile, type BootstrapResult, bootstrapIfEmpty } from './bootstrap.js'
export {
  callerOrganization,
  createOrganizationFor,
  listAddressableOrganizations,
  listMembers,
  listPartnerOrganizations,
  type Member,
  type NewOrganizationInput,
  type OrganizationUpdate,
  removeMember,
  setAutoPhoneEnrichment,
  setMaxOverages,
  updateOrganization,
} from './organizations.js'
export {
  type CreateOrganizationInput,
  createOrganization,
  createPartner,
  createUser,
  type InitialCredits,
} from './tenancy.js'
