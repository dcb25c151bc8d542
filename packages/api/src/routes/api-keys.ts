// Spec section "API keys": list (read), create and revoke (admin).
import { requireKeyManagement } from '@visitor-id/core/access'
import { createOrganizationApiKey, listApiKeys, revokeApiKey } from '@visitor-id/core/api-keys'
import { z } from 'zod'
import { presentApiKey } from '../presenters.js'
import { defineRoute, type Route } from '../route-definition.js'
import { organizationIdParam, pathId } from '../schemas/common.js'
import { apiKeySchema, scopeSchema } from '../schemas/resources.js'
import { addressed, callerPrincipal } from './context.js'

const organizationParams = z.object({ organizationId: organizationIdParam })

const createBody = z.strictObject({
  name: z.string().trim().min(1).max(100).describe('Human-readable name'),
  scopes: z
    .array(scopeSchema)
    .min(1)
    .max(5)
    .default(['read', 'write'])
    .describe('Granted scopes (default read, write); a key cannot grant a scope it lacks'),
  expiresAt: z.iso
    .datetime({ offset: true, error: 'must be an RFC 3339 date-time' })
    .nullable()
    .optional()
    .describe('RFC 3339, in the future and within 10 years; null or absent: never expires'),
})

/** Spec section "API keys". */
export const apiKeyRoutes: Route[] = [
  defineRoute({
    operationId: 'listApiKeys',
    method: 'GET',
    path: '/organization/{organizationId}/api-keys',
    auth: 'organization',
    scope: 'read',
    tenancy: 'organization-param',
    tag: 'API keys',
    summary: "List the organization's API keys (revoked ones included)",
    params: organizationParams,
    response: { status: 200, description: 'The keys', schema: z.object({ apiKeys: z.array(apiKeySchema) }) },
    errors: [],
    example: (ids) => ({ params: { organizationId: ids.organizationId } }),
    async handler({ organization, services }) {
      const rows = await listApiKeys(services.store, services.repos, addressed(organization).id)
      return { apiKeys: rows.map(presentApiKey) }
    },
  }),
  defineRoute({
    operationId: 'createApiKey',
    method: 'POST',
    path: '/organization/{organizationId}/api-keys',
    auth: 'organization',
    scope: 'admin',
    tenancy: 'organization-param',
    tag: 'API keys',
    summary: 'Create an API key',
    description:
      '`plainKey` is in this response only; the service stores nothing but its SHA-256. The key ' +
      "belongs to the organization in the path and acts for the calling key's user. Besides its own " +
      'organization, a key with `admin` creates keys for the organizations its user owns (so an ' +
      'organization created with POST /organization gets its first key here) and, with ' +
      "`agency:write`, for the agency's sub-organizations. A user who is only a member of the " +
      'organization gets 403 `forbidden`: keys they made would outlive their removal.',
    params: organizationParams,
    body: createBody,
    response: {
      status: 200,
      description: 'The key and, this once, the full key',
      schema: z.object({ apiKey: apiKeySchema, plainKey: z.string() }),
    },
    errors: [],
    example: (ids) => ({
      params: { organizationId: ids.organizationId },
      body: {
        name: 'CI reader',
        scopes: ['read'],
        // Always in the future, and the same all year, so the document is stable.
        expiresAt: `${new Date().getUTCFullYear() + 2}-01-01T00:00:00Z`,
      },
    }),
    async handler({ principal, organization, body, services }) {
      const { apiKey, plainKey } = await createOrganizationApiKey(
        services.repos,
        callerPrincipal(principal),
        addressed(organization),
        body,
      )
      return { apiKey: presentApiKey(apiKey), plainKey }
    },
  }),
  defineRoute({
    operationId: 'revokeApiKey',
    method: 'DELETE',
    path: '/organization/{organizationId}/api-keys/{keyId}',
    auth: 'organization',
    scope: 'admin',
    tenancy: 'organization-param',
    tag: 'API keys',
    summary: 'Revoke an API key',
    description:
      'Irreversible. The key gets 401 on its next request, in every process. Who may revoke: as for ' +
      'creating a key (a user who is only a member of the organization gets 403 `forbidden`).',
    params: organizationParams.extend({ keyId: pathId('API key id') }),
    response: { status: 200, description: 'Revoked', schema: z.object({ success: z.literal(true) }) },
    errors: ['resource_not_found'],
    example: (ids) => ({ params: { organizationId: ids.organizationId, keyId: ids.keyId } }),
    async handler({ principal, organization, params, services }) {
      await requireKeyManagement(services.repos, principal, addressed(organization))
      await revokeApiKey(services.repos, addressed(organization).id, params.keyId)
      return { success: true as const }
    },
  }),
]
