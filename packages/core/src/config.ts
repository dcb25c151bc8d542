import { isIP } from 'node:net'
import path from 'node:path'
import { z } from 'zod'
import { loadPlans, type Plan } from './billing/plans.js'

const boolean = z
  .enum(['1', '0', 'true', 'false', 'yes', 'no', 'on', 'off', ''])
  .transform((v) => ['1', 'true', 'yes', 'on'].includes(v))

const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === '' ? undefined : v))

const optionalUrl = (protocols: string[]) =>
  optionalString.refine(
    (v) => {
      if (v === undefined) return true
      try {
        return protocols.includes(new URL(v).protocol)
      } catch {
        return false
      }
    },
    { message: `must be a URL (${protocols.join(' or ')})` },
  )

/** A duration: milliseconds, or a number with `ms`, `s`, `m` or `h` (`10m`); at least 1 s. */
const duration = z.union([z.number(), z.string()]).transform((value, context) => {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/.exec(String(value))
  const factor = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(match?.[2] ?? 'ms') as 'ms']
  const ms = match ? Number(match[1]) * factor : Number.NaN
  if (!Number.isFinite(ms) || ms < 1000 || ms > 7 * 86_400_000) {
    context.addIssue({
      code: 'custom',
      message: 'must be a duration from 1s to 7 days (e.g. 600000, 10m, 30s)',
    })
    return z.NEVER
  }
  return Math.round(ms)
})

const roles = ['all', 'ingest', 'api', 'worker'] as const
export type Role = (typeof roles)[number]

