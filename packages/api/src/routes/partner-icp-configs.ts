// Spec section "Partner: ICP configs": rules-based configs a partner keeps for the organizations it
// manages. Partner configs have no recalculate route: creating one, or changing its rules or
// isActive, scores every visitor of the organization again.
import {
  addIcpConfig,
  changeIcpConfig,
  type IcpConfigRow,
  icpStats,
  listIcpConfigs,
  removeIcpConfig,
} from '@visitor-id/core/icp'
import { z } from 'zod'
import { iso } from '../presenters.js'
import { type ApiServices, defineRoute, type Route } from '../route-definition.js'
import { optionalRangeQuery, organizationIdParam } from '../schemas/common.js'
import {
  partnerIcpConfigCreate,
  partnerIcpConfigSchema,
  partnerIcpConfigUpdate,
  slugParams,
} from '../schemas/icp.js'
import { addressed } from './context.js'
import { configOf, presentRecalculation } from './icp-configs.js'

const organizationParams = z.object({
  organizationId: organizationIdParam,
})
const path = '/partner/organizations/{organizationId}/icp-configs'
const exampleRules = {
  groups: [
    {
      operator: 'AND',
      conditions: [
        { type: 'industry', comparator: 'in', value: ['SaaS', 'Fintech'] },
        { type: 'company_size', comparator: 'between', value: [50, 1000] },
        { type: 'page_contains', comparator: 'contains', value: '/pricing', optional: true },
      ],
    },
  ],
}

async function present(services: ApiServices, config: IcpConfigRow) {
  return {
    id: config.id,
    slug: config.slug,
    label: config.name,
    rules: JSON.parse(config.rules) as Record<string, unknown>,
    priority: config.priority,
    isActive: config.is_active,
    createdAt: iso(config.created_at),
    updatedAt: iso(config.updated_at),
    recalculation: await presentRecalculation(services, config),
  }
}

const common = {
  auth: 'partner',
  tenancy: 'partner-organization-param',
  tag: 'Partner: ICP configs',
} as const
const one = z.object({ icpConfig: partnerIcpConfigSchema })

