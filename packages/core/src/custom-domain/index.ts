// The public face of core's custom-domain domain: what other packages import as @visitor-id/core/custom-domain.
export {
  type DomainResource,
  type DomainStatus,
  findVerifiedDomain,
  normalizeDomain,
  type PartnerDomainRow,
  presentDomain,
  readPartnerDomain,
  recheckVerifiedDomains,
  setPartnerDomain,
  type VerifyResult,
  verifyPartnerDomain,
} from './custom-domain.js'
export { createDnsResolver, type DnsResolver } from './dns-check.js'