/** Every setting of the service, read from environment variables by `loadConfig` once at start-up. */
export const configSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().min(1).default('0.0.0.0'),
  DATA_DIR: z.string().min(1).default('./data'),
  PUBLIC_URL: optionalUrl(['http:', 'https:']),
  ROLE: z.enum(roles).default('all'),
  CLICKHOUSE_URL: optionalUrl(['http:', 'https:']),
  CLICKHOUSE_USER: optionalString,
  CLICKHOUSE_PASSWORD: optionalString,
  CLICKHOUSE_DATABASE: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be a plain identifier')
    .default('default'),
  CLICKHOUSE_CLUSTER: optionalString.refine((v) => v === undefined || /^[A-Za-z0-9_.-]+$/.test(v), {
    message: 'must be a cluster name (letters, digits, _ . -)',
  }),
  CLICKHOUSE_SESSIONS: z.coerce.number().int().min(1).max(16).default(4),
  ENTITY_CACHE_TTL_MS: z.coerce.number().int().min(1000).max(600_000).default(30_000),
  ICP_RESCORE_INTERVAL_MS: z.coerce.number().int().min(100).max(600_000).default(15_000),
  ANALYTICS_SETTLE_INTERVAL_MS: z.coerce.number().int().min(100).max(600_000).default(1_000),
  SMTP_URL: optionalUrl(['smtp:', 'smtps:']),
  MAIL_FROM: z.string().min(3).max(320).default('Visitor ID <no-reply@localhost>'),
  EMAIL_SECRET: optionalString.refine((v) => v === undefined || v.length >= 16, {
    message: 'must be at least 16 characters',
  }),
  CUSTOM_DOMAIN_TARGET: optionalString.refine(
    (v) =>
      v === undefined || /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]*\.?$/i.test(v),
    { message: 'must be a hostname' },
  ),
  WEBHOOK_RETRY_SCHEDULE: z
    .string()
    .default('60,300,1800,7200,21600')
    .refine(
      (v) => v.split(',').every((part) => /^\s*\d+(\.\d+)?\s*$/.test(part) && Number(part) <= 7 * 86_400),
      {
        message: 'must be seconds, comma-separated (e.g. 60,300,1800,7200,21600)',
      },
    ),
  WEBHOOK_ALLOW_PRIVATE: boolean.default(false),
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(16),
  BILLING_PROVIDER: z.enum(['local', 'stripe']).default('local'),
  BILLING_LOCAL_AUTO_APPROVE: boolean.default(false),
  PLANS_FILE: optionalString,
  STRIPE_SECRET_KEY: optionalString.refine((v) => v === undefined || /^(sk|rk)_[A-Za-z0-9_]{8,}$/.test(v), {
    message: 'must be a Stripe secret (sk_...) or restricted (rk_...) key',
  }),
  STRIPE_WEBHOOK_SECRET: optionalString.refine((v) => v === undefined || v.startsWith('whsec_'), {
    message: 'must be the signing secret of a Stripe webhook endpoint (whsec_...)',
  }),
  STRIPE_API_URL: optionalUrl(['http:', 'https:']),
  SECRET_KEY: optionalString.refine((v) => v === undefined || v.length >= 32, {
    message: 'must be at least 32 characters (e.g. openssl rand -hex 32)',
  }),
  SEARCH_ADS_CLIENT_ID: optionalString,
  SEARCH_ADS_CLIENT_SECRET: optionalString,
  SEARCH_ADS_AUTHORIZE_URL: optionalUrl(['http:', 'https:']),
  SEARCH_ADS_TOKEN_URL: optionalUrl(['http:', 'https:']),
  SEARCH_ADS_API_URL: optionalUrl(['http:', 'https:']),
  SEARCH_ADS_SCOPES: optionalString,
  SEARCH_ADS_NAME: optionalString,
  SOCIAL_ADS_CLIENT_ID: optionalString,
  SOCIAL_ADS_CLIENT_SECRET: optionalString,
  SOCIAL_ADS_AUTHORIZE_URL: optionalUrl(['http:', 'https:']),
  SOCIAL_ADS_TOKEN_URL: optionalUrl(['http:', 'https:']),
  SOCIAL_ADS_API_URL: optionalUrl(['http:', 'https:']),
  SOCIAL_ADS_SCOPES: optionalString,
  SOCIAL_ADS_NAME: optionalString,
  AUDIENCE_BATCH_SIZE: z.coerce.number().int().min(1).max(100_000).default(1000),
  PHONE_PROVIDER: z.enum(['dataset', 'http']).default('dataset'),
  PHONE_SEARCH_TIMEOUT: duration.default(600_000),
  PHONE_HTTP_URL: optionalUrl(['http:', 'https:']),
  PHONE_HTTP_METHOD: z.enum(['GET', 'POST']).default('GET'),
  PHONE_HTTP_AUTH_HEADER: optionalString.refine((v) => v === undefined || /^[A-Za-z0-9-]+:\s*\S/.test(v), {
    message: 'must be "Header-Name: value"',
  }),
  PHONE_HTTP_PHONE_PATH: z.string().min(1).default('phone'),
  PHONE_HTTP_MODE: z.enum(['sync', 'callback', 'poll']).default('sync'),
  PHONE_HTTP_POLL_URL: optionalUrl(['http:', 'https:']),
  PHONE_DEFAULT_COUNTRY: optionalString.refine((v) => v === undefined || /^[A-Za-z]{2}$/.test(v), {
    message: 'must be a two-letter country code',
  }),
  LIST_AUTO_REFRESH_MS: z.coerce
    .number()
    .int()
    .min(1000)
    .max(30 * 86_400_000)
    .default(86_400_000),
  REDIS_URL: optionalUrl(['redis:', 'rediss:']),
  REDIS_PREFIX: z.string().default('vid:'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  TRUST_PROXY: boolean.default(false),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  INGEST_BATCH_ROWS: z.coerce.number().int().min(1).max(100_000).default(1000),
  INGEST_BATCH_MS: z.coerce.number().int().min(1).max(60_000).default(200),
  // Each identification call has a fixed cost of a few store reads and inserts whatever the number
  // of hits; 3 s of identify hits per call pay it rarely enough to keep it to a few percent of
  // ingest's CPU (bench/README.md, "Identify hits").
  IDENTIFY_BATCH_MS: z.coerce.number().int().min(1).max(60_000).default(3000),
  SPOOL_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(512 * 1024 * 1024),
  GEO_MMDB_PATH: optionalString,
  ASN_DATA_PATH: optionalString,
  ASN_CLASSIFICATION_PATH: optionalString,
  ANONYMOUS_IP_LISTS: optionalString,
  HOSTING_IP_LISTS: optionalString,
  COMPANY_IPS_REFRESH_MS: z.coerce.number().int().min(1000).default(300_000),
  DNS_SERVERS: optionalString.refine((v) => pathList(v).every(isDnsServer), {
    message: 'must be a comma-separated list of ip, ip:port or [ipv6]:port',
  }),
  REVERSE_DNS: boolean.default(true),
  BOOTSTRAP: boolean.default(true),
  API_RATE_LIMIT: z.coerce.number().int().min(1).max(1_000_000_000).default(1000),
  INITIAL_CREDITS: z.coerce.number().int().min(0).max(1_000_000_000).default(1000),
  METRICS_TOKEN: optionalString.refine((v) => v === undefined || /^[\x21-\x7e]{16,256}$/.test(v), {
    message: 'must be 16 to 256 printable characters without spaces',
  }),
})

