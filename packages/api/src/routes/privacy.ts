// Privacy requests of an organization about one person (core privacy/): erase them from every
// table, export everything held about them, and the record of past erasures. The key naming the
// person travels in the body, never in the URL, so it is in no access log.
import {
  companyOnlyCountries,
  effectivePrivacy,
  erasePerson,
  exportPerson,
  listErasures,
  personKeySchema,
  rawDataFrom,
} from '@visitor-id/core/privacy'
import { z } from 'zod'
import { type ApiServices, defineRoute, type Route } from '../route-definition.js'
import { organizationIdParam } from '../schemas/common.js'
import { addressed, callerPrincipal } from './context.js'

const organizationParams = z.object({ organizationId: organizationIdParam })
const tag = 'Privacy'

const rowCounts = z.record(z.string(), z.number().int()).describe('Rows per table')

const erasureSchema = z.object({
  id: z.string(),
  keyKind: z
    .enum(['email', 'email_sha256', 'visitor_id'])
    .describe('What named the person (the key itself is not kept)'),
  requestedBy: z.string().describe('`user:<id>` or `key:<id>` of the caller, or `cli`'),
  visitors: z.number().int().describe('Visitors of the organization found for the person'),
  contacts: z.number().int().describe('Contacts of the dataset found for the person (erased too)'),
  rows: rowCounts.describe('Rows deleted per table'),
  requestedAt: z.string(),
  finishedAt: z.string(),
})

const keptSchema = z
  .record(z.string(), z.object({ rows: z.number().int(), reason: z.string() }))
  .describe('Tables whose rows of the person are kept, with why')

const exportSchema = z.object({
  organizationId: z.string(),
  keyKind: erasureSchema.shape.keyKind,
  generatedAt: z.string(),
  found: z.object({
    visitorIds: z.array(z.string()),
    emails: z.array(z.string()),
    contactIds: z.array(z.string()),
  }),
  tables: z
    .record(
      z.string(),
      z.union([
        z.object({ rows: z.array(z.record(z.string(), z.unknown())) }),
        z.object({ count: z.number().int() }),
      ]),
    )
    .describe('Per table: its rows naming the person, or for a rollup how many rows it holds of them'),
})

const days = (what: string) =>
  z.number().int().min(1).max(3650).nullable().describe(`${what}; null: the server's default`)

const regionNames = new Intl.DisplayNames(['en'], { type: 'region' })
/** An ISO 3166 alpha-2 code, upper case, that names a region (Intl knows it: 'XX' is refused). */
const countryCode = z
  .string()
  .regex(/^[A-Z]{2}$/)
  // The regex failing does not stop the refinement, and Intl throws on a malformed code.
  .refine((code) => /^[A-Z]{2}$/.test(code) && regionNames.of(code) !== code, 'Unknown ISO 3166 alpha-2 code')
  .describe('ISO 3166 alpha-2 country code, upper case')

const companyOnlyBody = z
  .strictObject({
    enabled: z.boolean(),
    countries: z
      .array(countryCode)
      .max(300)
      .optional()
      .describe('The countries; left out or empty: the EEA (EU 27 + IS, LI, NO; not CH or GB)'),
  })
  .describe(
    'Company-only mode: hits whose IP country is listed identify companies (from the network), never ' +
      'people (identify hits are dropped and counted as `company_only`), and keep no IP address',
  )

const companyOnlySchema = z.object({
  enabled: z.boolean(),
  countries: z.array(z.string()).describe("The organization's list; empty: the EEA"),
  appliedCountries: z.array(z.string()).describe('The countries the mode applies to now (empty when off)'),
})

const settingsBody = z.strictObject({
  retentionDays: days('Days raw data is kept (page views, sessions, per-visitor rollups, events)').optional(),
  ipRetentionDays: days(
    'Days a full IP address is kept before it is truncated (IPv4 /24, IPv6 /48)',
  ).optional(),
  companyOnly: companyOnlyBody.optional(),
})

