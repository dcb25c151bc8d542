// Spec section "Integrations": connecting an ads platform (OAuth 2.0 with PKCE; the callback is a
// page of the server), its ads accounts, an installer token, and flows (docs/decisions.md, "Integrations").
// The work is core's (integrations/); these routes shape it.
import { addressOrganization } from '@visitor-id/core/access'
import {
  createFlow,
  deleteFlow,
  disconnectIntegration,
  flowNodesSchema,
  flowRuns,
  getFlow,
  integrationTypes,
  integratorToken,
  listFlows,
  presentFlow,
  presentIntegrations,
  readIntegrations,
  requestInstall,
  selectAdsAccount,
} from '@visitor-id/core/integrations'
import { z } from 'zod'
import { type ApiServices, defineRoute, type Route } from '../route-definition.js'
import { audienceSyncSchema } from '../schemas/audience-sync.js'
import { organizationIdField, organizationIdParam, pathId, timestamp } from '../schemas/common.js'
import { addressed, callerPrincipal } from './context.js'

const typeField = z.enum(integrationTypes).describe('`searchAds` or `socialAds`')
const accountSchema = z.object({ id: z.string(), name: z.string() }).describe('AdsAccount')

const consentStatus = z.enum(['CONSENT_GRANTED', 'CONSENT_DENIED'])
const consentSchema = z
  .strictObject({
    adUserData: consentStatus.optional().describe('Consent to the use of their data for ads'),
    adPersonalization: consentStatus.optional().describe('Consent to personalized ads'),
  })
  .describe('AdsConsent')

const integrationSchema = z
  .object({
    type: typeField,
    name: z.string(),
    configured: z.boolean().describe("The server has this type's OAuth settings"),
    installed: z.boolean().describe('Connected: tokens are stored'),
    status: z
      .enum(['not_installed', 'connected', 'reconnect_soon', 'reauthorization_required'])
      .describe(
        '`connected`: working. `reconnect_soon`: working, but its grant has no refresh token and ' +
          'expires within 7 days (`expiresAt`): install again before then. ' +
          '`reauthorization_required`: the provider refused the stored grant, or a grant without a ' +
          'refresh token is past `expiresAt`; install again.',
      ),
    expiresAt: timestamp
      .nullable()
      .describe(
        "When the stored grant stops working (a grant without a refresh token, e.g. Meta's " +
          'long-lived token, about 60 days); null when it refreshes itself or there is none',
      ),
    adsAccounts: z.array(accountSchema),
    accountIdEntry: z
      .boolean()
      .describe(
        'The platform lists no accounts: the account id is entered (`POST /integrations/account/select`), ' +
          'and shown as its own name',
      ),
    selectedAdsAccount: accountSchema.nullable(),
    consent: consentSchema
      .nullable()
      .describe(
        "What the organization's users agreed to, sent with every upload on platforms that take it " +
          "(Google); null: the server's default (SEARCH_ADS_CONSENT_*)",
      ),
    connectedAt: timestamp.nullable(),
  })
  .describe('Integration')

const runSchema = z
  .object({
    id: z.string(),
    eventId: z.string(),
    trigger: z.string(),
    status: z.enum(['success', 'failed']),
    actions: z.array(
      z.object({
        type: z.string(),
        status: z
          .enum(['success', 'failed', 'skipped'])
          .describe('`skipped`: queued to run after another sync of the same audience; not a failure'),
        detail: z.string(),
        sync: audienceSyncSchema.optional().describe("An audience sync's outcome"),
      }),
    ),
    startedAt: timestamp,
    finishedAt: timestamp,
  })
  .describe('FlowRun')

const flowSchema = z
  .object({
    id: z.string().describe('`flow_` + 24 hex'),
    organizationId: z.string(),
    title: z.string(),
    integrationId: z.string().nullable().describe('The integration type of its first audience sync'),
    nodes: z
      .object({
        trigger: z.record(z.string(), z.unknown()),
        actions: z.array(z.record(z.string(), z.unknown())),
      })
      .nullable()
      .describe('null for a flow created without nodes: it runs nothing'),
    createdAt: timestamp,
    updatedAt: timestamp,
    runs: z.array(runSchema).optional().describe('The last 20 runs, newest first (one flow only)'),
  })
  .describe('Flow')

const organizationParams = z.object({ organizationId: organizationIdParam })
const flowParams = z.object({
  organizationId: organizationIdParam,
  flowId: pathId('Flow id (`flow_` + 24 hex)'),
})
const deps = (services: ApiServices) => services.integrations

const exampleNodes = (ids: { listId: string }) => ({
  trigger: { type: 'list.refreshed', listId: ids.listId },
  actions: [{ type: 'audience.sync', listId: ids.listId, integrationType: 'searchAds' }],
})