type RawConfig = z.infer<typeof configSchema>

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
  logLevel: RawConfig['LOG_LEVEL']
  trustProxy: boolean
  shutdownTimeoutMs: number
  ingest: {
    batchRows: number
    batchMs: number
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
   * Bearer token that GET /metrics requires when set; unset, /metrics answers loopback clients only
   * (judged by the socket address, never a forwarded one).
   */
  metricsToken: string | undefined
}

/** A comma-separated list of paths. */
const pathList = (value: string | undefined) =>
  (value ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)

/** `ip`, `ip:port` or `[ipv6]:port`: what node:dns `setServers` accepts (addresses, not names). */
function isDnsServer(server: string): boolean {
  const bracketed = /^\[(.+)\]:(\d{1,5})$/.exec(server)
  if (bracketed) return isIP(bracketed[1]!) === 6 && Number(bracketed[2]) <= 65535
  const withPort = /^(\d{1,3}(?:\.\d{1,3}){3}):(\d{1,5})$/.exec(server)
  if (withPort) return isIP(withPort[1]!) === 4 && Number(withPort[2]) <= 65535
  return isIP(server) !== 0
}

/** A bad setting: `message` is one line naming the variable, fit to print without a stack trace. */
export class ConfigError extends Error {
  override name = 'ConfigError'
}

/**
 * Parses settings from an environment map.
 * @example const config = loadConfig(process.env)
 */
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
}

type ParsedEnv = z.infer<typeof configSchema>

/**
 * One integration type's settings: unset when none of its variables is; a start-up error naming
 * the missing ones when only some are.
 */
function integrationProvider(
  c: ParsedEnv,
  prefix: 'SEARCH_ADS' | 'SOCIAL_ADS',
  defaultName: string,
): IntegrationProviderConfig | undefined {
  const value = (name: string) => (c as Record<string, unknown>)[`${prefix}_${name}`] as string | undefined
  const required = ['CLIENT_ID', 'AUTHORIZE_URL', 'TOKEN_URL', 'API_URL']
  const set = required.filter((name) => value(name) !== undefined)
  if (set.length === 0) return undefined
  const missing = required.filter((name) => value(name) === undefined)
  if (missing.length > 0) {
    throw new ConfigError(`Invalid ${prefix}_${missing[0]}: required when ${prefix}_${set[0]} is set`)
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
  }
}

/** PLANS_FILE's plans; a bad file is a ConfigError like any bad variable. */
function loadPlansOrFail(file: string | undefined): readonly Plan[] {
  try {
    return loadPlans(file)
  } catch (error) {
    throw new ConfigError(`Invalid PLANS_FILE: ${(error as Error).message}`)
  }
}