const settingsSchema = z.object({
  retentionDays: z.number().int().nullable().describe('Days raw data is kept; null: forever'),
  ipRetentionDays: z.number().int().nullable().describe('Days a full IP address is kept; null: forever'),
  own: z
    .object({ retentionDays: z.number().int().nullable(), ipRetentionDays: z.number().int().nullable() })
    .describe("The organization's own values; null where the server's default applies"),
  rawDataFrom: z
    .string()
    .nullable()
    .describe(
      'From when raw data exists (older data is deleted within RETENTION_INTERVAL_MS): statistics of earlier ' +
        'ranges keep their totals and chart, not their companies, visitors or sessions; null: kept forever',
    ),
  companyOnly: companyOnlySchema,
})

/** The settings as answered: what applies, the organization's own values, and from when raw data is kept. */
async function presentSettings(services: ApiServices, organizationId: string) {
  const row = await services.repos.privacySettings.get({ organization_id: organizationId })
  const applied = effectivePrivacy(row, services.config.retention)
  return {
    retentionDays: applied.retentionDays,
    ipRetentionDays: applied.ipRetentionDays,
    own: { retentionDays: row?.retention_days || null, ipRetentionDays: row?.ip_retention_days || null },
    rawDataFrom: rawDataFrom(applied.retentionDays, Date.now()),
    companyOnly: {
      enabled: Boolean(row?.company_only),
      countries: row?.company_only_countries ?? [],
      appliedCountries: [...companyOnlyCountries(row)],
    },
  }
}

/** Who asked, as the erasure records it. */
const requester = (principal: { userId: string | null; keyId: string }) =>
  principal.userId ? `user:${principal.userId}` : `key:${principal.keyId}`

