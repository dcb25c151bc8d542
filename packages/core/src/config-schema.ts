// What each environment variable accepts: its type, range and default. `loadConfig` (config.ts)
// parses the environment with it and makes the settings object from the result.
import { isIP } from 'node:net'
import { z } from 'zod'

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

/**
 * The AdsPlatform adapters an integration type may use (`SEARCH_ADS_PLATFORM`,
 * `SOCIAL_ADS_PLATFORM`): the server's composition root has one factory per value.
 */
export const adsPlatformChoices = ['neutral', 'google', 'meta'] as const
export type AdsPlatformChoice = (typeof adsPlatformChoices)[number]

/** A consent signal Google's Data Manager API takes, by its own enum names; unset: the account's default. */
const googleConsent = z.enum(['CONSENT_GRANTED', 'CONSENT_DENIED']).optional()

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

const sizeUnits: Record<string, number> = {
  '': 1,
  b: 1,
  k: 1024,
  kib: 1024,
  m: 1024 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gib: 1024 ** 3,
}

/** A size in bytes: a number, or one with `KiB`, `MiB` or `GiB` (`768MiB`; `K`, `M`, `G` too); at least `min`. */
const byteSize = (min: number) =>
  z.union([z.number(), z.string()]).transform((value, context) => {
    const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(String(value))
    const factor = sizeUnits[(match?.[2] ?? '').toLowerCase()]
    const bytes = match && factor ? Math.floor(Number(match[1]) * factor) : Number.NaN
    if (!Number.isFinite(bytes) || bytes < min) {
      context.addIssue({
        code: 'custom',
        message: `must be a size of at least ${min / 1024 ** 2} MiB (bytes, or e.g. 768MiB, 2GiB)`,
      })
      return z.NEVER
    }
    return bytes
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
  CLICKHOUSE_BACKGROUND_SESSIONS: z.coerce.number().int().min(1).max(16).default(2),
  // Sized for a 2 GB host next to a Node heap of 384 MiB (README.md, Operations, "Memory").
  STORE_MEMORY_LIMIT: byteSize(128 * 1024 ** 2).default(768 * 1024 ** 2),
  STORE_QUERY_MEMORY_LIMIT: byteSize(16 * 1024 ** 2).optional(),
  ENTITY_CACHE_TTL_MS: z.coerce.number().int().min(1000).max(600_000).default(30_000),
  ICP_RESCORE_INTERVAL_MS: z.coerce.number().int().min(100).max(600_000).default(15_000),
  ANALYTICS_SETTLE_INTERVAL_MS: z.coerce.number().int().min(100).max(600_000).default(1_000),
  RETENTION_DAYS: z.coerce.number().int().min(0).max(36_500).default(395),
  IP_RETENTION_DAYS: z.coerce.number().int().min(0).max(36_500).default(30),
  RETENTION_INTERVAL_MS: z.coerce.number().int().min(1000).max(86_400_000).default(3_600_000),
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
  SEARCH_ADS_PLATFORM: z.enum(adsPlatformChoices).default('neutral'),
  SEARCH_ADS_CONSENT_AD_USER_DATA: googleConsent,
  SEARCH_ADS_CONSENT_AD_PERSONALIZATION: googleConsent,
  SEARCH_ADS_MEMBERSHIP_DAYS: z.coerce.number().int().min(1).max(540).optional(),
  SOCIAL_ADS_CLIENT_ID: optionalString,
  SOCIAL_ADS_CLIENT_SECRET: optionalString,
  SOCIAL_ADS_AUTHORIZE_URL: optionalUrl(['http:', 'https:']),
  SOCIAL_ADS_TOKEN_URL: optionalUrl(['http:', 'https:']),
  SOCIAL_ADS_API_URL: optionalUrl(['http:', 'https:']),
  SOCIAL_ADS_SCOPES: optionalString,
  SOCIAL_ADS_NAME: optionalString,
  SOCIAL_ADS_PLATFORM: z.enum(adsPlatformChoices).default('neutral'),
  SOCIAL_ADS_GRAPH_VERSION: z
    .string()
    .regex(/^v\d+\.\d+$/, 'must be a Graph API version such as v26.0')
    .optional(),
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
  // When /collect answers 202: once the hit is fsync'd in the spool (`spool`), ClickHouse written
  // behind it in larger batches; or once its batch is in ClickHouse (`store`).
  INGEST_ACK: z.enum(['spool', 'store']).default('spool'),
  // The bounds of a ClickHouse insert of page views (with INGEST_ACK=store, of a request's wait
  // too); unset, the mode's own (config.ts).
  INGEST_BATCH_ROWS: z.coerce.number().int().min(1).max(100_000).optional(),
  INGEST_BATCH_MS: z.coerce.number().int().min(1).max(60_000).optional(),
  // INGEST_ACK=spool: how long a hit waits for the spool's next write and fdatasync (group commit).
  INGEST_SYNC_MS: z.coerce.number().int().min(1).max(1000).default(5),
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
  STATISTICS_CACHE_ROWS: z.coerce.number().int().min(0).max(10_000_000).default(20_000),
  METRICS_TOKEN: optionalString.refine((v) => v === undefined || /^[\x21-\x7e]{16,256}$/.test(v), {
    message: 'must be 16 to 256 printable characters without spaces',
  }),
})

/** The environment as the schema parsed it. */
export type ParsedEnv = z.infer<typeof configSchema>

/** A comma-separated list of paths. */
export const pathList = (value: string | undefined) =>
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