/** Spec section "Partner: ICP configs". */
export const partnerIcpConfigRoutes: Route[] = [
  defineRoute({
    ...common,
    operationId: 'listPartnerIcpConfigs',
    method: 'GET',
    path,
    scope: 'read',
    summary: "List the partner's ICP configs of a managed organization",
    params: organizationParams,
    response: {
      status: 200,
      description: 'The configs',
      schema: z.object({ icpConfigs: z.array(partnerIcpConfigSchema) }),
    },
    errors: [],
    example: (ids) => ({ params: { organizationId: ids.organizationId } }),
    async handler({ organization, services }) {
      const configs = await listIcpConfigs(services.repos, addressed(organization).id, 'partner')
      return { icpConfigs: await Promise.all(configs.map((config) => present(services, config))) }
    },
  }),
  defineRoute({
    ...common,
    operationId: 'createPartnerIcpConfig',
    method: 'POST',
    path,
    scope: 'write',
    summary: 'Create an ICP config for a managed organization',
    description:
      'The slug is derived from the label, unique per organization (`enterprise-us`, `enterprise-us-2`, ...). ' +
      'Every problem of the rules comes back in one 400, each at its JSON path. The new config scores every ' +
      'visitor of the organization at once (see `recalculation`).',
    params: organizationParams,
    body: partnerIcpConfigCreate,
    response: { status: 201, description: 'The created config', schema: one },
    errors: [],
    example: (ids) => ({
      params: { organizationId: ids.organizationId },
      body: { label: 'Enterprise US', rules: exampleRules, priority: 1 },
    }),
    async handler({ organization, body, services }) {
      const config = await addIcpConfig(services, addressed(organization).id, 'partner', {
        name: body.label,
        rules: body.rules,
        priority: body.priority,
        isActive: body.isActive,
      })
      return { icpConfig: await present(services, config) }
    },
  }),
  defineRoute({
    ...common,
    operationId: 'getPartnerIcpConfigStats',
    method: 'GET',
    path: `${path}/stats`,
    scope: 'read',
    summary: 'Matches of the active partner configs among visitors seen in a range',
    description:
      'A visitor is seen when one of its sessions overlaps `from`..`to` (default: the last 30 days). ' +
      '`totalMatches` counts visitors matched by at least one config.',
    params: organizationParams,
    query: optionalRangeQuery,
    response: {
      status: 200,
      description: 'The counts',
      schema: z.object({
        stats: z.object({
          totalMatches: z.number().int(),
          byConfig: z.array(z.object({ slug: z.string(), label: z.string(), matches: z.number().int() })),
          from: z.iso.datetime(),
          to: z.iso.datetime(),
        }),
      }),
    },
    errors: [],
    example: (ids) => ({
      params: { organizationId: ids.organizationId },
      query: { from: '2026-01-01', to: '2026-01-31' },
    }),
    async handler({ organization, query, services }) {
      const id = addressed(organization).id
      const configs = await listIcpConfigs(services.repos, id, 'partner')
      const stats = await icpStats(services.store, id, configs, query)
      return {
        stats: {
          totalMatches: stats.totalMatches,
          byConfig: stats.byConfig.map(({ config, matches }) => ({
            slug: config.slug,
            label: config.name,
            matches,
          })),
          from: query.from,
          to: query.to,
        },
      }
    },
  }),
  defineRoute({
    ...common,
    operationId: 'getPartnerIcpConfig',
    method: 'GET',
    path: `${path}/{slug}`,
    scope: 'read',
    summary: 'Get an ICP config of a managed organization',
    params: slugParams,
    response: { status: 200, description: 'The config', schema: one },
    errors: ['resource_not_found'],
    example: (ids) => ({ params: { organizationId: ids.organizationId, slug: ids.partnerIcpConfigSlug } }),
    async handler({ organization, params, services }) {
      const config = await configOf(services, organization, params.slug, 'partner')
      return { icpConfig: await present(services, config) }
    },
  }),
  defineRoute({
    ...common,
    operationId: 'updatePartnerIcpConfig',
    method: 'PUT',
    path: `${path}/{slug}`,
    scope: 'write',
    summary: 'Update an ICP config of a managed organization',
    description:
      'Any of label, rules, priority, isActive. New rules, or turning the config on, score every visitor again.',
    params: slugParams,
    body: partnerIcpConfigUpdate,
    response: { status: 200, description: 'The updated config', schema: one },
    errors: ['resource_not_found'],
    example: (ids) => ({
      params: { organizationId: ids.organizationId, slug: ids.partnerIcpConfigSlug },
      body: { priority: 2, isActive: true },
    }),
    async handler({ organization, params, body, services }) {
      const before = await configOf(services, organization, params.slug, 'partner')
      const after = await changeIcpConfig(services, before, {
        name: body.label,
        rules: body.rules,
        priority: body.priority,
        isActive: body.isActive,
      })
      return { icpConfig: await present(services, after) }
    },
  }),
  defineRoute({
    ...common,
    operationId: 'deletePartnerIcpConfig',
    method: 'DELETE',
    path: `${path}/{slug}`,
    scope: 'write',
    summary: 'Delete an ICP config of a managed organization',
    description: 'Its matches leave stats and visitor statuses at once.',
    params: slugParams,
    response: { status: 204, description: 'Deleted', schema: z.undefined() },
    errors: ['resource_not_found'],
    example: (ids) => ({ params: { organizationId: ids.organizationId, slug: ids.partnerIcpConfigSlug } }),
    async handler({ organization, params, services }) {
      await removeIcpConfig(services, await configOf(services, organization, params.slug, 'partner'))
      return undefined
    },
  }),
]
