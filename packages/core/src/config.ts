// The service's settings (`Config`), made once at start-up from the environment variables that
// config-schema.ts describes, a section per area.
import path from 'node:path'
import { loadPlans, type Plan } from './billing/plans.js'
import { type AdsPlatformChoice, configSchema, type ParsedEnv, pathList, type Role } from './config-schema.js'
import {
  googleDataManagerApiUrl,
  googleOAuth,
  metaDialogUrl,
  metaGraphUrl,
  metaGraphVersion,
  metaScopes,
} from './integrations/platform-endpoints.js'

export { type AdsPlatformChoice, adsPlatformChoices, configSchema, type Role } from './config-schema.js'

export interface Config {
  port: number
  host: string
  dataDir: string
  publicUrl: string | undefined
  role: Role
  clickhouse: {
    url: string | undefined
    user: string | undefined
    password: string | undefined
    database: string
    cluster: string | undefined
    /** Embedded engine: sessions of the data directory that run queries side by side. */
    sessions: number
    /** Embedded engine: sessions of background work (store.background), apart from `sessions`. */
    backgroundSessions: number
    /** Embedded engine: what the engine may hold in all (max_server_memory_usage; its caches are parts of it). */
    memoryLimit: number
    /** Embedded engine: what one statement may hold (max_memory_usage of every session). */
    queryMemoryLimit: number
  }
  /** How long a process serves its in-memory copy of an entity without asking the store. */
  entityCacheTtlMs: number
  /** How often a worker scores the visitors that changed since its last pass (ICP incremental). */
  icpRescoreIntervalMs: number
  /**
   * How often a worker settles `first_hours` for the visitors with new page views: the statistics'
   * distinct counts (visitors, sessions, companies, the chart, the lists' totals) lag this much.
   */
  analyticsSettleIntervalMs: number
  /** What an organization keeps unless its privacy settings say otherwise (core privacy/retention.ts). */
  retention: {
    /** Days of raw data kept (page views, sessions, per-visitor rollups, events); 0: forever. */
    days: number
    /** Days a full IP address is kept before it is truncated; 0: forever. */
    ipDays: number
    /** How often a worker applies the retention. */
    intervalMs: number
  }
  email: {
    /** SMTP server (nodemailer URL); unset: messages are written to DATA_DIR/mail as .eml files. */
    smtpUrl: string | undefined
    from: string
    /** Signs unsubscribe links; unset: a secret kept in DATA_DIR/email-secret. */
    secret: string | undefined
  }
  /** The name partners' custom domains point their CNAME to (default: PUBLIC_URL's host). */
  customDomainTarget: string | undefined
  webhooks: {
    /** Seconds to wait before each retry; after the last, a delivery is `failed`. */
    retryScheduleMs: number[]
    /** Deliver to private, loopback and link-local addresses (tests, trusted networks). */
    allowPrivate: boolean
    /** Deliveries in flight per partner (one slow receiver never holds another partner's). */
    concurrency: number
    /** SECRET_KEY: when set, webhook secrets are stored sealed with it (AES-256-GCM). */
    secretKey: string | undefined
  }
  integrations: {
    /** Encrypts stored tokens (AES-256-GCM); required once an integration is configured. */
    secretKey: string | undefined
    /** Hashes per upload to an ads platform's audience. */
    audienceBatchSize: number
    searchAds: IntegrationProviderConfig | undefined
    socialAds: IntegrationProviderConfig | undefined
  }
  billing: {
    provider: 'local' | 'stripe'
    plans: readonly Plan[]
    /**
     * The local provider applies a confirmed checkout of a paid plan at once instead of waiting for
     * the operator's `billing approve`: for a single-tenant install, whose only tenant is its operator.
     */
    localAutoApprove: boolean
    stripe: {
      secretKey: string | undefined
      webhookSecret: string | undefined
      /** The Stripe API's address (default Stripe's own; tests and proxies set another). */
      apiUrl: string | undefined
    }
  }
  phone: {
    provider: 'dataset' | 'http'
    /** How long a search may stay ongoing before it is expired, in ms. */
    searchTimeoutMs: number
    http: {
      url: string | undefined
      method: 'GET' | 'POST'
      authHeader: { name: string; value: string } | undefined
      phonePath: string
      mode: 'sync' | 'callback' | 'poll'
      pollUrl: string | undefined
    }
    defaultCountry: string | undefined
  }
  /** How old a list with auto-update may get before the worker refreshes it (default 24 hours). */
  listAutoRefreshMs: number
  redis: { url: string | undefined; prefix: string }
  logLevel: ParsedEnv['LOG_LEVEL']
  trustProxy: boolean
  shutdownTimeoutMs: number
  ingest: {
    /** When a hit is acknowledged: once in the spool (ClickHouse written behind), or once in ClickHouse. */
    ack: 'spool' | 'store'
    batchRows: number
    batchMs: number
    /** With `ack: 'spool'`, the longest a hit waits for the spool's next write and fdatasync. */
    syncMs: number
    /** How long identify hits wait to be identified together (the identification queue). */
    identifyBatchMs: number
    /** Bound of the local spool (DATA_DIR/spool); past it, /collect answers 503. */
    spoolMaxBytes: number
    /** City .mmdb (MaxMind or DB-IP); unset: the bundled DB-IP Lite City; `off`: no geo. */
    geoMmdbPath: string | undefined
    /** ASN .mmdb or a directory of ip-location-db ASN CSVs; unset: bundled; `off`: none. */
    asnDataPath: string | undefined
    /** JSON merged over the curated ASN classification. */
    asnClassificationPath: string | undefined
    /** Files of CIDRs / addresses (VPN, proxy, Tor exits) marked anonymous. */
    anonymousIpLists: string[]
    /** Files of CIDRs / addresses marked hosting. */
    hostingIpLists: string[]
    /** How often imported company IP ranges are reloaded. */
    companyIpsRefreshMs: number
    /** DNS servers (`ip`, `ip:port`, `[ipv6]:port`) for reverse DNS; empty: the system's. */
    dnsServers: string[]
    /** Company by reverse DNS (PTR name -> registered domain -> company). */
    reverseDns: boolean
  }
  bootstrap: boolean
  /** Requests per minute per API key. */
  apiRateLimit: number
  /** Identification credits a new organization's ledger opens with (0: none). */
  initialCredits: number
  /**
   * The rows the kept statistics answers hold at most (a list's rows; a totals answer counts 1),
   * each kept while the data it read is unchanged (analytics/answer-cache.ts); 0 turns the cache off.
   */
  statisticsCacheRows: number
  /**
   * Bearer token that GET /metrics requires when set; unset, /metrics answers loopback clients only
   * (judged by the socket address, never a forwarded one).
   */
  metricsToken: string | undefined
}

