// Spec section "ICP configs, organization-level". A config is a filter (docs/decisions.md, "Contacts, lists
// and audiences"); creating it, or changing its filter or isActive, scores every visitor again.
import type { OrganizationRow } from '@visitor-id/core/accounts'
import {
  addIcpConfig,
  changeIcpConfig,
  getIcpConfig,
  type IcpConfigKind,
  type IcpConfigRow,
  icpStats,
  listIcpConfigs,
  recalculationStatus,
  removeIcpConfig,
  requestRecalculation,
} from '@visitor-id/core/icp'
import { z } from 'zod'
import { iso } from '../presenters.js'
import { type ApiServices, defineRoute, type Route } from '../route-definition.js'
import { optionalRangeQuery, organizationIdParam } from '../schemas/common.js'
import {
  organizationIcpConfigCreate,
  organizationIcpConfigSchema,
  organizationIcpConfigUpdate,
  recalculationSchema,
  slugParams,
} from '../schemas/icp.js'
import { addressed } from './context.js'

const organizationParams = z.object({ organizationId: organizationIdParam })
const path = '/organizations/{organizationId}/icp-configs'
const exampleFilter = {
  company: {
    industries: ['SaaS', 'Fintech'],
    employee_size_ranges: ['51-200', '201-500'],
    countries: ['US'],
  },
  contact: { job_titles: ['CTO', 'VP Engineering'], seniorities: ['c-level', 'vp'] },
}

/** The config of this kind with this slug in the addressed organization, or 404. */
export function configOf(
  services: ApiServices,
  organization: OrganizationRow | undefined,
  slug: string,
  kind: IcpConfigKind = 'organization',
): Promise<IcpConfigRow> {
  return getIcpConfig(services.repos, addressed(organization).id, kind, slug)
}

/** A config's last recalculation, with ISO 8601 times. */
export async function presentRecalculation(services: ApiServices, config: IcpConfigRow) {
  const status = await recalculationStatus(services.coordination, config.id)
  if (!status) return null
  return {
    ...status,
    requestedAt: iso(status.requestedAt),
    startedAt: status.startedAt && iso(status.startedAt),
    finishedAt: status.finishedAt && iso(status.finishedAt),
  }
}

/** A config as the organization API shows it, with its last recalculation. */
async function present(services: ApiServices, config: IcpConfigRow) {
  return {
    slug: config.slug,
    name: config.name,
    filter: JSON.parse(config.filter || '{}') as object,
    isActive: config.is_active,
    priority: config.priority,
    createdAt: iso(config.created_at),
    updatedAt: iso(config.updated_at),
    recalculation: await presentRecalculation(services, config),
  }
}