export function loadConfig(env: Record<string, string | undefined>): Config {
  const parsed = configSchema.safeParse(env)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!
    const variable = String(issue.path[0] ?? 'environment')
    const value = env[variable]
    const shown =
      value === undefined || /PASSWORD|SECRET|KEY|TOKEN|URL/.test(variable) ? '' : ` (got "${value}")`
    throw new ConfigError(`Invalid ${variable}${shown}: ${issue.message}`)
  }
  const c = parsed.data
  if (c.BILLING_PROVIDER === 'stripe' && !c.STRIPE_SECRET_KEY) {
    throw new ConfigError('Invalid STRIPE_SECRET_KEY: required when BILLING_PROVIDER=stripe')
  }
  return {
    port: c.PORT,
    host: c.HOST,
    dataDir: path.resolve(c.DATA_DIR),
    publicUrl: c.PUBLIC_URL?.replace(/\/+$/, ''),
    role: c.ROLE,
    clickhouse: {
      url: c.CLICKHOUSE_URL,
      user: c.CLICKHOUSE_USER,
      password: c.CLICKHOUSE_PASSWORD,
      database: c.CLICKHOUSE_DATABASE,
      cluster: c.CLICKHOUSE_CLUSTER,
      sessions: c.CLICKHOUSE_SESSIONS,
    },
    entityCacheTtlMs: c.ENTITY_CACHE_TTL_MS,
    icpRescoreIntervalMs: c.ICP_RESCORE_INTERVAL_MS,
    analyticsSettleIntervalMs: c.ANALYTICS_SETTLE_INTERVAL_MS,
    listAutoRefreshMs: c.LIST_AUTO_REFRESH_MS,
    email: { smtpUrl: c.SMTP_URL, from: c.MAIL_FROM, secret: c.EMAIL_SECRET },
    customDomainTarget:
      c.CUSTOM_DOMAIN_TARGET?.toLowerCase().replace(/\.$/, '') ??
      (c.PUBLIC_URL ? new URL(c.PUBLIC_URL).hostname : undefined),
    webhooks: {
      retryScheduleMs: c.WEBHOOK_RETRY_SCHEDULE.split(',').map((part) => Math.round(Number(part) * 1000)),
      allowPrivate: c.WEBHOOK_ALLOW_PRIVATE,
      concurrency: c.WEBHOOK_CONCURRENCY,
      secretKey: c.SECRET_KEY,
    },
    integrations: {
      secretKey: c.SECRET_KEY,
      audienceBatchSize: c.AUDIENCE_BATCH_SIZE,
      searchAds: integrationProvider(c, 'SEARCH_ADS', 'Search ads'),
      socialAds: integrationProvider(c, 'SOCIAL_ADS', 'Social ads'),
    },
    billing: {
      provider: c.BILLING_PROVIDER,
      plans: loadPlansOrFail(c.PLANS_FILE),
      localAutoApprove: c.BILLING_LOCAL_AUTO_APPROVE,
      stripe: {
        secretKey: c.STRIPE_SECRET_KEY,
        webhookSecret: c.STRIPE_WEBHOOK_SECRET,
        apiUrl: c.STRIPE_API_URL,
      },
    },
    phone: {
      provider: c.PHONE_PROVIDER,
      searchTimeoutMs: c.PHONE_SEARCH_TIMEOUT,
      http: {
        url: c.PHONE_HTTP_URL,
        method: c.PHONE_HTTP_METHOD,
        authHeader: c.PHONE_HTTP_AUTH_HEADER
          ? {
              name: c.PHONE_HTTP_AUTH_HEADER.slice(0, c.PHONE_HTTP_AUTH_HEADER.indexOf(':')).trim(),
              value: c.PHONE_HTTP_AUTH_HEADER.slice(c.PHONE_HTTP_AUTH_HEADER.indexOf(':') + 1).trim(),
            }
          : undefined,
        phonePath: c.PHONE_HTTP_PHONE_PATH,
        mode: c.PHONE_HTTP_MODE,
        pollUrl: c.PHONE_HTTP_POLL_URL,
      },
      defaultCountry: c.PHONE_DEFAULT_COUNTRY?.toUpperCase(),
    },
    redis: { url: c.REDIS_URL, prefix: c.REDIS_PREFIX },
    logLevel: c.LOG_LEVEL,
    trustProxy: c.TRUST_PROXY,
    shutdownTimeoutMs: c.SHUTDOWN_TIMEOUT_MS,
    ingest: {
      batchRows: c.INGEST_BATCH_ROWS,
      batchMs: c.INGEST_BATCH_MS,
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
    },
    bootstrap: c.BOOTSTRAP,
    apiRateLimit: c.API_RATE_LIMIT,
    initialCredits: c.INITIAL_CREDITS,
    metricsToken: c.METRICS_TOKEN,
  }
}