/** A bad setting: `message` is one line naming the variable, fit to print without a stack trace. */
export class ConfigError extends Error {
  override name = 'ConfigError'
}

/** An ads platform this server connects to with OAuth 2.0 (authorization code with PKCE). */
export interface IntegrationProviderConfig {
  /** Shown in the integrations list. */
  name: string
  clientId: string
  clientSecret: string | undefined
  authorizeUrl: string
  tokenUrl: string
  /** The ads API (accounts, audiences): see packages/api/README.md, "Integrations". */
  apiUrl: string
  scopes: string[]
  /** The AdsPlatform adapter that speaks to it (`*_PLATFORM`; the server builds it). */
  platform: AdsPlatformChoice
  /** Google's settings (SEARCH_ADS_CONSENT_*, SEARCH_ADS_MEMBERSHIP_DAYS), with `platform: 'google'`. */
  google?: {
    consent: {
      adUserData?: 'CONSENT_GRANTED' | 'CONSENT_DENIED'
      adPersonalization?: 'CONSENT_GRANTED' | 'CONSENT_DENIED'
    }
    membershipDays: number | undefined
  }
  /** Meta's settings (SOCIAL_ADS_GRAPH_VERSION), with `platform: 'meta'`. */
  meta?: { graphVersion: string }
}