export const privacyRoutes: Route[] = [
  defineRoute({
    operationId: 'getPrivacySettings',
    method: 'GET',
    path: '/organization/{organizationId}/privacy',
    auth: 'organization',
    scope: 'read',
    tenancy: 'organization-param',
    tag,
    summary: "The organization's retention and company-only countries",
    params: organizationParams,
    response: { status: 200, description: 'The settings that apply', schema: settingsSchema },
    errors: [],
    example: (ids) => ({ params: { organizationId: ids.organizationId } }),
    async handler({ organization, services }) {
      return presentSettings(services, addressed(organization).id)
    },
  }),
  defineRoute({
    operationId: 'updatePrivacySettings',
    method: 'PUT',
    path: '/organization/{organizationId}/privacy',
    auth: 'organization',
    scope: 'admin',
    tenancy: 'organization-param',
    tag,
    summary: "Set the organization's retention and company-only countries",
    description:
      'Fields left out keep their value; null returns a field to the server default (`RETENTION_DAYS`, ' +
      '`IP_RETENTION_DAYS`). A worker applies the retention every `RETENTION_INTERVAL_MS` (an hour): raw ' +
      'data older than `retentionDays` is deleted, IP addresses older than `ipRetentionDays` are truncated. ' +
      '`companyOnly` replaces the mode as a whole; ingest applies it to hits within seconds.',
    params: organizationParams,
    body: settingsBody,
    response: { status: 200, description: 'The settings that apply now', schema: settingsSchema },
    errors: [],
    example: (ids) => ({
      params: { organizationId: ids.organizationId },
      body: { retentionDays: 395, ipRetentionDays: 30, companyOnly: { enabled: true, countries: [] } },
    }),
    async handler({ organization, body, services }) {
      const organizationId = addressed(organization).id
      const current = await services.repos.privacySettings.get({ organization_id: organizationId })
      const at = new Date().toISOString()
      const value = (given: number | null | undefined, stored: number | undefined) =>
        given === undefined ? (stored ?? 0) : (given ?? 0)
      await services.repos.privacySettings.save({
        organization_id: organizationId,
        retention_days: value(body.retentionDays, current?.retention_days),
        ip_retention_days: value(body.ipRetentionDays, current?.ip_retention_days),
        company_only: body.companyOnly ? Number(body.companyOnly.enabled) : (current?.company_only ?? 0),
        company_only_countries: body.companyOnly
          ? [...new Set(body.companyOnly.countries ?? [])].sort()
          : (current?.company_only_countries ?? []),
        created_at: current?.created_at ?? at,
        updated_at: at,
      })
      return presentSettings(services, organizationId)
    },
  }),
  defineRoute({
    operationId: 'erasePerson',
    method: 'DELETE',
    path: '/organization/{organizationId}/persons',
    auth: 'organization',
    scope: 'admin',
    tenancy: 'organization-param',
    tag,
    summary: 'Erase a person (right to erasure)',
    description:
      'Deletes every row that names the person in the organization, found from exactly one of ' +
      '`email`, `emailSha256` or `visitorId` in the body: their visitors, page views, sessions and ' +
      'rollup rows, identifications, events and the webhook deliveries and flow runs of those ' +
      'events, phone searches, ICP scores, list memberships, and the contacts of the dataset they ' +
      'were identified as. The statistics are adjusted as if their page views had never been ' +
      'stored. Their browser, which still sends its visitor id, becomes a new anonymous visitor. ' +
      'The erasure is recorded (who, when, which kind of key, how many rows), never the key. ' +
      'Answers when the rows are gone. Erasing someone unknown erases nothing and answers the same way.',
    params: organizationParams,
    body: personKeySchema,
    response: {
      status: 200,
      description: 'Erased',
      schema: z.object({ erasure: erasureSchema, kept: keptSchema }),
    },
    errors: [],
    example: (ids) => ({
      params: { organizationId: ids.organizationId },
      body: { email: 'jane.doe@example.com' },
    }),
    async handler({ principal, organization, body, services }) {
      const caller = callerPrincipal(principal)
      const result = await erasePerson(
        {
          store: services.store,
          repos: services.repos,
          locks: services.coordination.locks,
          ...services.privacy,
        },
        addressed(organization).id,
        body,
        requester(caller),
      )
      const { erasureId, kept, ...erasure } = result
      return { erasure: { id: erasureId, requestedBy: requester(caller), ...erasure }, kept }
    },
  }),
  defineRoute({
    operationId: 'exportPerson',
    method: 'POST',
    path: '/organization/{organizationId}/persons/export',
    auth: 'organization',
    scope: 'admin',
    tenancy: 'organization-param',
    tag,
    summary: 'Export everything held about a person (right of access)',
    description:
      'The same search as an erasure, changing nothing: every record that names the person, with ' +
      'every column, per table; rollups derived from the page views are counted. Name the person ' +
      'by exactly one of `email`, `emailSha256` or `visitorId`.',
    params: organizationParams,
    body: personKeySchema,
    response: { status: 200, description: 'What is held about the person', schema: exportSchema },
    errors: [],
    example: (ids) => ({
      params: { organizationId: ids.organizationId },
      body: { visitorId: ids.visitorId },
    }),
    async handler({ organization, body, services }) {
      return exportPerson({ store: services.store, repos: services.repos }, addressed(organization).id, body)
    },
  }),
  defineRoute({
    operationId: 'listErasures',
    method: 'GET',
    path: '/organization/{organizationId}/erasures',
    auth: 'organization',
    scope: 'admin',
    tenancy: 'organization-param',
    tag,
    summary: "The organization's erasures, latest first",
    params: organizationParams,
    response: {
      status: 200,
      description: 'The record of each erasure',
      schema: z.object({ erasures: z.array(erasureSchema) }),
    },
    errors: [],
    example: (ids) => ({ params: { organizationId: ids.organizationId } }),
    async handler({ organization, services }) {
      return { erasures: await listErasures(services.store, addressed(organization).id) }
    },
  }),
]
