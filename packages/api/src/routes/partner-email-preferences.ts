// Spec section "Partner: email preferences": a partner's defaults for the lifecycle emails of the
// organizations it manages, and each organization's overrides (docs/decisions.md, "Email").
import {
  emailPreferenceKeys,
  organizationEmailPreferences,
  partnerEmailPreferences,
  resetOrganizationEmailPreferences,
  updateOrganizationEmailPreferences,
  updatePartnerEmailPreferences,
} from '@visitor-id/core/email'
import { z } from 'zod'
import { defineRoute, type Route } from '../route-definition.js'
import { organizationIdParam } from '../schemas/common.js'
import { addressed, partnerPrincipal } from './context.js'

const keyList = emailPreferenceKeys.map((key) => `\`${key}\``).join(', ')

/** `{preferences: {key: boolean}}`: known keys only (an unknown one is a 400 naming it). */
const preferencesBody = z.strictObject({
  preferences: z
    .strictObject(Object.fromEntries(emailPreferenceKeys.map((key) => [key, z.boolean().optional()])))
    .describe(`Keys: ${keyList}; the keys left out keep their value`),
})

const messageSchema = z.object({ message: z.string() })
const organizationParams = z.object({ organizationId: organizationIdParam })
const partnerPreferences = z.object(
  Object.fromEntries(emailPreferenceKeys.map((key) => [key, z.boolean()])) as Record<string, z.ZodBoolean>,
)
const effective = z
  .object({
    enabled: z.boolean(),
    inherited: z.boolean().describe("True when the value is the partner's default"),
  })
  .describe('EffectiveEmailPreference')
const organizationPreferences = z.object(
  Object.fromEntries(emailPreferenceKeys.map((key) => [key, effective])) as Record<string, typeof effective>,
)
const example = { preferences: { credits_low: false, first_visitor_identified: true } }

/** Spec section "Partner: email preferences". */
export const partnerEmailPreferenceRoutes: Route[] = [
  defineRoute({
    operationId: 'getPartnerEmailPreferences',
    method: 'GET',
    path: '/partner/email-preferences',
    auth: 'partner',
    scope: 'read',
    tenancy: 'none',
    tag: 'Partner email preferences',
    summary: "The partner's defaults for its organizations' lifecycle emails",
    description: `Every key, \`true\` when enabled (unset keys are enabled). Keys: ${keyList}.`,
    response: {
      status: 200,
      description: 'The defaults',
      schema: z.object({ preferences: partnerPreferences }),
    },
    errors: [],
    example: () => ({}),
    async handler({ principal, services }) {
      return {
        preferences: await partnerEmailPreferences(services.store, partnerPrincipal(principal).partnerId),
      }
    },
  }),
  defineRoute({
    operationId: 'updatePartnerEmailPreferences',
    method: 'PUT',
    path: '/partner/email-preferences',
    auth: 'partner',
    scope: 'write',
    tenancy: 'none',
    tag: 'Partner email preferences',
    summary: "Set some of the partner's defaults",
    description: 'The keys left out keep their value; an unknown key is a 400 naming it.',
    body: preferencesBody,
    response: { status: 200, description: 'Saved', schema: messageSchema },
    errors: [],
    example: () => ({ body: example }),
    async handler({ principal, body, services }) {
      await updatePartnerEmailPreferences(
        services.store,
        partnerPrincipal(principal).partnerId,
        body.preferences,
      )
      return { message: 'Email preferences updated' }
    },
  }),
  defineRoute({
    operationId: 'getOrganizationEmailPreferences',
    method: 'GET',
    path: '/partner/organizations/{organizationId}/email-preferences',
    auth: 'partner',
    scope: 'read',
    tenancy: 'partner-organization-param',
    tag: 'Partner email preferences',
    summary: "An organization's effective email preferences",
    description:
      "Each key's value for the organization: its own (`inherited: false`), else the partner's " +
      'default (`inherited: true`).',
    params: organizationParams,
    response: {
      status: 200,
      description: 'The effective preferences',
      schema: z.object({ preferences: organizationPreferences }),
    },
    errors: [],
    example: (ids) => ({ params: { organizationId: ids.organizationId } }),
    async handler({ principal, organization, services }) {
      return {
        preferences: await organizationEmailPreferences(
          services.store,
          addressed(organization).id,
          partnerPrincipal(principal).partnerId,
        ),
      }
    },
  }),
  defineRoute({
    operationId: 'updateOrganizationEmailPreferences',
    method: 'PUT',
    path: '/partner/organizations/{organizationId}/email-preferences',
    auth: 'partner',
    scope: 'write',
    tenancy: 'partner-organization-param',
    tag: 'Partner email preferences',
    summary: "Override some of an organization's email preferences",
    description:
      "The organization's values win over the partner's defaults; the keys left out keep their value.",
    params: organizationParams,
    body: preferencesBody,
    response: { status: 200, description: 'Saved', schema: messageSchema },
    errors: [],
    example: (ids) => ({ params: { organizationId: ids.organizationId }, body: example }),
    async handler({ organization, body, services }) {
      await updateOrganizationEmailPreferences(services.store, addressed(organization).id, body.preferences)
      return { message: 'Organization email preferences updated' }
    },
  }),
  defineRoute({
    operationId: 'resetOrganizationEmailPreferences',
    method: 'DELETE',
    path: '/partner/organizations/{organizationId}/email-preferences',
    auth: 'partner',
    scope: 'write',
    tenancy: 'partner-organization-param',
    tag: 'Partner email preferences',
    summary: "Drop an organization's overrides",
    description: "The organization follows the partner's defaults again.",
    params: organizationParams,
    response: { status: 200, description: 'Reverted', schema: messageSchema },
    errors: [],
    example: (ids) => ({ params: { organizationId: ids.organizationId } }),
    async handler({ organization, services }) {
      await resetOrganizationEmailPreferences(services.store, addressed(organization).id)
      return { message: 'Organization email preferences reverted to the partner defaults' }
    },
  }),
]