/**
 * One integration type's settings: unset when none of its variables is; a start-up error naming
 * the missing ones when only some are.
 */
function integrationProvider(
  c: ParsedEnv,
  prefix: 'SEARCH_ADS' | 'SOCIAL_ADS',
  defaultName: string,
): IntegrationProviderConfig | undefined {
  const given = (name: string) => (c as Record<string, unknown>)[`${prefix}_${name}`] as string | undefined
  const platform = c[`${prefix}_PLATFORM`]
  const defaults = platformDefaults(platform, c.SOCIAL_ADS_GRAPH_VERSION)
  const value = (name: string) => given(name) ?? defaults[name]
  const required = ['CLIENT_ID', 'AUTHORIZE_URL', 'TOKEN_URL', 'API_URL']
  const set = required.filter((name) => given(name) !== undefined)
  if (set.length === 0) return undefined
  const missing = required.filter((name) => value(name) === undefined)
  if (missing.length > 0) {
    throw new ConfigError(`Invalid ${prefix}_${missing[0]}: required when ${prefix}_${set[0]} is set`)
  }
  // Google's web clients and Meta's app (its appsecret_proof and token trade) need the secret.
  if (platform !== 'neutral' && !value('CLIENT_SECRET')) {
    throw new ConfigError(`Invalid ${prefix}_CLIENT_SECRET: required when ${prefix}_PLATFORM=${platform}`)
  }
  if (!c.SECRET_KEY) {
    throw new ConfigError(
      `Invalid SECRET_KEY: required when an integration (${prefix}_*) is configured: it encrypts the stored tokens`,
    )
  }
  return {
    name: value('NAME') ?? defaultName,
    clientId: value('CLIENT_ID')!,
    clientSecret: value('CLIENT_SECRET'),
    authorizeUrl: value('AUTHORIZE_URL')!,
    tokenUrl: value('TOKEN_URL')!,
    apiUrl: value('API_URL')!.replace(/\/+$/, ''),
    scopes: (value('SCOPES') ?? '').split(/[\s,]+/).filter(Boolean),
    platform,
    ...(platform === 'google'
      ? {
          google: {
            consent: {
              adUserData: c.SEARCH_ADS_CONSENT_AD_USER_DATA,
              adPersonalization: c.SEARCH_ADS_CONSENT_AD_PERSONALIZATION,
            },
            membershipDays: c.SEARCH_ADS_MEMBERSHIP_DAYS,
          },
        }
      : {}),
    ...(platform === 'meta'
      ? { meta: { graphVersion: c.SOCIAL_ADS_GRAPH_VERSION ?? metaGraphVersion } }
      : {}),
  }
}

/**
 * The documented endpoints of a platform with an adapter, so its type needs only the client id
 * and secret; every one can still be set (a local server in tests).
 */
function platformDefaults(
  platform: AdsPlatformChoice,
  graphVersion: string | undefined,
): Record<string, string> {
  if (platform === 'google') {
    return {
      AUTHORIZE_URL: googleOAuth.authorizeUrl,
      TOKEN_URL: googleOAuth.tokenUrl,
      API_URL: googleDataManagerApiUrl,
      SCOPES: googleOAuth.scope,
    }
  }
  if (platform === 'meta') {
    const version = graphVersion ?? metaGraphVersion
    return {
      AUTHORIZE_URL: `${metaDialogUrl}/${version}/dialog/oauth`,
      TOKEN_URL: `${metaGraphUrl}/${version}/oauth/access_token`,
      API_URL: metaGraphUrl,
      SCOPES: metaScopes.join(' '),
    }
  }
  return {}
}

/** PLANS_FILE's plans; a bad file is a ConfigError like any bad variable. */
function loadPlansOrFail(file: string | undefined): readonly Plan[] {
  try {
    return loadPlans(file)
  } catch (error) {
    throw new ConfigError(`Invalid PLANS_FILE: ${(error as Error).message}`)
  }
}

