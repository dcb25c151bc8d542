// Spec section "Organizations".
import type { OrganizationRow } from '@visitor-id/core/accounts'
import { creditBalance, creditBalances } from '@visitor-id/core/credits'
import {
  createOrganizationFor,
  listAddressableOrganizations,
  removeMember,
  setAutoPhoneEnrichment,
  setMaxOverages,
  updateOrganization,
} from '@visitor-id/core/organizations'
import type { Store } from '@visitor-id/core/store'
import { z } from 'zod'
import { presentMembers, presentOrganization } from '../presenters.js'
import { defineRoute, type Route } from '../route-definition.js'
import { hostname, organizationIdParam, pathId } from '../schemas/common.js'
import { membersSchema, organizationSchema } from '../schemas/resources.js'
import { addressed, callerPrincipal } from './context.js'

const organizationParams = z.object({ organizationId: organizationIdParam })
const name = z.string().trim().min(1).max(200)

/** An organization with its credit balance (one query). */
async function organizationBody(store: Store, row: OrganizationRow) {
  return presentOrganization(row, await creditBalance(store, row.id))
}

/** Organizations with their credit balances: one query for all of them. */
export async function organizationBodies(store: Store, rows: readonly OrganizationRow[]) {
  const balances = await creditBalances(
    store,
    rows.map((row) => row.id),
  )
  return rows.map((row) => presentOrganization(row, balances.get(row.id) ?? 0))
}

