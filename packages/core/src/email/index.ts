// The public face of core's email domain: what other packages import as @visitor-id/core/email.
export { integrationReconnectEmails, type ReconnectEmailDeps } from './integration-reconnect.js'
export {
  billingEmail,
  creditEmail,
  emailSecret,
  firstVisitorEmail,
  type LifecycleEmailDeps,
  type LifecycleEmailJob,
  lifecycleEmailJobName,
  queueLifecycleEmail,
  sendLifecycleEmail,
} from './lifecycle.js'
export { escapeHtml } from './mail-templates.js'
export { unsubscribePath, verifyUnsubscribeToken } from './mail-unsubscribe.js'
export { createFileMailer, createSmtpMailer, type Mailer } from './mailer.js'
export {
  type EffectivePreference,
  type EmailPreferenceKey,
  emailPreferenceKeys,
  organizationEmailPreferences,
  type PreferenceValues,
  partnerEmailPreferences,
  resetOrganizationEmailPreferences,
  updateOrganizationEmailPreferences,
  updatePartnerEmailPreferences,
} from './preferences.js'
