// The composition root's choices: which adapter each port gets, read from the configuration. This
// is the one place that turns REDIS_URL, BILLING_PROVIDER, PHONE_PROVIDER, SMTP_URL,
// SEARCH_ADS_PLATFORM / SOCIAL_ADS_PLATFORM and their settings into
// implementations; core holds the adapters and takes them as arguments, and the API plugin, the
// pages and the workers receive what is built here (startServer builds it once per process).
import {
  type BillingDeps,
  type BillingProvider,
  createLocalProvider,
  createStripeProvider,
} from '@visitor-id/core/billing'
import type { AdsPlatformChoice, Config, IntegrationProviderConfig } from '@visitor-id/core/config'
import {
  type Coordination,
  type CoordinationErrorHandler,
  createMemoryCoordination,
  createRedisCoordination,
} from '@visitor-id/core/coordination'
import { createFileMailer, createSmtpMailer, type Mailer } from '@visitor-id/core/email'
import {
  type AdsPlatform,
  createGoogleAdsPlatform,
  createMetaAdsPlatform,
  createNeutralAdsPlatform,
  type FlowDeps,
  type IntegrationType,
  integrationTypes,
} from '@visitor-id/core/integrations'
import {
  createDatasetPhoneProvider,
  createHttpPhoneProvider,
  type PhoneProvider,
  type PhoneSearchDeps,
} from '@visitor-id/core/phone-search'
import type { Repositories } from '@visitor-id/core/repositories'
import type { Store } from '@visitor-id/core/store'

/** Where browsers reach this server: PUBLIC_URL, else this machine's port. */
export function publicUrlOf(config: Config): string {
  return config.publicUrl ?? `http://localhost:${config.port}`
}

/**
 * Redis adapters when REDIS_URL is set (several processes), in-process ones otherwise.
 * @example const coordination = createCoordination(config, (error) => log.warn({ err: error }))
 */
export function createCoordination(config: Config, onError?: CoordinationErrorHandler): Coordination {
  const { url, prefix } = config.redis
  if (url) return createRedisCoordination({ url, prefix, onError })
  return createMemoryCoordination({ onError })
}

/** The provider BILLING_PROVIDER names (Stripe's address from STRIPE_API_URL, when set). */
export function createBillingProvider(config: Config, store: Store): BillingProvider {
  const { stripe } = config.billing
  if (config.billing.provider !== 'stripe') {
    return createLocalProvider(store, publicUrlOf(config), { autoApprove: config.billing.localAutoApprove })
  }
  const apiUrl = stripe.apiUrl ? new URL(stripe.apiUrl) : undefined
  return createStripeProvider({
    secretKey: stripe.secretKey ?? '',
    webhookSecret: stripe.webhookSecret,
    ...(apiUrl
      ? {
          host: apiUrl.hostname,
          port: Number(apiUrl.port || (apiUrl.protocol === 'https:' ? 443 : 80)),
          protocol: apiUrl.protocol === 'https:' ? 'https' : 'http',
        }
      : {}),
  })
}

/** The provider PHONE_PROVIDER names; `http` without PHONE_HTTP_URL is a start-up error naming it. */
export function createPhoneProvider(config: Config, store: Store): PhoneProvider {
  if (config.phone.provider === 'dataset') return createDatasetPhoneProvider(store)
  const { http } = config.phone
  if (!http.url) throw new Error('PHONE_PROVIDER=http needs PHONE_HTTP_URL')
  if (http.mode === 'poll' && !http.pollUrl) throw new Error('PHONE_HTTP_MODE=poll needs PHONE_HTTP_POLL_URL')
  return createHttpPhoneProvider({
    url: http.url,
    method: http.method,
    authHeader: http.authHeader,
    phonePath: http.phonePath,
    mode: http.mode,
    ...(http.pollUrl ? { pollUrl: http.pollUrl } : {}),
    ...(config.phone.defaultCountry ? { defaultCountry: config.phone.defaultCountry } : {}),
  })
}

