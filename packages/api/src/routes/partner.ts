// Partner routes (X-Partner-API-Key). Only what the API frame needs so far; the spec's partner
// sections (ICP configs, domain, webhooks, email preferences) come with their issues.
import { listPartnerOrganizations } from '@visitor-id/core'
import { defineRoute, type Route } from '../route-definition.js'
import { pageOf, paginated, paginationQuery } from '../schemas/common.js'
import { organizationSchema } from '../schemas/resources.js'
import { partnerPrincipal } from './context.js'
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
]
