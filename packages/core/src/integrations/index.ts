// The public face of core's integrations domain: what other packages import as @visitor-id/core/integrations.
export { type AdsAccount, AdsApiError, createNeutralAdsPlatform } from './ads-api.js'
export {
  type AdsFailureKind,
  type AdsPlatform,
  AdsPlatformError,
  type AudienceTarget,
  type BatchOutcome,
  type BatchPosition,
  type RequestStatus,
} from './ads-platform.js'
export { runAudienceSyncJob, runFlowsForEvent } from './flow-runs.js'
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
} from './flows.js'
export {
  createGoogleAdsPlatform,
  type GoogleAdsPlatformOptions,
  type GoogleConsentStatus,
  googleAuthorizationParams,
  googleDataManagerApiUrl,
  googleEmailHash,
  googleMaxAudienceMembers,
  googleOAuth,
  isGoogleAdsCustomerId,
  normalizeGoogleEmail,
} from './google-data-manager.js'
export {
  grantExpiresAt,
  type IntegrationStatus,
  integrationStatus,
  reconnectMarginMs,
  type StoredGrant,
} from './grant-expiry.js'
export {
  type IntegrationRow,
  type IntegrationType,
  integrationTypes,
  readIntegration,
  readIntegrations,
} from './integration-store.js'
export {
  accessToken,
  callbackPath,
  completeInstall,
  connectedIntegration,
  disconnectIntegration,
  type IntegrationDeps,
  integrationName,
  integratorToken,
  platformOf,
  presentIntegrations,
  providerOf,
  redeemIntegratorToken,
  requestInstall,
  selectAdsAccount,
} from './integrations.js'
export {
  createMetaAdsPlatform,
  type MetaAdsPlatformOptions,
  type MetaBatchPosition,
  metaDialogUrl,
  metaEmailHash,
  metaGraphUrl,
  metaGraphVersion,
  metaMaxBatch,
  metaOAuthEndpoints,
  metaReconnectMarginMs,
  metaScopes,
  metaSessionId,
  metaTokenNeedsReconnect,
} from './meta-custom-audiences.js'
export { isMetaThrottle } from './meta-errors.js'
export { appSecretProof } from './meta-graph.js'
export type { TokenSet } from './oauth.js'
export {
  type AudienceSyncJob,
  audienceSyncJobName,
  type RequestStatusJob,
  requestStatusJobName,
  runRequestStatusJob,
} from './sync-jobs.js'
export { type AudienceSyncOutcome, lastAudienceSyncs } from './sync-outcome.js'