/**
 * Lifecycle emails through SMTP_URL when set; else `.eml` files under DATA_DIR/mail, so an install
 * without a mail server still shows what it would have sent.
 */
export function createMailer(config: Config): Mailer {
  const { smtpUrl, from } = config.email
  return smtpUrl ? createSmtpMailer({ smtpUrl, from }) : createFileMailer({ dataDir: config.dataDir, from })
}

/** One factory per `*_PLATFORM` value: a new adapter is a new entry here (and a value in the schema). */
const adsPlatformFactories: Record<AdsPlatformChoice, (provider: IntegrationProviderConfig) => AdsPlatform> =
  {
    neutral: (provider) => createNeutralAdsPlatform(provider.apiUrl),
    google: (provider) =>
      createGoogleAdsPlatform({
        apiUrl: provider.apiUrl,
        consent: provider.google?.consent ?? {},
        ...(provider.google?.membershipDays ? { membershipDays: provider.google.membershipDays } : {}),
      }),
    meta: (provider) =>
      createMetaAdsPlatform({
        appId: provider.clientId,
        appSecret: provider.clientSecret ?? '',
        graphUrl: provider.apiUrl,
        version: provider.meta?.graphVersion,
      }),
  }

/** The AdsPlatform adapter of each configured integration type (SEARCH_ADS_PLATFORM, SOCIAL_ADS_PLATFORM). */
export function createAdsPlatforms(config: Config): Partial<Record<IntegrationType, AdsPlatform>> {
  const platforms: Partial<Record<IntegrationType, AdsPlatform>> = {}
  for (const type of integrationTypes) {
    const provider = config.integrations[type]
    if (provider) platforms[type] = adsPlatformFactories[provider.platform](provider)
  }
  return platforms
}

interface Parts {
  config: Config
  store: Store
  repos: Repositories
  coordination: Coordination
}

/**
 * The billing service (BILLING_PROVIDER, PLANS_FILE, BILLING_LOCAL_AUTO_APPROVE, STRIPE_*). It holds
 * nothing in memory, so the processes that each build one agree.
 */
export function createBillingDeps(parts: Parts): BillingDeps {
  return {
    store: parts.store,
    repos: parts.repos,
    locks: parts.coordination.locks,
    provider: createBillingProvider(parts.config, parts.store),
    plans: parts.config.billing.plans,
    publicUrl: publicUrlOf(parts.config),
  }
}

/** Phone search: the provider, PHONE_SEARCH_TIMEOUT, and the public URL callbacks come back to. */
export function createPhoneSearchDeps(parts: Parts): PhoneSearchDeps {
  return {
    store: parts.store,
    repos: parts.repos,
    coordination: parts.coordination,
    provider: createPhoneProvider(parts.config, parts.store),
    timeoutMs: parts.config.phone.searchTimeoutMs,
    // PUBLIC_URL itself, no localhost default: without it no callback URL is handed out.
    publicUrl: parts.config.publicUrl,
  }
}

/**
 * The integrations (SEARCH_ADS_*, SOCIAL_ADS_*, SECRET_KEY, AUDIENCE_BATCH_SIZE) and their ads
 * platforms' adapters; nothing in memory.
 */
export function createIntegrationDeps(parts: Parts): FlowDeps {
  return {
    store: parts.store,
    repos: parts.repos,
    coordination: parts.coordination,
    locks: parts.coordination.locks,
    settings: parts.config.integrations,
    platforms: createAdsPlatforms(parts.config),
    publicUrl: publicUrlOf(parts.config),
    allowPrivate: parts.config.webhooks.allowPrivate,
  }
}

/** What the API, the server's pages and the workers share: built once per process. */
export interface ProcessServices {
  billing: BillingDeps
  phone: PhoneSearchDeps
  integrations: FlowDeps
}

/** @example const services = createProcessServices({ config, store, repos, coordination }) */
export function createProcessServices(parts: Parts): ProcessServices {
  return {
    billing: createBillingDeps(parts),
    phone: createPhoneSearchDeps(parts),
    integrations: createIntegrationDeps(parts),
  }
}
