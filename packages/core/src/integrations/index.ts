// The public face of core's integrations domain: what other packages import as @visitor-id/core/integrations.
export { type AdsAccount, AdsApiError } from './ads-api.js'
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
} from './flows.js'
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
