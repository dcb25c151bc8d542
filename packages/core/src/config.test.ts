import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from './config.js'

describe('loadConfig', () => {
  it('has working defaults', () => {
    const config = loadConfig({})
    expect(config).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      dataDir: path.resolve('./data'),
      role: 'all',
      clickhouse: { url: undefined, database: 'default', cluster: undefined, sessions: 4 },
      entityCacheTtlMs: 30_000,
      redis: { url: undefined, prefix: 'vid:' },
      logLevel: 'info',
      trustProxy: false,
      apiRateLimit: 1000,
      initialCredits: 1000,
      statisticsCacheRows: 20_000,
      metricsToken: undefined,
    })
  })

  it('reads every setting', () => {
    const config = loadConfig({
      PORT: '9000',
      HOST: '127.0.0.1',
      DATA_DIR: '/tmp/x',
      PUBLIC_URL: 'https://t.example.com/',
      ROLE: 'ingest',
      CLICKHOUSE_URL: 'http://ch:8123',
      CLICKHOUSE_USER: 'u',
      CLICKHOUSE_PASSWORD: 'p',
      CLICKHOUSE_DATABASE: 'vid',
      CLICKHOUSE_CLUSTER: 'main',
      CLICKHOUSE_SESSIONS: '2',
      ENTITY_CACHE_TTL_MS: '5000',
      REDIS_URL: 'redis://r:6379',
      LOG_LEVEL: 'debug',
      TRUST_PROXY: 'true',
      API_RATE_LIMIT: '50',
      INITIAL_CREDITS: '0',
      STATISTICS_CACHE_ROWS: '0',
      METRICS_TOKEN: 'a-long-enough-scrape-token',
    })
    expect(config).toMatchObject({
      port: 9000,
      publicUrl: 'https://t.example.com',
      role: 'ingest',
      clickhouse: {
        url: 'http://ch:8123',
        user: 'u',
        password: 'p',
        database: 'vid',
        cluster: 'main',
        sessions: 2,
      },
      entityCacheTtlMs: 5000,
      redis: { url: 'redis://r:6379' },
      trustProxy: true,
      apiRateLimit: 50,
      initialCredits: 0,
      statisticsCacheRows: 0,
      metricsToken: 'a-long-enough-scrape-token',
    })
  })

  it.each([
    [{ PORT: 'eighty' }, /^Invalid PORT \(got "eighty"\)/],
    [{ PORT: '70000' }, /^Invalid PORT/],
    [{ ROLE: 'boss' }, /^Invalid ROLE \(got "boss"\)/],
    [{ LOG_LEVEL: 'loud' }, /^Invalid LOG_LEVEL/],
    [{ CLICKHOUSE_URL: 'ftp://x' }, /^Invalid CLICKHOUSE_URL: must be a URL/],
    [{ REDIS_URL: 'http://x' }, /^Invalid REDIS_URL/],
    [{ CLICKHOUSE_DATABASE: 'a-b;DROP' }, /^Invalid CLICKHOUSE_DATABASE/],
    [{ CLICKHOUSE_SESSIONS: '0' }, /^Invalid CLICKHOUSE_SESSIONS/],
    [{ ENTITY_CACHE_TTL_MS: '10' }, /^Invalid ENTITY_CACHE_TTL_MS/],
    [{ TRUST_PROXY: 'maybe' }, /^Invalid TRUST_PROXY/],
    [{ METRICS_TOKEN: 'short' }, /^Invalid METRICS_TOKEN: must be 16 to 256 printable characters/],
    [{ METRICS_TOKEN: 'has a space in the middle' }, /^Invalid METRICS_TOKEN/],
    [{ INITIAL_CREDITS: '-1' }, /^Invalid INITIAL_CREDITS \(got "-1"\)/],
    [{ INITIAL_CREDITS: '2.5' }, /^Invalid INITIAL_CREDITS/],
  ])('rejects %j with one line naming the variable', (env, message) => {
    const error = (() => {
      try {
        loadConfig(env)
      } catch (e) {
        return e
      }
    })()
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as Error).message).toMatch(message)
    expect((error as Error).message).not.toContain('\n')
  })

  it('memory: 768 MiB for the embedded engine, half of it per statement, sizes in bytes or MiB/GiB', () => {
    const mib = 1024 ** 2
    expect(loadConfig({}).clickhouse).toMatchObject({ memoryLimit: 768 * mib, queryMemoryLimit: 384 * mib })
    expect(loadConfig({ STORE_MEMORY_LIMIT: '2GiB' }).clickhouse).toMatchObject({
      memoryLimit: 2048 * mib,
      queryMemoryLimit: 1024 * mib,
    })
    expect(
      loadConfig({ STORE_MEMORY_LIMIT: String(512 * mib), STORE_QUERY_MEMORY_LIMIT: '100M' }).clickhouse,
    ).toMatchObject({ memoryLimit: 512 * mib, queryMemoryLimit: 100 * mib })
    // A statement can never be allowed more than the whole engine.
    expect(
      loadConfig({ STORE_MEMORY_LIMIT: '256MiB', STORE_QUERY_MEMORY_LIMIT: '1GiB' }).clickhouse
        .queryMemoryLimit,
    ).toBe(256 * mib)
    expect(() => loadConfig({ STORE_MEMORY_LIMIT: '64MiB' })).toThrow(
      /^Invalid STORE_MEMORY_LIMIT.*at least 128 MiB/,
    )
    expect(() => loadConfig({ STORE_MEMORY_LIMIT: 'lots' })).toThrow(/^Invalid STORE_MEMORY_LIMIT/)
    expect(() => loadConfig({ STORE_QUERY_MEMORY_LIMIT: '1TiB' })).toThrow(
      /^Invalid STORE_QUERY_MEMORY_LIMIT/,
    )
  })

  it('never echoes secrets or URLs that may hold credentials', () => {
    expect(() => loadConfig({ REDIS_URL: 'http://user:hunter2@x' })).toThrow(/^Invalid REDIS_URL: /)
    expect(() => loadConfig({ REDIS_URL: 'http://user:hunter2@x' })).not.toThrow(/hunter2/)
    expect(() => loadConfig({ METRICS_TOKEN: 'hunter2' })).not.toThrow(/hunter2/)
  })

  it('integrations: none by default; a partial one or one without SECRET_KEY stops the start', () => {
    expect(loadConfig({}).integrations).toMatchObject({
      searchAds: undefined,
      socialAds: undefined,
      audienceBatchSize: 1000,
    })
    const searchAds = {
      SEARCH_ADS_CLIENT_ID: 'app',
      SEARCH_ADS_AUTHORIZE_URL: 'https://ads.example/oauth/authorize',
      SEARCH_ADS_TOKEN_URL: 'https://ads.example/oauth/token',
      SEARCH_ADS_API_URL: 'https://api.ads.example/v1/',
    }
    expect(() => loadConfig(searchAds)).toThrow(/SECRET_KEY: required when an integration/)
    expect(() => loadConfig({ SEARCH_ADS_CLIENT_ID: 'app', SECRET_KEY: 'k'.repeat(32) })).toThrow(
      'Invalid SEARCH_ADS_AUTHORIZE_URL: required when SEARCH_ADS_CLIENT_ID is set',
    )
    expect(() => loadConfig({ ...searchAds, SECRET_KEY: 'short' })).toThrow(/SECRET_KEY.*32 characters/)
    const config = loadConfig({ ...searchAds, SECRET_KEY: 'k'.repeat(32), SEARCH_ADS_SCOPES: 'a, b c' })
    expect(config.integrations.searchAds).toEqual({
      name: 'Search ads',
      clientId: 'app',
      clientSecret: undefined,
      authorizeUrl: 'https://ads.example/oauth/authorize',
      tokenUrl: 'https://ads.example/oauth/token',
      apiUrl: 'https://api.ads.example/v1',
      scopes: ['a', 'b', 'c'],
      platform: 'neutral',
    })
    expect(config.integrations.socialAds).toBeUndefined()
    expect(() =>
      loadConfig({ ...searchAds, SECRET_KEY: 'k'.repeat(32), SEARCH_ADS_PLATFORM: 'tiktok' }),
    ).toThrow(/^Invalid SEARCH_ADS_PLATFORM \(got "tiktok"\)/)
  })

  it('integrations on Google or Meta: their documented endpoints by default, their own settings, a client secret required', () => {
    const secret = { SECRET_KEY: 'k'.repeat(32) }
    const google = loadConfig({
      ...secret,
      SEARCH_ADS_PLATFORM: 'google',
      SEARCH_ADS_CLIENT_ID: 'app.apps.googleusercontent.com',
      SEARCH_ADS_CLIENT_SECRET: 'shh',
      SEARCH_ADS_CONSENT_AD_USER_DATA: 'CONSENT_GRANTED',
      SEARCH_ADS_MEMBERSHIP_DAYS: '90',
    }).integrations.searchAds
    expect(google).toMatchObject({
      platform: 'google',
      authorizeUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
      tokenUrl: 'https://oauth2.googleapis.com/token',
      apiUrl: 'https://datamanager.googleapis.com/v1',
      scopes: ['https://www.googleapis.com/auth/datamanager'],
      google: {
        consent: { adUserData: 'CONSENT_GRANTED', adPersonalization: undefined },
        membershipDays: 90,
      },
    })
    const meta = loadConfig({
      ...secret,
      SOCIAL_ADS_PLATFORM: 'meta',
      SOCIAL_ADS_CLIENT_ID: '1234567890',
      SOCIAL_ADS_CLIENT_SECRET: 'shh',
      SOCIAL_ADS_GRAPH_VERSION: 'v25.0',
    }).integrations.socialAds
    expect(meta).toMatchObject({
      platform: 'meta',
      authorizeUrl: 'https://www.facebook.com/v25.0/dialog/oauth',
      tokenUrl: 'https://graph.facebook.com/v25.0/oauth/access_token',
      apiUrl: 'https://graph.facebook.com',
      scopes: ['ads_management'],
      meta: { graphVersion: 'v25.0' },
    })
    expect(() =>
      loadConfig({ ...secret, SOCIAL_ADS_PLATFORM: 'meta', SOCIAL_ADS_CLIENT_ID: '1234567890' }),
    ).toThrow('Invalid SOCIAL_ADS_CLIENT_SECRET: required when SOCIAL_ADS_PLATFORM=meta')
    expect(() => loadConfig({ SEARCH_ADS_CONSENT_AD_USER_DATA: 'yes' })).toThrow(
      /^Invalid SEARCH_ADS_CONSENT_AD_USER_DATA/,
    )
    expect(() => loadConfig({ SOCIAL_ADS_GRAPH_VERSION: '26' })).toThrow(/^Invalid SOCIAL_ADS_GRAPH_VERSION/)
  })

  it('billing: local by default; stripe needs its secret key; a bad plans file names the field', () => {
    expect(loadConfig({}).billing.provider).toBe('local')
    expect(loadConfig({}).billing.plans.map((plan) => plan.id)).toEqual(['standard', 'b2b'])
    expect(() => loadConfig({ BILLING_PROVIDER: 'stripe' })).toThrow(
      'Invalid STRIPE_SECRET_KEY: required when BILLING_PROVIDER=stripe',
    )
    expect(() => loadConfig({ STRIPE_SECRET_KEY: 'pk_live_123456789' })).toThrow(/STRIPE_SECRET_KEY/)
    expect(() => loadConfig({ PLANS_FILE: '/nonexistent/plans.json' })).toThrow(/Invalid PLANS_FILE/)
  })
})
