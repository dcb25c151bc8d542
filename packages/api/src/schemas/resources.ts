// Response shapes of the resources. `z.object` strips unknown keys, so a reply never carries a field
// that is not documented here (in the OpenAPI document they are closed: additionalProperties false).
import { type Scope, scopes } from '@visitor-id/core/access'
import { type ProfileContact, profileContactFields } from '@visitor-id/core/contact-fields'
import { z } from 'zod'
import { timestamp } from './common.js'

const scopeNames = scopes as readonly Scope[] as [Scope, ...Scope[]]

/** One of the five scopes. */
export const scopeSchema = z.enum(scopeNames)

/** Spec resource "API key". */
export const apiKeySchema = z.object({
  id: z.string(),
  organizationId: z.string(),
  createdByUserId: z.string().nullable(),
  name: z.string(),
  keyPrefix: z.string().describe('First 12 characters of the key'),
  scopes: z.array(z.string()),
  status: z.enum(['active', 'revoked']),
  expiresAt: timestamp.nullable(),
  lastUsedAt: timestamp.nullable().describe('Updated at most about once a minute'),
  createdAt: timestamp,
})

/** Spec resource "Organization" (plus the fields the spec leaves open). */
export const organizationSchema = z.object({
  id: z.string(),
  name: z.string(),
  domain: z.string().nullable(),
  productType: z.enum(['standard', 'plus_employee']),
  isAgency: z.boolean(),
  agencyId: z.string().nullable().describe('The agency of a sub-organization'),
  maxOverages: z.number().nullable(),
  autoPhoneEnrichmentEnabled: z.boolean(),
  // The organization's credit balance: the sum of its ledger (README: identificationCredits).
  identificationCredits: z.number().int(),
  createdAt: timestamp,
  updatedAt: timestamp,
})

/** The members of an organization, owner first. */
export const membersSchema = z.object({
  organizationId: z.string(),
  members: z.array(
    z.object({
      userId: z.string(),
      role: z.enum(['owner', 'member']),
      email: z.string().nullable(),
      name: z.string().nullable(),
      joinedAt: timestamp,
    }),
  ),
})

/** Spec resource "Pixel configuration". */
export const pixelConfigSchema = z.object({
  id: z.string(),
  organizationId: z.string(),
  trackingKey: z.string().describe('Public key the pixel sends with every hit'),
  allowedReferrers: z.array(z.string()),
  verifiedDomains: z.array(z.string()),
  ipTracking: z.boolean().describe('Store visitor IP addresses'),
  respectPrivacySignals: z
    .boolean()
    .describe('Drop hits from browsers sending Global Privacy Control or DNT'),
  formCapture: z.boolean().describe('Capture emails typed into forms (opt-in)'),
  icpSettings: z.record(z.string(), z.unknown()),
  scriptTag: z.object({
    scriptUrl: z.string(),
    jsSnippet: z.string(),
    tagManagerSnippet: z.string(),
  }),
  createdAt: timestamp,
  updatedAt: timestamp,
})

const sessionSchema = z.object({
  id: z.string(),
  startedAt: timestamp,
  endedAt: timestamp,
  country: z.string(),
  region: z.string(),
  city: z.string(),
  isp: z.string(),
  asn: z.string().describe('AS<digits>, or empty when unknown'),
  connectionType: z.string(),
  isHosting: z.boolean(),
  isAnonymous: z.boolean(),
  landingPage: z.string(),
  entryPage: z.string(),
  exitPage: z.string(),
  referrer: z.string(),
  searchEngine: z.string(),
  searchTerm: z.string(),
  utmSource: z.string(),
  utmMedium: z.string(),
  utmCampaign: z.string(),
  utmTerm: z.string(),
  utmContent: z.string(),
  deviceType: z.string(),
  userAgent: z.string(),
  browser: z.string(),
  browserVersion: z.string(),
  os: z.string(),
  osVersion: z.string(),
  deviceModel: z.string(),
  screenWidth: z.number().int(),
  screenHeight: z.number().int(),
  language: z.string(),
  timezone: z.string(),
  ipAddress: z.string().optional().describe('Absent when the organization has IP tracking off'),
  sessionDurationSeconds: z.number().int(),
  pageViewCount: z.number().int(),
  maxScrollPercent: z.number().int(),
  trackingParams: z.record(z.string(), z.string()),
})