/** Spec section "Integrations". */
export const integrationRoutes: Route[] = [
  defineRoute({
    operationId: 'requestIntegrationInstall',
    method: 'GET',
    path: '/integrations/request-install',
    auth: 'organization',
    scope: 'write',
    tenancy: 'caller',
    tag: 'Integrations',
    summary: "The provider's authorization page for an integration",
    description:
      'Send the browser to `url`: the ads platform asks the user to authorize, then comes back to ' +
      "this server's callback (`/integrations/callback/{type}`), which stores the tokens (encrypted) " +
      'and lists the ads accounts. Authorization code with PKCE (S256); the `state` is bound to the ' +
      "organization for 10 minutes and used once. `organizationId` defaults to the key's own. A type " +
      'the server has no settings for is 409 `integration_not_configured`, naming the variables to set.',
    query: z.object({
      integrationType: typeField,
      organizationId: organizationIdField.optional().describe("Default: the key's organization"),
    }),
    response: { status: 200, description: 'The authorization page', schema: z.object({ url: z.string() }) },
    errors: ['integration_not_configured', 'resource_not_found'],
    example: () => ({ query: { integrationType: 'searchAds' } }),
    async handler({ principal, organization, query, services }) {
      const target = query.organizationId
        ? await addressOrganization(services.repos, callerPrincipal(principal), query.organizationId, 'write')
        : addressed(organization)
      return requestInstall(deps(services), target.id, query.integrationType)
    },
  }),
  defineRoute({
    operationId: 'createIntegratorToken',
    method: 'POST',
    path: '/integrations/integrator/token',
    auth: 'organization',
    scope: 'write',
    tenancy: 'organization-body',
    tag: 'Integrations',
    summary: 'A short-lived installer token',
    description:
      'For an installer page that holds no API key: sending the browser to `installUrl` (valid 15 ' +
      'minutes, once) starts the authorization of the integration for this organization, as ' +
      "`request-install` would. Only the token's SHA-256 is kept.",
    body: z.strictObject({ organizationId: organizationIdField, integrationType: typeField }),
    response: {
      status: 200,
      description: 'The token',
      schema: z.object({ token: z.string(), expiresAt: timestamp, installUrl: z.string() }),
    },
    errors: ['integration_not_configured'],
    example: (ids) => ({ body: { organizationId: ids.organizationId, integrationType: 'searchAds' } }),
    async handler({ organization, body, services }) {
      return integratorToken(deps(services), addressed(organization).id, body.integrationType)
    },
  }),
  defineRoute({
    operationId: 'selectAdsAccount',
    method: 'POST',
    path: '/integrations/account/select',
    auth: 'organization',
    scope: 'write',
    tenancy: 'organization-body',
    tag: 'Integrations',
    summary: 'Select the ads account audiences go to',
    description:
      'One of the `adsAccounts` the provider listed at installation (400 `unknown_ads_account` ' +
      'otherwise); on a platform that lists none (`accountIdEntry`), the account id as entered, ' +
      "checked against the platform's form (400 `unknown_ads_account` otherwise). 409 " +
      "`integration_not_connected` before installation. `consent` sets what the organization's " +
      'users agreed to, sent with every upload on platforms that take it (Google: EEA members ' +
      'without `adUserData` granted are dropped); each value given replaces the one before, the ' +
      "others stay; never set, the server's default applies.",
    body: z.strictObject({
      organizationId: organizationIdField,
      integrationType: typeField,
      accountId: z.string().min(1).max(200),
      consent: consentSchema.optional(),
    }),
    response: { status: 200, description: 'The integration', schema: integrationSchema },
    errors: ['unknown_ads_account', 'integration_not_connected'],
    example: (ids) => ({
      body: { organizationId: ids.organizationId, integrationType: 'searchAds', accountId: ids.adsAccountId },
    }),
    async handler({ organization, body, services }) {
      const organizationId = addressed(organization).id
      const { integrationType, accountId, consent } = body
      await selectAdsAccount(deps(services), organizationId, integrationType, accountId, consent)
      const [shown] = presentIntegrations(
        services.config.integrations,
        await readIntegrations(services.store, organizationId),
      ).filter((integration) => integration.type === body.integrationType)
      return shown!
    },
  }),
  defineRoute({
    operationId: 'createFlow',
    method: 'POST',
    path: '/integrations/flows',
    auth: 'organization',
    scope: 'write',
    tenancy: 'organization-body',
    tag: 'Integrations',
    summary: 'Create a flow',
    description:
      '`nodes`: one `trigger` (`list.refreshed`, optionally of one `listId`; `visitor.identified`; ' +
      '`icp.matched`, optionally of one `icpSlug`) and 1 to 10 `actions` (`audience.sync` of a list ' +
      'to the selected ads account of an integration; `webhook.call` of a URL, signed with `secret` ' +
      'when given). The flow runs on each event of its trigger, as a job; each run is logged ' +
      "(`GET /integrations/{organizationId}/flows/{flowId}`). Lists must be the organization's; " +
      'URLs follow the partner webhook rules. `nodes` is optional: a flow created without them is ' +
      'kept (its `nodes` are `null`) and runs nothing.',
    body: z.strictObject({
      organizationId: organizationIdField,
      title: z.string().trim().min(1).max(200),
      nodes: flowNodesSchema.optional(),
    }),
    response: { status: 200, description: 'The created flow', schema: flowSchema },
    errors: [],
    example: (ids) => ({
      body: {
        organizationId: ids.organizationId,
        title: 'Sync CTOs to search ads',
        nodes: exampleNodes(ids),
      },
    }),
    async handler({ organization, body, services }) {
      return presentFlow(await createFlow(deps(services), addressed(organization).id, body))
    },
  }),
  defineRoute({
    operationId: 'listIntegrations',
    method: 'GET',
    path: '/integrations/{organizationId}',
    auth: 'organization',
    scope: 'read',
    tenancy: 'organization-param',
    tag: 'Integrations',
    summary: "The organization's integrations",
    description:
      "Both types, installed or not: `configured` (the server has the type's settings), `installed`, " +
      '`status`, `expiresAt`, the ads accounts and the selected one. `status`: `not_installed`; ' +
      "`connected`; `reconnect_soon` (a grant without a refresh token, such as Meta's, ends within 7 " +
      'days: install again through `request-install` before `expiresAt`; the members are mailed ' +
      'once per grant, email preference `integration_reconnect`); `reauthorization_required` (the ' +
      'provider refused the stored grant, or it is past `expiresAt`: flows fail until it is ' +
      'installed again). Installing again stores the new grant: `connected`, with its new `expiresAt`.',
    params: organizationParams,
    response: { status: 200, description: 'The integrations', schema: z.array(integrationSchema) },
    errors: [],
    example: (ids) => ({ params: { organizationId: ids.organizationId } }),
    async handler({ organization, services }) {
      return presentIntegrations(
        services.config.integrations,
        await readIntegrations(services.store, addressed(organization).id),
      )
    },
  }),
  defineRoute({
    operationId: 'disconnectIntegration',
    method: 'DELETE',
    path: '/integrations/{organizationId}/{integrationType}',
    auth: 'organization',
    scope: 'write',
    tenancy: 'organization-param',
    tag: 'Integrations',
    summary: 'Disconnect an integration',
    description:
      'Beyond the spec: deletes the stored tokens and the account selection; flows that sync to it ' +
      'fail (logged) until it is installed again. 409 `integration_not_connected` when it is not.',
    params: z.object({ organizationId: organizationIdParam, integrationType: typeField }),
    response: { status: 200, description: 'Disconnected; no body', schema: z.undefined() },
    errors: ['integration_not_connected'],
    example: (ids) => ({ params: { organizationId: ids.organizationId, integrationType: 'searchAds' } }),
    async handler({ organization, params, services }) {
      await disconnectIntegration(deps(services), addressed(organization).id, params.integrationType)
      return undefined
    },
  }),
  defineRoute({
    operationId: 'listFlows',
    method: 'GET',
    path: '/integrations/{organizationId}/flows',
    auth: 'organization',
    scope: 'read',
    tenancy: 'organization-param',
    tag: 'Integrations',
    summary: "The organization's flows",
    description: 'Newest first; `integrationId` keeps the flows that sync to that integration type.',
    params: organizationParams,
    query: z.object({ integrationId: z.string().max(64).optional() }),
    response: { status: 200, description: 'The flows', schema: z.array(flowSchema) },
    errors: [],
    example: (ids) => ({
      params: { organizationId: ids.organizationId },
      query: { integrationId: 'searchAds' },
    }),
    async handler({ organization, query, services }) {
      return (await listFlows(services.repos, addressed(organization).id, query.integrationId)).map((flow) =>
        presentFlow(flow),
      )
    },
  }),
  defineRoute({
    operationId: 'getFlow',
    method: 'GET',
    path: '/integrations/{organizationId}/flows/{flowId}',
    auth: 'organization',
    scope: 'read',
    tenancy: 'organization-param',
    tag: 'Integrations',
    summary: 'A flow and its last runs',
    description: "Another organization's flow is 404 `flow_not_found`, like an unknown one.",
    params: flowParams,
    response: { status: 200, description: 'The flow', schema: flowSchema },
    errors: ['flow_not_found'],
    example: (ids) => ({ params: { organizationId: ids.organizationId, flowId: ids.flowId } }),
    async handler({ organization, params, services }) {
      const flow = await getFlow(services.repos, addressed(organization).id, params.flowId)
      return presentFlow(flow, await flowRuns(services.store, flow))
    },
  }),
  defineRoute({
    operationId: 'deleteFlow',
    method: 'DELETE',
    path: '/integrations/{organizationId}/flows/{flowId}',
    auth: 'organization',
    scope: 'write',
    tenancy: 'organization-param',
    tag: 'Integrations',
    summary: 'Delete a flow',
    description: "200 with no body (the spec's answer); it runs no more.",
    params: flowParams,
    response: { status: 200, description: 'Deleted; no body', schema: z.undefined() },
    errors: ['flow_not_found'],
    example: (ids) => ({ params: { organizationId: ids.organizationId, flowId: ids.flowId } }),
    async handler({ organization, params, services }) {
      await deleteFlow(
        services.repos,
        await getFlow(services.repos, addressed(organization).id, params.flowId),
      )
      return undefined
    },
  }),
]