/** Spec section "Organizations". */
export const organizationRoutes: Route[] = [
  defineRoute({
    operationId: 'createOrganization',
    method: 'POST',
    path: '/organization',
    auth: 'organization',
    scope: 'write',
    tenancy: 'caller',
    tag: 'Organizations',
    summary: 'Create an organization',
    description:
      "Owned by the key's user (a key made without a user: by its organization's owner). Under an " +
      'agency key with `agency:write` it becomes a sub-organization of the agency; otherwise it is a ' +
      'separate organization of the same partner. Every key of the user with `admin` addresses it: ' +
      'GET and PUT it, list it in GET /organization/list, and create its first key with POST ' +
      '/organization/{organizationId}/api-keys; those keys belong to the new organization. A key ' +
      'with only `read` / `write` (and no agency scope) addresses its own organization only.',
    body: z.strictObject({
      organizationName: name.describe('Name of the organization'),
      domain: hostname.optional().describe('Primary domain, a hostname such as example.com'),
    }),
    response: { status: 200, description: 'The created organization', schema: organizationSchema },
    errors: [],
    example: () => ({ body: { organizationName: 'Acme', domain: 'acme.example' } }),
    async handler({ principal, organization, body, services }) {
      const created = await createOrganizationFor(
        services.repos,
        callerPrincipal(principal),
        addressed(organization),
        {
          name: body.organizationName,
          domain: body.domain,
          initialCredits: { store: services.store, amount: services.config.initialCredits },
        },
      )
      return organizationBody(services.store, created)
    },
  }),
  defineRoute({
    operationId: 'listOrganizations',
    method: 'GET',
    path: '/organization/list',
    auth: 'organization',
    scope: 'read',
    tenancy: 'caller',
    tag: 'Organizations',
    summary: 'List the organizations the key may address',
    description:
      'The organizations the key may address: its own first, then (agency keys with `agency:read`) ' +
      "the agency's sub-organizations, then (keys with `admin`) the other organizations the key's " +
      'user belongs to, as owner or member, in the order the user joined them.',
    response: { status: 200, description: 'The organizations', schema: z.array(organizationSchema) },
    errors: [],
    example: () => ({}),
    async handler({ principal, organization, services }) {
      const rows = await listAddressableOrganizations(
        services.repos,
        callerPrincipal(principal),
        addressed(organization),
      )
      return organizationBodies(services.store, rows)
    },
  }),
  defineRoute({
    operationId: 'getOrganization',
    method: 'GET',
    path: '/organization/{organizationId}',
    auth: 'organization',
    scope: 'read',
    tenancy: 'organization-param',
    tag: 'Organizations',
    summary: 'Get an organization',
    params: organizationParams,
    response: { status: 200, description: 'The organization', schema: organizationSchema },
    errors: [],
    example: (ids) => ({ params: { organizationId: ids.organizationId } }),
    async handler({ organization, services }) {
      return organizationBody(services.store, addressed(organization))
    },
  }),
  defineRoute({
    operationId: 'updateOrganization',
    method: 'PUT',
    path: '/organization/{organizationId}',
    auth: 'organization',
    scope: 'write',
    tenancy: 'organization-param',
    tag: 'Organizations',
    summary: "Update an organization's name or domain",
    params: organizationParams,
    body: z
      .strictObject({
        name: name.optional(),
        domain: hostname.nullable().optional().describe('A hostname such as example.com; null clears it'),
      })
      .refine((body) => body.name !== undefined || body.domain !== undefined, {
        message: 'name or domain is required',
      }),
    response: { status: 200, description: 'The updated organization', schema: organizationSchema },
    errors: [],
    example: (ids) => ({ params: { organizationId: ids.organizationId }, body: { name: 'Acme Inc.' } }),
    async handler({ organization, body, services }) {
      return organizationBody(
        services.store,
        await updateOrganization(services.repos, addressed(organization), body),
      )
    },
  }),
  defineRoute({
    operationId: 'removeOrganizationMember',
    method: 'DELETE',
    path: '/organization/{organizationId}/member/{userId}',
    auth: 'organization',
    scope: 'write',
    tenancy: 'organization-param',
    tag: 'Organizations',
    summary: 'Remove a member',
    description:
      'Returns the remaining members. The owner cannot be removed (409 `owner_not_removable`). ' +
      'Removing a user ends at once, in every process, what their keys of other organizations could ' +
      'do here: their `admin` keys, which addressed this organization through the membership, get ' +
      '404 from the next request on.',
    params: organizationParams.extend({ userId: pathId('User id (UUID)') }),
    response: { status: 200, description: 'The remaining members', schema: membersSchema },
    errors: ['owner_not_removable'],
    example: (ids) => ({ params: { organizationId: ids.organizationId, userId: ids.memberUserId } }),
    async handler({ organization, params, services }) {
      const { id } = addressed(organization)
      return presentMembers(id, await removeMember(services.repos, id, params.userId))
    },
  }),
  defineRoute({
    operationId: 'setMaxOverages',
    method: 'PATCH',
    path: '/organization/{organizationId}/max-overages',
    auth: 'organization',
    scope: 'write',
    tenancy: 'organization-param',
    tag: 'Organizations',
    summary: 'Set the maximum overage',
    params: organizationParams,
    body: z.strictObject({
      maxOverages: z.number().min(0).max(1_000_000_000).describe('A non-negative amount'),
    }),
    response: {
      status: 200,
      description: 'The overage setting',
      schema: z.object({ organizationId: z.string(), maxOverages: z.number() }),
    },
    errors: [],
    example: (ids) => ({ params: { organizationId: ids.organizationId }, body: { maxOverages: 250 } }),
    async handler({ organization, body, services }) {
      const updated = await setMaxOverages(services.repos, addressed(organization), body.maxOverages)
      return { organizationId: updated.id, maxOverages: updated.max_overages ?? body.maxOverages }
    },
  }),
  defineRoute({
    operationId: 'setAutoPhoneEnrichment',
    method: 'PATCH',
    path: '/organization/{organizationId}/auto-phone-enrichment',
    auth: 'organization',
    scope: 'write',
    tenancy: 'organization-param',
    tag: 'Organizations',
    summary: 'Switch automatic phone enrichment (B2B organizations only)',
    description:
      'Only `plus_employee` organizations have the feature; any other gets 403 `not_plus_employee`, ' +
      'whether enabling or disabling.',
    params: organizationParams,
    body: z.strictObject({ enabled: z.boolean() }),
    response: { status: 200, description: 'The updated organization', schema: organizationSchema },
    errors: ['not_plus_employee'],
    example: (ids) => ({ params: { organizationId: ids.organizationId }, body: { enabled: true } }),
    async handler({ organization, body, services }) {
      return organizationBody(
        services.store,
        await setAutoPhoneEnrichment(services.repos, addressed(organization), body.enabled),
      )
    },
  }),
]
