// Spec section "Partner: custom domain": the partner's tracking domain, its DNS verification, and
// (once verified) the host its organizations' snippets use (docs/decisions.md, "Partner custom domain").
import {
  createDnsResolver,
  normalizeDomain,
  presentDomain,
  readPartnerDomain,
  setPartnerDomain,
  verifyPartnerDomain,
} from '@visitor-id/core/custom-domain'
import { appError } from '@visitor-id/core/errors'
import { z } from 'zod'
import { type ApiServices, defineRoute, type Route } from '../route-definition.js'
import { partnerPrincipal } from './context.js'

const dnsRecord = z.object({
  type: z.literal('CNAME'),
  name: z.string(),
  value: z.string(),
  status: z.enum(['pending', 'verified', 'failed']).optional().describe('On the verification read'),
})

const domainSchema = z
  .object({
    domain: z.string(),
    verified: z.boolean(),
    verificationRecord: z.string().describe('The DNS record to create, as a zone file line'),
    cnameTarget: z.string(),
    dnsRecords: z.array(dnsRecord),
    instructions: z.string().describe('What to do, step by step'),
  })
  .describe('CustomDomain')

/** The CNAME target: CUSTOM_DOMAIN_TARGET, else PUBLIC_URL's host; without either, 503-worthy config. */
function cnameTarget(services: ApiServices): string {
  const target = services.config.customDomainTarget
  if (!target) {
    throw appError(
      'invalid_request',
      'Custom domains need CUSTOM_DOMAIN_TARGET or PUBLIC_URL on the server: ask its operator',
    )
  }
  return target
}

const noDomain =
  'No custom domain is set. Set one with PUT /partner/domain, create the CNAME record it answers ' +
  'with, then verify.'

/** Spec section "Partner: custom domain". */
export const partnerDomainRoutes: Route[] = [
  defineRoute({
    operationId: 'setPartnerDomain',
    method: 'PUT',
    path: '/partner/domain',
    auth: 'partner',
    scope: 'write',
    tenancy: 'none',
    tag: 'Partner custom domain',
    summary: 'Set the custom tracking domain',
    description:
      "A subdomain (`track.example.com`) or an apex domain; not an IP address, not the service's own " +
      'host, at most 253 characters. Replacing the domain starts its verification over. Then create ' +
      'the CNAME record it answers with and call `POST /partner/domain/verify` (DNS can take up to 48 ' +
      'hours to propagate). A domain another partner verified: 409.',
    body: z.strictObject({ domain: z.string().min(1).max(300) }),
    response: { status: 200, description: 'The domain, not verified yet', schema: domainSchema },
    errors: ['conflict'],
    example: () => ({ body: { domain: 'track.example.com' } }),
    async handler({ principal, body, services }) {
      const target = cnameTarget(services)
      const own = services.config.publicUrl ? new URL(services.config.publicUrl).hostname : undefined
      const domain = normalizeDomain(body.domain, { ownHost: [own, target].filter((h) => h !== undefined) })
      const row = await setPartnerDomain(
        services.store,
        partnerPrincipal(principal).partnerId,
        domain,
        target,
      )
      return presentDomain(row)
    },
  }),
  defineRoute({
    operationId: 'getPartnerDomainVerification',
    method: 'GET',
    path: '/partner/domain/verification',
    auth: 'partner',
    scope: 'read',
    tenancy: 'none',
    tag: 'Partner custom domain',
    summary: 'The domain with its verification status and instructions',
    description:
      "Each record's `status`: `pending` (not checked yet), `verified`, or `failed` (with why in " +
      '`instructions`). Before a domain is set: `domain: ""`, no records, and instructions to set one.',
    response: { status: 200, description: 'The domain', schema: domainSchema },
    errors: [],
    example: () => ({}),
    async handler({ principal, services }) {
      const row = await readPartnerDomain(services.store, partnerPrincipal(principal).partnerId)
      if (!row) {
        return {
          domain: '',
          verified: false,
          verificationRecord: '',
          cnameTarget: services.config.customDomainTarget ?? '',
          dnsRecords: [],
          instructions: noDomain,
        }
      }
      return presentDomain(row, { withStatus: true })
    },
  }),
  defineRoute({
    operationId: 'verifyPartnerDomain',
    method: 'POST',
    path: '/partner/domain/verify',
    auth: 'partner',
    scope: 'write',
    tenancy: 'none',
    tag: 'Partner custom domain',
    summary: "Check the domain's DNS record now",
    description:
      "Looks the CNAME up (for an apex domain, A/AAAA records equal to the target's count as a " +
      'flattened CNAME) through the system resolver or DNS_SERVERS. On failure `message` says what ' +
      'the DNS answered instead.',
    response: {
      status: 200,
      description: 'Whether the record was found',
      schema: z.object({ success: z.boolean(), verified: z.boolean(), message: z.string().optional() }),
    },
    errors: ['conflict'],
    example: () => ({}),
    async handler({ principal, services }) {
      const { partnerId } = partnerPrincipal(principal)
      if (!(await readPartnerDomain(services.store, partnerId))) {
        return { success: false, verified: false, message: noDomain }
      }
      return verifyPartnerDomain(
        services.store,
        partnerId,
        createDnsResolver(services.config.ingest.dnsServers),
      )
    },
  }),
]