/** The parsed environment; a ConfigError naming the first bad variable (its value too, unless secret). */
function parseEnv(env: Record<string, string | undefined>): ParsedEnv {
  const parsed = configSchema.safeParse(env)
  if (parsed.success) return parsed.data
  const issue = parsed.error.issues[0]!
  const variable = String(issue.path[0] ?? 'environment')
  const value = env[variable]
  const shown =
    value === undefined || /PASSWORD|SECRET|KEY|TOKEN|URL/.test(variable) ? '' : ` (got "${value}")`
  throw new ConfigError(`Invalid ${variable}${shown}: ${issue.message}`)
}

const clickhouseSection = (c: ParsedEnv): Config['clickhouse'] => ({
  url: c.CLICKHOUSE_URL,
  user: c.CLICKHOUSE_USER,
  password: c.CLICKHOUSE_PASSWORD,
  database: c.CLICKHOUSE_DATABASE,
  cluster: c.CLICKHOUSE_CLUSTER,
  sessions: c.CLICKHOUSE_SESSIONS,
  backgroundSessions: c.CLICKHOUSE_BACKGROUND_SESSIONS,
  memoryLimit: c.STORE_MEMORY_LIMIT,
  // Half by default: two heavy statements at once still fit, a third is refused rather than all.
  queryMemoryLimit: Math.min(c.STORE_QUERY_MEMORY_LIMIT ?? c.STORE_MEMORY_LIMIT / 2, c.STORE_MEMORY_LIMIT),
})

const webhooksSection = (c: ParsedEnv): Config['webhooks'] => ({
  retryScheduleMs: c.WEBHOOK_RETRY_SCHEDULE.split(',').map((part) => Math.round(Number(part) * 1000)),
  allowPrivate: c.WEBHOOK_ALLOW_PRIVATE,
  concurrency: c.WEBHOOK_CONCURRENCY,
  secretKey: c.SECRET_KEY,
})

const integrationsSection = (c: ParsedEnv): Config['integrations'] => ({
  secretKey: c.SECRET_KEY,
  audienceBatchSize: c.AUDIENCE_BATCH_SIZE,
  searchAds: integrationProvider(c, 'SEARCH_ADS', 'Search ads'),
  socialAds: integrationProvider(c, 'SOCIAL_ADS', 'Social ads'),
})

const billingSection = (c: ParsedEnv): Config['billing'] => ({
  provider: c.BILLING_PROVIDER,
  plans: loadPlansOrFail(c.PLANS_FILE),
  localAutoApprove: c.BILLING_LOCAL_AUTO_APPROVE,
  stripe: {
    secretKey: c.STRIPE_SECRET_KEY,
    webhookSecret: c.STRIPE_WEBHOOK_SECRET,
    apiUrl: c.STRIPE_API_URL,
  },
})

/** PHONE_HTTP_AUTH_HEADER (`Name: value`, checked by the schema) as a header name and value. */
function headerOf(setting: string | undefined): { name: string; value: string } | undefined {
  if (!setting) return undefined
  const colon = setting.indexOf(':')
  return { name: setting.slice(0, colon).trim(), value: setting.slice(colon + 1).trim() }
}

const phoneSection = (c: ParsedEnv): Config['phone'] => ({
  provider: c.PHONE_PROVIDER,
  searchTimeoutMs: c.PHONE_SEARCH_TIMEOUT,
  http: {
    url: c.PHONE_HTTP_URL,
    method: c.PHONE_HTTP_METHOD,
    authHeader: headerOf(c.PHONE_HTTP_AUTH_HEADER),
    phonePath: c.PHONE_HTTP_PHONE_PATH,
    mode: c.PHONE_HTTP_MODE,
    pollUrl: c.PHONE_HTTP_POLL_URL,
  },
  defaultCountry: c.PHONE_DEFAULT_COUNTRY?.toUpperCase(),
})

