// The public face of core's accounts domain: what other packages import as @visitor-id/core/accounts.
export type {
  MembershipRow,
  OrganizationRow,
  PartnerRow,
  ProductType,
  UserRow,
} from './rows.js'
