import {
  addressOrganization,
  appError,
  getVisitorProfile,
  type Repositories,
  requireScope,
  type Store,
} from '@visitor-id/core'
import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { principalOf } from '../auth.js'
import { parse } from '../validation.js'

const visitorParams = z.object({ organizationId: z.string().max(64), visitorId: z.string().max(64) })

export interface VisitorTrackingRoutesOptions {
  store: Store
  repos: Repositories
}

/** Spec section "Visitor tracking". */
export async function visitorTrackingRoutes(app: FastifyInstance, options: VisitorTrackingRoutesOptions) {
  app.get('/visitor-tracking/:organizationId/visitors/:visitorId', async (request) => {
    const principal = principalOf(request)
    requireScope(principal, 'read')
    const params = parse(visitorParams, request.params)
    const organization = await addressOrganization(options.repos, principal, params.organizationId, 'read')
    const config = await options.repos.pixelConfigs.get({ organization_id: organization.id })
    const profile = await getVisitorProfile(
      options.store,
      options.repos,
      organization.id,
      params.visitorId.toLowerCase(),
      {
        ipTracking: config?.ip_tracking ?? false,
      },
    )
    if (!profile) throw appError('resource_not_found', 'Visitor not found')
    return profile
  })
}
