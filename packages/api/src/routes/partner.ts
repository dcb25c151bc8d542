// Partner routes (X-Partner-API-Key). Only what the API frame needs so far; the spec's partner
// sections (ICP configs, domain, webhooks, email preferences) come with their issues.
import { listPartnerOrganizations } from '@visitor-id/core/organizations'
import { startPhoneSearch } from '@visitor-id/core/phone-search'
import { z } from 'zod'
import { defineRoute, type Route } from '../route-definition.js'
import { organizationIdParam, pageOf, paginated, paginationQuery, pathId } from '../schemas/common.js'
import {
  organizationSchema,
  phoneSearchDescription,
  phoneSearchErrors,
  phoneSearchReplySchema,
} from '../schemas/resources.js'
import { addressed, partnerPrincipal } from './context.js'
import { organizationBodies } from './organizations.js'

/** Partner routes (X-Partner-API-Key). */
export const partnerRoutes: Route[] = [
  defineRoute({
    operationId: 'listPartnerOrganizations',
    method: 'GET',
    path: '/partner/organizations',
    auth: 'partner',
    scope: 'read',
    tenancy: 'none',
    tag: 'Partner',
    summary: 'List the organizations the partner manages',
    description: "Includes its agencies' sub-organizations; oldest first, paginated.",
    query: paginationQuery,
    response: {
      status: 200,
      description: 'One page of organizations',
      schema: paginated(organizationSchema),
    },
    errors: [],
    example: () => ({ query: { page: '1', limit: '25' } }),
    async handler({ principal, query, services }) {
      const { partnerId } = partnerPrincipal(principal)
      const { rows, total } = await listPartnerOrganizations(services.store, partnerId, {
        offset: (query.page - 1) * query.limit,
        limit: query.limit,
      })
      return pageOf(await organizationBodies(services.store, rows), query, total)
    },
  }),
  defineRoute({
    operationId: 'partnerSearchVisitorPhoneNumber',
    method: 'POST',
    path: '/partner/organizations/{organizationId}/visitors/{visitorId}/phone-number-search',
    auth: 'partner',
    scope: 'write',
    tenancy: 'partner-organization-param',
    tag: 'Partner',
    summary: 'Start a search for the phone number of a visitor of a managed organization',
    description: `No body; the organization and visitor are in the path. The same rules and reply as \`POST /visitor-tracking/phone-number-search\`. ${phoneSearchDescription}`,
    params: z.object({
      organizationId: organizationIdParam,
      visitorId: pathId('Visitor id (UUID)'),
    }),
    response: { status: 200, description: 'The search started', schema: phoneSearchReplySchema },
    errors: phoneSearchErrors,
    example: (ids) => ({ params: { organizationId: ids.organizationId, visitorId: ids.personVisitorId } }),
    async handler({ organization, params, services }) {
      const started = await startPhoneSearch(services.phone, {
        organization: addressed(organization),
        visitorId: params.visitorId,
      })
      return { phoneNumberSearchStatus: started.status, visitorId: started.visitorId }
    },
  }),
]
