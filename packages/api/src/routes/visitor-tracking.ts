// Spec section "Visitor tracking" (phone number search and contact count come later).
import { managingPartnerId } from '@visitor-id/core/access'
import { readPartnerDomain } from '@visitor-id/core/custom-domain'
import { appError } from '@visitor-id/core/errors'
import { organizationIcpConfigs } from '@visitor-id/core/icp'
import { profilePhoneFields, startPhoneSearch } from '@visitor-id/core/phone-search'
import { getPixelConfig, updatePixelConfig } from '@visitor-id/core/visitor-tracking'
import { renderSnippet, type SnippetType, snippetTypes } from '@visitor-id/pixel'
import type { FastifyRequest } from 'fastify'
import { z } from 'zod'
import { iso, presentPixelConfig } from '../presenters.js'
import { type ApiServices, defineRoute, type Route } from '../route-definition.js'
import { hostname, httpUrl, organizationIdField, organizationIdParam, pathId } from '../schemas/common.js'
import {
  phoneSearchDescription,
  phoneSearchErrors,
  phoneSearchReplySchema,
  pixelConfigSchema,
  visitorProfileSchema,
} from '../schemas/resources.js'
import { addressed } from './context.js'

const organizationParams = z.object({ organizationId: organizationIdParam })
const maxIcpSettingsBytes = 16 * 1024
const snippetType = z.enum(snippetTypes as [SnippetType, ...SnippetType[]])

/**
 * Where the pixel is served from: the verified custom domain of the partner that manages the
 * organization, else PUBLIC_URL, else the origin the caller used to reach the API.
 */
async function collectorHost(
  services: ApiServices,
  request: FastifyRequest,
  organizationId: string,
): Promise<string> {
  const partnerId = await managingPartnerId(services.repos, organizationId)
  const custom = partnerId ? await readPartnerDomain(services.store, partnerId) : undefined
  if (custom?.status === 'verified') return `https://${custom.domain}`
  if (services.config.publicUrl) return services.config.publicUrl
  // The Host header is the caller's own input; anything unusual falls back to a neutral value.
  const host = /^[A-Za-z0-9.-]{1,253}(?::\d{1,5})?$/.test(request.host) ? request.host : 'localhost'
  return `${request.protocol}://${host}`
}

const pixelConfigUpdate = z
  .strictObject({
    allowedReferrers: z
      .array(httpUrl)
      .max(100)
      .optional()
      .describe('http(s) URLs of the pages allowed to send hits (at most 100, 2 KB each)'),
    verifiedDomains: z
      .array(hostname)
      .max(100)
      .optional()
      .describe('Hostnames of the verified sites; subdomains included (at most 100)'),
    ipTracking: z.boolean().optional(),
    respectPrivacySignals: z.boolean().optional(),
    formCapture: z.boolean().optional(),
    icpSettings: z
      .record(z.string().max(100), z.unknown())
      .refine((value) => JSON.stringify(value).length <= maxIcpSettingsBytes, {
        message: `must be at most ${maxIcpSettingsBytes} bytes of JSON`,
      })
      .optional()
      .describe('Settings of ICP scoring, a JSON object (at most 16 KB); replaces the stored one'),
  })
  .refine((body) => Object.values(body).some((value) => value !== undefined), {
    message: 'at least one field is required',
  })