/** The contact of a visitor profile: every field core's profile shows, in its order, null when unknown. */
const contactSchema = z.object(
  Object.fromEntries(profileContactFields.map(({ shownAs }) => [shownAs, z.string().nullable()])) as Record<
    keyof ProfileContact,
    z.ZodNullable<z.ZodString>
  >,
)

/** Spec resource "Visitor profile" with the camelCase session object. */
export const visitorProfileSchema = z.object({
  id: z.string(),
  organizationId: z.string(),
  firstSeenAt: timestamp,
  lastSeenAt: timestamp,
  contact: contactSchema
    .nullable()
    .describe(
      'Every contact field of the identification payload but the phone, camelCase (null when ' +
        'unknown); null until identified. A phone is paid data: see `phoneNumber`',
    ),
  company: z
    .object({
      id: z.string(),
      name: z.string(),
      domain: z.string(),
      industry: z.string(),
      size: z.string(),
      employeeSizeRange: z.string(),
      revenueRange: z.string(),
      linkedinUrl: z.string(),
      websiteUrl: z.string(),
      description: z.string(),
      logoUrl: z.string(),
      address: z.string(),
      address2: z.string(),
      city: z.string(),
      region: z.string(),
      postalCode: z.string(),
      country: z.string(),
    })
    .nullable()
    .describe("The contact's company, else the sessions' IP company ('' for fields not known)"),
  icp: z.boolean().describe('Matched by any active ICP config'),
  icpStatuses: z
    .record(z.string(), z.boolean())
    .describe('ICP config slug -> matched, for every active config that has scored the visitor'),
  personaMatch: z.boolean().describe("Any active organization-level config's contact side matched"),
  sessions: z.array(sessionSchema).describe('Newest first (at most 100)'),
  pageViews: z
    .array(z.object({ url: z.string(), title: z.string(), sessionId: z.string(), visitedAt: timestamp }))
    .describe('Newest first (at most 500, from the sessions listed)'),
  phoneNumber: z
    .string()
    .optional()
    .describe(
      'The phone in E.164, only once a phone search of this organization found it (and charged for ' +
        'it): with `phoneNumberSearchStatus` `found`, never otherwise',
    ),
  phoneNumberSearchStatus: z
    .enum(['not_started', 'ongoing', 'found', 'not_found', 'error', 'expired'])
    .optional()
    .describe(
      'The latest phone search. Always present for a B2B (`plus_employee`) organization: ' +
        '`not_started` (no search yet), `ongoing`, `found` (with `phoneNumber`), `not_found` (never ' +
        'retried), `error` (the provider failed) or `expired` (no answer within ' +
        'PHONE_SEARCH_TIMEOUT). After `error` or `expired` one retry is allowed; once that retry ' +
        'ended in `error` or `expired` too, a new start answers 409 `retry_exhausted` (a code beyond ' +
        "the spec's six). Absent for other organizations, unless they unlocked a phone while B2B " +
        '(then `found`)',
    ),
})

/** The reply of both phone search routes (spec: `{phoneNumberSearchStatus, visitorId}`). */
export const phoneSearchReplySchema = z
  .object({
    phoneNumberSearchStatus: z
      .enum(['ongoing', 'found', 'not_found', 'error'])
      .describe('`ongoing` once started: poll the visitor profile or wait for `visitor.phone_revealed`'),
    visitorId: z.string(),
  })
  .describe('PhoneNumberSearch')

/** The codes a phone search start may answer, in the order they are checked. */
export const phoneSearchErrors = [
  'not_plus_employee',
  'resource_not_found',
  'no_linkedin',
  'search_ongoing',
  'already_unlocked',
  'not_found',
  'retry_exhausted',
  'insufficient_credits',
] as const

export const phoneSearchDescription =
  'B2B (`plus_employee`) organizations only; the visitor needs a LinkedIn URL. Starting reserves 5 ' +
  'identification credits (the balance minus other running searches must be at least 5); a found ' +
  'phone charges them once, any other end gives them back. The search runs in the background: poll ' +
  'the visitor profile (`phoneNumber` appears once found) or wait for `visitor.phone_revealed`. A ' +
  'search that found nothing (`not_found`) is never retried; one that failed (`error`) or got no ' +
  'answer within PHONE_SEARCH_TIMEOUT (`expired`) may be retried once.'
