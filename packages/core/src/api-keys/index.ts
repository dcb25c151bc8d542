// The public face of core's api-keys domain: what other packages import as @visitor-id/core/api-keys.
export {
  createOrganizationApiKey,
  listApiKeys,
  listPartnerKeys,
  type NewApiKeyInput,
  revokeApiKey,
  revokePartnerKey,
} from './api-keys.js'
export {
  type CreateApiKeyInput,
  type CreatePartnerKeyInput,
  createApiKey,
  createPartnerKey,
  partnerKeyScopes,
} from './issue.js'
export {
  createKeyAuthenticator,
  type KeyAuthenticator,
  type KeyAuthenticatorOptions,
} from './key-authenticator.js'
export {
  createKeyUsageRecorder,
  type KeyUsageRecorder,
  type KeyUsageRecorderOptions,
  readKeyUsage,
} from './key-usage.js'
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
} from './keys.js'
export type { ApiKeyRow } from './rows.js'
