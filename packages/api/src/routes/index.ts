import type { Route } from '../route-definition.js'
import { apiKeyRoutes } from './api-keys.js'
import { companyRoutes } from './companies.js'
import { contactRoutes } from './contacts.js'
import { icpConfigRoutes } from './icp-configs.js'
import { integrationRoutes } from './integrations.js'
import { listRoutes } from './lists.js'
import { organizationRoutes } from './organizations.js'
import { partnerRoutes } from './partner.js'
import { partnerDomainRoutes } from './partner-domain.js'
import { partnerEmailPreferenceRoutes } from './partner-email-preferences.js'
import { partnerIcpConfigRoutes } from './partner-icp-configs.js'
import { partnerWebhookRoutes } from './partner-webhooks.js'
import { paymentRoutes } from './payments.js'
import { pingRoutes } from './ping.js'
import { privacyRoutes } from './privacy.js'
import { visitorTrackingRoutes } from './visitor-tracking.js'

/** Every /api/v1 route. The plugin, the OpenAPI document and the tenant/scope matrix all read this. */
export const routes: readonly Route[] = [
  ...pingRoutes,
  ...apiKeyRoutes,
  ...organizationRoutes,
  ...visitorTrackingRoutes,
  ...partnerRoutes,
  ...icpConfigRoutes,
  ...partnerIcpConfigRoutes,
  ...companyRoutes,
  ...contactRoutes,
  ...listRoutes,
  ...partnerWebhookRoutes,
  ...partnerEmailPreferenceRoutes,
  ...partnerDomainRoutes,
  ...paymentRoutes,
  ...integrationRoutes,
  ...privacyRoutes,
]