/** Spec section "Visitor tracking": pixel config, snippets, visitor profiles. */
export const visitorTrackingRoutes: Route[] = [
  defineRoute({
    operationId: 'getPixelConfig',
    method: 'GET',
    path: '/visitor-tracking/{organizationId}',
    auth: 'organization',
    scope: 'read',
    tenancy: 'organization-param',
    tag: 'Visitor tracking',
    summary: "Get the organization's pixel configuration",
    params: organizationParams,
    response: {
      status: 200,
      description: 'The pixel configuration',
      schema: z.object({ pixelConfig: pixelConfigSchema }),
    },
    errors: [],
    example: (ids) => ({ params: { organizationId: ids.organizationId } }),
    async handler({ organization, request, services }) {
      const row = await getPixelConfig(services.repos, addressed(organization).id)
      return {
        pixelConfig: presentPixelConfig(row, await collectorHost(services, request, row.organization_id)),
      }
    },
  }),
  defineRoute({
    operationId: 'updatePixelConfig',
    method: 'PUT',
    path: '/visitor-tracking/{organizationId}/pixel-config',
    auth: 'organization',
    scope: 'write',
    tenancy: 'organization-param',
    tag: 'Visitor tracking',
    summary: 'Update the pixel configuration',
    description:
      'Only the fields sent change. Ingest processes are told at once (pubsub `entities:changed`); ' +
      'at worst they pick the change up when their 30-second copy expires.',
    params: organizationParams,
    body: pixelConfigUpdate,
    bodyLimit: 1024 * 1024,
    response: {
      status: 200,
      description: 'The updated pixel configuration',
      schema: z.object({ pixelConfig: pixelConfigSchema }),
    },
    errors: [],
    example: (ids) => ({
      params: { organizationId: ids.organizationId },
      body: { allowedReferrers: ['https://www.example.com/'], verifiedDomains: ['example.com'] },
    }),
    async handler({ organization, body, request, services }) {
      const row = await updatePixelConfig(services.repos, addressed(organization).id, body)
      return {
        pixelConfig: presentPixelConfig(row, await collectorHost(services, request, row.organization_id)),
      }
    },
  }),
  defineRoute({
    operationId: 'getInstallationScript',
    method: 'GET',
    path: '/visitor-tracking/{organizationId}/installation/script/{type}',
    auth: 'organization',
    scope: 'read',
    tenancy: 'organization-param',
    tag: 'Visitor tracking',
    summary: 'Get the installation snippet',
    description: '`jsSnippet`: paste into every page. `tagManager`: a variant for tag managers.',
    params: organizationParams.extend({
      type: snippetType.describe('Snippet type'),
    }),
    response: {
      status: 200,
      description: 'The snippet (HTML with the script)',
      schema: z.object({ type: snippetType, script: z.string() }),
    },
    errors: [],
    example: (ids) => ({ params: { organizationId: ids.organizationId, type: 'jsSnippet' } }),
    async handler({ organization, params, request, services }) {
      const row = await getPixelConfig(services.repos, addressed(organization).id)
      const script = renderSnippet(params.type, {
        host: await collectorHost(services, request, addressed(organization).id),
        trackingKey: row.tracking_key,
      })
      return { type: params.type, script }
    },
  }),
  defineRoute({
    operationId: 'getVisitor',
    method: 'GET',
    path: '/visitor-tracking/{organizationId}/visitors/{visitorId}',
    auth: 'organization',
    scope: 'read',
    tenancy: 'organization-param',
    tag: 'Visitor tracking',
    summary: 'Get a visitor profile',
    description:
      'Contact, company, sessions (newest first) and page views. A phone is paid data: `contact` has ' +
      'none, and `phoneNumber` (E.164) appears only once a phone search of this organization found it ' +
      "(and charged for it). A B2B (`plus_employee`) organization's visitor always has " +
      '`phoneNumberSearchStatus`: poll it after starting a search to see it end (`found`, `not_found`, ' +
      '`error` or `expired`). Other organizations have no phone search and no such field.',
    params: organizationParams.extend({ visitorId: pathId('Visitor id (UUID)') }),
    response: { status: 200, description: 'The visitor profile', schema: visitorProfileSchema },
    errors: [],
    example: (ids) => ({ params: { organizationId: ids.organizationId, visitorId: ids.visitorId } }),
    async handler({ organization, params, services }) {
      const target = addressed(organization)
      const { id } = target
      // The organization, its pixel config and ICP configs come from memory; the profile is one store
      // query, shared with the profiles other requests ask for meanwhile (one query for all of them).
      const [config, icpConfigs] = await Promise.all([
        services.repos.pixelConfigs.get({ organization_id: id }),
        organizationIcpConfigs(services.repos, id),
      ])
      const visitorId = params.visitorId.toLowerCase()
      const [profile, phone] = await Promise.all([
        services.reads.profiles.read(id, visitorId, {
          ipTracking: config?.ip_tracking ?? false,
          icpConfigs,
          companyOf: (companyId) => services.repos.companies.get({ id: companyId }),
        }),
        // A second point read, side by side with the profile's (and batched as it is): the state of
        // the latest phone search.
        services.reads.phoneSearches.read(id, visitorId),
      ])
      if (!profile) throw appError('resource_not_found', 'Visitor not found')
      return {
        ...profile,
        ...profilePhoneFields(phone, target, services.phone.timeoutMs),
        firstSeenAt: iso(profile.firstSeenAt),
        lastSeenAt: iso(profile.lastSeenAt),
        sessions: profile.sessions.map((s) => ({
          ...s,
          startedAt: iso(s.startedAt),
          endedAt: iso(s.endedAt),
        })),
        pageViews: profile.pageViews.map((p) => ({ ...p, visitedAt: iso(p.visitedAt) })),
      }
    },
  }),
  defineRoute({
    operationId: 'searchVisitorPhoneNumber',
    method: 'POST',
    path: '/visitor-tracking/phone-number-search',
    auth: 'organization',
    scope: 'write',
    tenancy: 'organization-body',
    tag: 'Visitor tracking',
    summary: "Start a search for a visitor's phone number",
    description: phoneSearchDescription,
    body: z.strictObject({
      organizationId: organizationIdField,
      visitorId: z.string().min(1).max(64).describe('Visitor id (UUID)'),
    }),
    response: { status: 200, description: 'The search started', schema: phoneSearchReplySchema },
    errors: phoneSearchErrors,
    example: (ids) => ({ body: { organizationId: ids.organizationId, visitorId: ids.personVisitorId } }),
    async handler({ organization, body, services }) {
      const started = await startPhoneSearch(services.phone, {
        organization: addressed(organization),
        visitorId: body.visitorId,
      })
      return { phoneNumberSearchStatus: started.status, visitorId: started.visitorId }
    },
  }),
]