/** Spec section "ICP configs, organization-level". */
export const icpConfigRoutes: Route[] = [
  defineRoute({
    operationId: 'listIcpConfigs',
    method: 'GET',
    path,
    auth: 'organization',
    scope: 'read',
    tenancy: 'organization-param',
    tag: 'ICP configs',
    summary: "List the organization's ICP configs",
    description: 'Lower priority value first, then oldest first.',
    params: organizationParams,
    response: { status: 200, description: 'The configs', schema: z.array(organizationIcpConfigSchema) },
    errors: [],
    example: (ids) => ({ params: { organizationId: ids.organizationId } }),
    async handler({ organization, services }) {
      const configs = await listIcpConfigs(services.repos, addressed(organization).id, 'organization')
      return Promise.all(configs.map((config) => present(services, config)))
    },
  }),
  defineRoute({
    operationId: 'createIcpConfig',
    method: 'POST',
    path,
    auth: 'organization',
    scope: 'write',
    tenancy: 'organization-param',
    tag: 'ICP configs',
    summary: 'Create an ICP config',
    description:
      'Each non-empty filter key is a condition (membership in the listed values, case-insensitive; ' +
      '`job_titles`: a substring of the title); keys combine with AND. Company-side keys decide the ' +
      "visitor's match, contact-side keys its persona match. The new config scores every visitor at once " +
      '(see `recalculation`). Without a slug, one is derived from the name (`-2`, `-3`... when taken).',
    params: organizationParams,
    body: organizationIcpConfigCreate,
    response: { status: 201, description: 'The created config', schema: organizationIcpConfigSchema },
    errors: ['conflict'],
    example: (ids) => ({
      params: { organizationId: ids.organizationId },
      body: { name: 'Enterprise US', filter: exampleFilter, priority: 1 },
    }),
    async handler({ organization, body, services }) {
      const config = await addIcpConfig(services, addressed(organization).id, 'organization', body)
      return present(services, config)
    },
  }),
  defineRoute({
    operationId: 'getIcpConfigStats',
    method: 'GET',
    path: `${path}/stats`,
    auth: 'organization',
    scope: 'read',
    tenancy: 'organization-param',
    tag: 'ICP configs',
    summary: 'Visitors seen in a range and, of those, how many each active config matches',
    description:
      'A visitor is seen when one of its sessions overlaps `from`..`to` (default: the last 30 days).',
    params: organizationParams,
    query: optionalRangeQuery,
    response: {
      status: 200,
      description: 'One item per active config',
      schema: z.array(
        z.object({
          slug: z.string(),
          name: z.string(),
          visitors: z.number().int().describe('Visitors seen in the range'),
          matches: z.number().int().describe('Of those, visitors the config matches'),
        }),
      ),
    },
    errors: [],
    example: (ids) => ({
      params: { organizationId: ids.organizationId },
      query: { from: '2026-01-01', to: '2026-01-31' },
    }),
    async handler({ organization, query, services }) {
      const id = addressed(organization).id
      const configs = await listIcpConfigs(services.repos, id, 'organization')
      const stats = await icpStats(services.store, id, configs, query)
      return stats.byConfig.map(({ config, matches }) => ({
        slug: config.slug,
        name: config.name,
        visitors: stats.visitors,
        matches,
      }))
    },
  }),
  defineRoute({
    operationId: 'getIcpConfig',
    method: 'GET',
    path: `${path}/{slug}`,
    auth: 'organization',
    scope: 'read',
    tenancy: 'organization-param',
    tag: 'ICP configs',
    summary: 'Get an ICP config',
    params: slugParams,
    response: { status: 200, description: 'The config', schema: organizationIcpConfigSchema },
    errors: ['resource_not_found'],
    example: (ids) => ({ params: { organizationId: ids.organizationId, slug: ids.icpConfigSlug } }),
    async handler({ organization, params, services }) {
      return present(services, await configOf(services, organization, params.slug))
    },
  }),
  defineRoute({
    operationId: 'updateIcpConfig',
    method: 'PUT',
    path: `${path}/{slug}`,
    auth: 'organization',
    scope: 'write',
    tenancy: 'organization-param',
    tag: 'ICP configs',
    summary: 'Update an ICP config',
    description:
      'Any of slug, name, filter, isActive, priority. A new filter, or turning the config on, scores every visitor again.',
    params: slugParams,
    body: organizationIcpConfigUpdate,
    response: { status: 200, description: 'The updated config', schema: organizationIcpConfigSchema },
    errors: ['resource_not_found', 'conflict'],
    example: (ids) => ({
      params: { organizationId: ids.organizationId, slug: ids.icpConfigSlug },
      body: { filter: exampleFilter, isActive: true },
    }),
    async handler({ organization, params, body, services }) {
      const before = await configOf(services, organization, params.slug)
      return present(services, await changeIcpConfig(services, before, body))
    },
  }),
  defineRoute({
    operationId: 'deleteIcpConfig',
    method: 'DELETE',
    path: `${path}/{slug}`,
    auth: 'organization',
    scope: 'write',
    tenancy: 'organization-param',
    tag: 'ICP configs',
    summary: 'Delete an ICP config',
    description: 'Its matches leave stats and visitor statuses at once.',
    params: slugParams,
    response: { status: 204, description: 'Deleted', schema: z.undefined() },
    errors: ['resource_not_found'],
    example: (ids) => ({ params: { organizationId: ids.organizationId, slug: ids.icpConfigSlug } }),
    async handler({ organization, params, services }) {
      const config = await configOf(services, organization, params.slug)
      await removeIcpConfig(services, config)
      return undefined
    },
  }),
  defineRoute({
    operationId: 'recalculateIcpConfig',
    method: 'POST',
    path: `${path}/{slug}/recalculate`,
    auth: 'organization',
    scope: 'write',
    tenancy: 'organization-param',
    tag: 'ICP configs',
    summary: 'Score every visitor again against the config, in the background',
    description:
      'Answers 202 at once. Asking again while a run is queued adds nothing; asking while one runs queues ' +
      'one more. Follow `recalculation` on the config.',
    params: slugParams,
    response: {
      status: 202,
      description: 'Recalculation accepted',
      schema: z.object({ slug: z.string(), recalculation: recalculationSchema }),
    },
    errors: ['resource_not_found'],
    example: (ids) => ({ params: { organizationId: ids.organizationId, slug: ids.icpConfigSlug } }),
    async handler({ organization, params, services }) {
      const config = await configOf(services, organization, params.slug)
      await requestRecalculation(services.coordination, config)
      return { slug: config.slug, recalculation: (await presentRecalculation(services, config))! }
    },
  }),
]
