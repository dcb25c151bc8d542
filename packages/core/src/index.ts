export {
  addressOrganization,
  addressPartnerOrganization,
  hasScope,
  managingPartnerId,
  requireKeyManagement,
  requireScope,
  type Scope,
  scopes,
  scopesGranting,
  userActedFor,
  userRoleIn,
} from './access/access.js'
export type { Principal } from './access/auth.js'
export type {
  MembershipRow,
  OrganizationRow,
  PartnerRow,
  ProductType,
  UserRow,
} from './accounts/rows.js'
export { type AudienceFilter, audienceSql } from './analytics/audience.js'
export {
  type ChartInterval,
  type ChartPoint,
  chartIntervalFor,
  visitorsChart,
} from './analytics/chart.js'
export {
  type CompanySortKey,
  type CompanyStatistics,
  companySortKeys,
  companyStatistics,
} from './analytics/companies.js'
export {
  type CompanyCsvField,
  companyCsvFields,
  exportCompanyCsv,
  exportVisitorCsv,
  type VisitorCsvField,
  visitorCsvFields,
} from './analytics/export.js'
export {
  type SettleResult,
  settleFirstHours,
  settleFirstHoursNow,
  startFirstHoursSettling,
} from './analytics/first-hours.js'
export {
  effectiveRange,
  type PageRequest,
  type StatisticsQuery,
  type TimeRange,
} from './analytics/scope.js'
export { isTimeZone, startOfDayIn } from './analytics/time-zone.js'
export { statisticsTotals, type Totals } from './analytics/totals.js'
export type { VisitorStatistics } from './analytics/visitor-rows.js'
export { type VisitorStatisticsQuery, visitorStatistics } from './analytics/visitors.js'
export {
  createOrganizationApiKey,
  listApiKeys,
  listPartnerKeys,
  type NewApiKeyInput,
  revokeApiKey,
  revokePartnerKey,
} from './api-keys/api-keys.js'
export {
  type CreateApiKeyInput,
  type CreatePartnerKeyInput,
  createApiKey,
  createPartnerKey,
  partnerKeyScopes,
} from './api-keys/issue.js'
export {
  createKeyAuthenticator,
  type KeyAuthenticator,
  type KeyAuthenticatorOptions,
} from './api-keys/key-authenticator.js'
export {
  createKeyUsageRecorder,
  type KeyUsageRecorder,
  type KeyUsageRecorderOptions,
  readKeyUsage,
} from './api-keys/key-usage.js'
export {
  type IssuedKey,
  issueKey,
  type KeyKind,
  keyExpiry,
  keyPrefixLength,
  newTrackingKey,
  organizationKeyPattern,
  partnerKeyPattern,
  trackingKeyPattern,
} from './api-keys/keys.js'
export type { ApiKeyRow } from './api-keys/rows.js'
export { applyInvoice, applySubscription } from './billing/apply.js'
export { approveCheckout, pendingApprovals } from './billing/approval.js'
export { type BillingEventType, type BillingPayload, isBillingEvent } from './billing/billing-events.js'
export {
  createLocalProvider,
  type LocalBillingProvider,
  type LocalProviderOptions,
  type PendingApproval,
} from './billing/local-provider.js'
export {
  type CustomerInfo,
  cancelSubscription,
  customerInfo,
  customerPortal,
  presentSubscription,
  processCheckout,
  startCheckout,
  updateSubscriptionPlan,
} from './billing/operations.js'
export {
  defaultPlans,
  isB2bPlan,
  loadPlans,
  type Plan,
  planByPrice,
  planPriceLabel,
} from './billing/plans.js'
export type {
  BillingProvider,
  PostalAddress,
  ProviderCheckout,
  ProviderCustomer,
  ProviderInvoice,
  ProviderSubscription,
  ProviderWebhookEvent,
  ProviderWebhookFact,
  SubscriptionStatus,
} from './billing/provider.js'
export { billingSweep, handleProviderWebhook } from './billing/provider-sync.js'
export { createStripeProvider, type StripeProviderOptions } from './billing/stripe-provider.js'
export { type BillingDeps, planOf, readSubscription, type SubscriptionRow } from './billing/subscriptions.js'
export { createBoundedCache } from './bounded-cache.js'
export { type CompanyRow, companiesTable } from './companies/rows.js'
export {
  type Config,
  ConfigError,
  configSchema,
  type IntegrationProviderConfig,
  loadConfig,
  type Role,
} from './config.js'
export {
  type ContactField,
  contactFieldDefinitions,
  contactFields,
  type ProfileContact,
  profileContactFields,
  type VisitorContactField,
  visitorContactFields,
} from './contact-fields/contact-fields.js'
export {
  type Coordination,
  type CoordinationErrorHandler,
  createMemoryCoordination,
  createRedisCoordination,
  type JobHandler,
  type JobInfo,
  type JobOptions,
  type JobQueue,
  type KeyValue,
  type LockHandle,
  type Locks,
  LockTimeoutError,
  type PubSub,
  type RateLimiter,
  type RateLimiterOptions,
  type RateLimitResult,
} from './coordination/index.js'
export { type PeriodicTask, startPeriodicTask } from './coordination/periodic.js'
export {
  type AdjustCreditsInput,
  adjustCredits,
  balanceKinds,
  type ChargeResult,
  type CreditEntryKind,
  type CreditEntryRow,
  type CreditThreshold,
  chargeIdentification,
  chargeIdentifications,
  creditBalance,
  creditBalances,
  creditThresholdsCrossed,
  type GrantCreditsInput,
  grantCredits,
  identificationEntryId,
  initialGrantEntryId,
  maxCreditAmount,
  mayIdentifyPerson,
} from './credits/ledger.js'
export { type CsvValue, csvCell, csvCellSql, isoCellSql } from './csv.js'
export {
  type DomainResource,
  type DomainStatus,
  findVerifiedDomain,
  normalizeDomain,
  type PartnerDomainRow,
  presentDomain,
  readPartnerDomain,
  recheckVerifiedDomains,
  setPartnerDomain,
  type VerifyResult,
  verifyPartnerDomain,
} from './custom-domain/custom-domain.js'
export { createDnsResolver, type DnsResolver } from './custom-domain/dns-check.js'
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
} from './email/lifecycle.js'
export { escapeHtml } from './email/mail-templates.js'
export { unsubscribePath, verifyUnsubscribeToken } from './email/mail-unsubscribe.js'
export { createFileMailer, createSmtpMailer, type Mailer } from './email/mailer.js'
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
} from './email/preferences.js'
export type { EndpointDoc } from './endpoint-doc.js'
export { AppError, appError, type ErrorCode, type ErrorEntry, errorCatalogue, reservedFor } from './errors.js'
export {
  appendEvents,
  appendNewEvents,
  dispatchEvents,
  type EventJob,
  type EventProcessing,
  type EventProcessingOptions,
  type EventRetry,
  type EventType,
  eventIdOf,
  eventJobName,
  InFlightEvents,
  markEventsDispatched,
  readEvents,
  type StoredEvent,
  startEventProcessing,
} from './events/events.js'
export {
  type CompanyFilter,
  type ContactFilter,
  companyFilterSchema,
  contactFilterSchema,
  type Filter,
  filterSchema,
} from './filters/filter.js'
export { type ErrorBody, toErrorBody } from './http-errors.js'
export * from './icp/index.js'
export { type IcpConfigRow, icpConfigsTable } from './icp/rows.js'
export {
  type ContactRow,
  contactsTable,
  emailKey,
  emailMaxLength,
  emailSha256,
  findContactsByKeys,
  normalizeEmail,
} from './identification/contacts.js'
export {
  createIdentifiedVisitors,
  type IdentifiedVisitors,
  type IdentifiedVisitorsOptions,
} from './identification/identified-visitors.js'
export {
  type IdentifyDeps,
  type IdentifyHit,
  type IdentifyResult,
  identifyVisitors,
} from './identification/identify.js'
export {
  type IdentificationEventType,
  type IdentificationPayload,
  type IdentificationPayloadInput,
  type IdentifiedVisitor,
  identificationPayload,
} from './identification/payload.js'
export { newId, nextVersion, randomToken, safeEqual, sha256Hex } from './ids.js'
export { type AdsAccount, AdsApiError } from './integrations/ads-api.js'
export {
  createFlow,
  deleteFlow,
  type FlowDeps,
  type FlowNodes,
  type FlowRow,
  type FlowRun,
  flowIdPattern,
  flowNodesSchema,
  flowRuns,
  flowTriggers,
  getFlow,
  listFlows,
  presentFlow,
  runFlowsForEvent,
} from './integrations/flows.js'
export {
  accessToken,
  callbackPath,
  completeInstall,
  connectedIntegration,
  disconnectIntegration,
  type IntegrationDeps,
  type IntegrationRow,
  type IntegrationType,
  integrationTypes,
  integratorToken,
  presentIntegrations,
  providerOf,
  readIntegration,
  readIntegrations,
  redeemIntegratorToken,
  requestInstall,
  selectAdsAccount,
} from './integrations/integrations.js'
export { countContacts } from './lists/contact-count.js'
export { type ContactMatch, contactMatch } from './lists/contact-match.js'
export {
  type AutoUpdateStatus,
  autoRefreshIntervalMs,
  autoUpdateStatus,
  deleteList,
  findList,
  type ListDeps,
  listEmailHashes,
  listFilter,
  listIdPattern,
  organizationLists,
  refreshDueLists,
  refreshList,
  type SaveListInput,
  saveList,
  startListAutoRefresh,
} from './lists/lists.js'
export { type ListRow, listsTable } from './lists/rows.js'
export { type BootstrapFile, type BootstrapResult, bootstrapIfEmpty } from './organizations/bootstrap.js'
export {
  callerOrganization,
  createOrganizationFor,
  listAddressableOrganizations,
  listMembers,
  listPartnerOrganizations,
  type Member,
  type NewOrganizationInput,
  type OrganizationUpdate,
  removeMember,
  setAutoPhoneEnrichment,
  setMaxOverages,
  updateOrganization,
} from './organizations/organizations.js'
export {
  type CreateOrganizationInput,
  createOrganization,
  createPartner,
  createUser,
  type InitialCredits,
} from './organizations/tenancy.js'
export {
  acceptPhoneCallback,
  autoEnrichPhone,
  createDatasetPhoneProvider,
  createHttpPhoneProvider,
  type PhoneProvider,
  type PhoneSearchDeps,
  type PhoneSearchJob,
  type PhoneSearchRow,
  type PhoneSearchStatus,
  type ProfilePhoneFields,
  phoneSearchCost,
  phoneSearchJobName,
  profilePhoneFields,
  readPhoneSearch,
  runPhoneSearchJob,
  startPhoneSearch,
  startPhoneSearchSweep,
  sweepPhoneSearches,
  toE164,
} from './phone-search/index.js'
export { createRepositories, type Repositories } from './repositories.js'
export { type SecretBox, secretBox } from './secret-box/secret-box.js'
export type { InsertOptions } from './store/client.js'
export {
  classifyStoreError,
  createStore,
  type QueryParams,
  type Store,
  StoreError,
  type StoreErrorKind,
  type StoreOptions,
} from './store/client.js'
export { type DataDirLock, DataDirLockedError, lockDataDir } from './store/data-dir-lock.js'
export {
  appliedMigrations,
  defaultMigrationsDir,
  isMigrated,
  type MigrateOptions,
  type Migration,
  MigrationError,
  migrate,
  readMigrations,
} from './store/migrate.js'
export type { PageViewRow } from './store/page-view-row.js'
export {
  createReadModel,
  entityChangedChannel,
  type ReadModel,
  type ReadModelOptions,
} from './store/read-model.js'
export { type DdlTarget, renderMigration, renderStatement, splitStatements } from './store/render-ddl.js'
export {
  createEntityRepository,
  type EntityDefinition,
  type EntityRepository,
  type FindOptions,
} from './store/repository.js'
export { storedTime } from './store/time.js'
export {
  getPixelConfig,
  type PixelConfigUpdate,
  parseIcpSettings,
  updatePixelConfig,
} from './visitor-tracking/pixel-config.js'
export {
  blankContactFields,
  type PixelConfigRow,
  type VisitorContactFields,
  type VisitorRow,
} from './visitor-tracking/rows.js'
export {
  getVisitorProfile,
  type PageViewEntry,
  type VisitorProfile,
  type VisitorProfileOptions,
  type VisitorSession,
} from './visitor-tracking/visitors.js'
export {
  presentWebhookConfig,
  readWebhookConfig,
  updateWebhookConfig,
  type WebhookDeps,
  type WebhookKind,
  webhookKinds,
} from './webhooks/config.js'
export { redeliver, testWebhook, webhookLogs } from './webhooks/delivery-log.js'
export { startWebhookDispatcher, type WebhookDispatcher } from './webhooks/dispatcher.js'
export {
  type AttemptRow,
  type DeliveryRow,
  enqueueStoredEvent,
  enqueueWebhookEvent,
} from './webhooks/outbox.js'
export type { WebhookConfigRow } from './webhooks/rows.js'
export { sampleWebhookPayload } from './webhooks/sample-payloads.js'