/**
 * The insert bounds of each acknowledgement mode (bench/README.md, "Throughput, latency and loss"):
 * acknowledged from the spool, larger inserts cost less per row and hold no request; acknowledged
 * from ClickHouse, every request waits for its batch, and larger batches make HTTP work and inserts
 * take turns.
 */
const insertBounds = { spool: { rows: 10_000, ms: 1000 }, store: { rows: 1000, ms: 200 } } as const

const ingestSection = (c: ParsedEnv): Config['ingest'] => ({
  ack: c.INGEST_ACK,
  batchRows: c.INGEST_BATCH_ROWS ?? insertBounds[c.INGEST_ACK].rows,
  batchMs: c.INGEST_BATCH_MS ?? insertBounds[c.INGEST_ACK].ms,
  syncMs: c.INGEST_SYNC_MS,
  identifyBatchMs: c.IDENTIFY_BATCH_MS,
  spoolMaxBytes: c.SPOOL_MAX_BYTES,
  geoMmdbPath: c.GEO_MMDB_PATH,
  asnDataPath: c.ASN_DATA_PATH,
  asnClassificationPath: c.ASN_CLASSIFICATION_PATH,
  anonymousIpLists: pathList(c.ANONYMOUS_IP_LISTS),
  hostingIpLists: pathList(c.HOSTING_IP_LISTS),
  companyIpsRefreshMs: c.COMPANY_IPS_REFRESH_MS,
  dnsServers: pathList(c.DNS_SERVERS),
  reverseDns: c.REVERSE_DNS,
})

/**
 * Parses settings from an environment map.
 * @example const config = loadConfig(process.env)
 * @throws ConfigError naming the first bad variable
 */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const c = parseEnv(env)
  if (c.BILLING_PROVIDER === 'stripe' && !c.STRIPE_SECRET_KEY) {
    throw new ConfigError('Invalid STRIPE_SECRET_KEY: required when BILLING_PROVIDER=stripe')
  }
  return {
    port: c.PORT,
    host: c.HOST,
    dataDir: path.resolve(c.DATA_DIR),
    publicUrl: c.PUBLIC_URL?.replace(/\/+$/, ''),
    role: c.ROLE,
    clickhouse: clickhouseSection(c),
    entityCacheTtlMs: c.ENTITY_CACHE_TTL_MS,
    icpRescoreIntervalMs: c.ICP_RESCORE_INTERVAL_MS,
    analyticsSettleIntervalMs: c.ANALYTICS_SETTLE_INTERVAL_MS,
    retention: { days: c.RETENTION_DAYS, ipDays: c.IP_RETENTION_DAYS, intervalMs: c.RETENTION_INTERVAL_MS },
    listAutoRefreshMs: c.LIST_AUTO_REFRESH_MS,
    email: { smtpUrl: c.SMTP_URL, from: c.MAIL_FROM, secret: c.EMAIL_SECRET },
    customDomainTarget:
      c.CUSTOM_DOMAIN_TARGET?.toLowerCase().replace(/\.$/, '') ??
      (c.PUBLIC_URL ? new URL(c.PUBLIC_URL).hostname : undefined),
    webhooks: webhooksSection(c),
    integrations: integrationsSection(c),
    billing: billingSection(c),
    phone: phoneSection(c),
    redis: { url: c.REDIS_URL, prefix: c.REDIS_PREFIX },
    logLevel: c.LOG_LEVEL,
    trustProxy: c.TRUST_PROXY,
    shutdownTimeoutMs: c.SHUTDOWN_TIMEOUT_MS,
    ingest: ingestSection(c),
    bootstrap: c.BOOTSTRAP,
    apiRateLimit: c.API_RATE_LIMIT,
    initialCredits: c.INITIAL_CREDITS,
    statisticsCacheRows: c.STATISTICS_CACHE_ROWS,
    metricsToken: c.METRICS_TOKEN,
  }
}
