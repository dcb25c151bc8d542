// Test helpers for the API's tests: one started server per test file (the embedded store allows one
// data directory per process), and fixtures written through the real repositories.
import { readFileSync } from 'node:fs'
import type { OpenApiDocument } from '@visitor-id/api'
import { type Config, loadConfig } from '@visitor-id/core/config'
import { createMemoryCoordination } from '@visitor-id/core/coordination'
import type { BootstrapFile } from '@visitor-id/core/organizations'
import { type RunningServer, startServer } from '@visitor-id/server'
import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import { expect } from 'vitest'
import { createDocumentChecker } from './documented.js'
import type { Harness } from './harness-api.js'
import {
  billingFixtures,
  type FixtureContext,
  integrationFixtures,
  listFixtures,
  organizationFixtures,
  visitorFixtures,
  webhookFixtures,
} from './harness-fixtures.js'
import { tempDir } from './temp-dir.js'

export type { Harness }

/** Starts a server on a fresh data directory, with extra settings (e.g. `{ API_RATE_LIMIT: '5' }`). */
export async function startHarness(env: Record<string, string> = {}): Promise<Harness> {
  const data = tempDir('vid-api-')
  const config = harnessConfig(data.dir, env)
  const harness = await harnessOn(await startServer(config), config)
  return Object.assign(harness, {
    async restart() {
      await harness.server.stop()
      Object.assign(harness, await harnessOn(await startServer(config), config))
    },
    async stop() {
      await harness.server.stop()
      data.remove()
    },
  })
}

/** The fixtures over one running server. */
async function harnessOn(server: RunningServer, config: Config): Promise<Omit<Harness, 'restart' | 'stop'>> {
  checkEveryAnswer(server.app, (await server.app.inject({ method: 'GET', url: '/openapi.json' })).json())
  const ctx = fixtureContext(server, config)
  const lists = listFixtures(ctx)
  return {
    server,
    repos: ctx.repos,
    store: ctx.store,
    boot: ctx.boot,
    billing: ctx.billing,
    integrations: ctx.integrations,
    request: requestWithKeys(server, ctx.boot),
    ...organizationFixtures(ctx),
    ...visitorFixtures(ctx),
    ...lists,
    ...integrationFixtures(ctx, lists.createList),
    ...billingFixtures(ctx),
    ...webhookFixtures(ctx),
  }
}

/** The test settings over the defaults, then the test's own. */
function harnessConfig(dataDir: string, env: Record<string, string>): Config {
  // Webhooks may go to the tests' receivers on loopback; SSRF tests set WEBHOOK_ALLOW_PRIVATE=0.
  return loadConfig({
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    WEBHOOK_ALLOW_PRIVATE: '1',
    // Tests read what they sent right after its 202: acknowledged once in ClickHouse, it is there.
    // The spool-first acknowledgement (a server's default) has its own tests (ingest-crash,
    // ingest-durability) and sets INGEST_ACK itself.
    INGEST_ACK: 'store',
    // An integration type with settings (its URLs reach nothing: tests that connect set their own).
    SECRET_KEY: 'a-test-secret-key-of-at-least-32-characters',
    SEARCH_ADS_CLIENT_ID: 'visitor-id-test',
    SEARCH_ADS_CLIENT_SECRET: 'not-a-secret',
    SEARCH_ADS_AUTHORIZE_URL: 'http://127.0.0.1:9/authorize',
    SEARCH_ADS_TOKEN_URL: 'http://127.0.0.1:9/token',
    SEARCH_ADS_API_URL: 'http://127.0.0.1:9/ads',
    // The statistics' first_hours are settled by seedVisitor, at once, never by the worker's timer
    // (two passes at once would both insert the same difference).
    ANALYTICS_SETTLE_INTERVAL_MS: '600000',
    // Custom domains point their CNAME here (PUBLIC_URL's host when a test sets PUBLIC_URL).
    ...(env.PUBLIC_URL ? {} : { CUSTOM_DOMAIN_TARGET: 'cname.visitor-id.test' }),
    ...env,
  })
}

function fixtureContext(server: RunningServer, config: Config): FixtureContext {
  const boot = JSON.parse(readFileSync(server.bootstrapFile, 'utf8')) as BootstrapFile
  const { repos, store } = server
  const { locks } = createMemoryCoordination()
  // The server's own services (built once by its composition root), not copies of them.
  const { billing, integrations } = server
  if (!billing || !integrations) throw new Error('The harness needs a role that serves the API')
  return { repos, store, boot, config, locks, billing, integrations }
}

/** `app.inject` with the bootstrap admin key, another key, or none (`key: null`), and a partner key. */
function requestWithKeys(server: RunningServer, boot: BootstrapFile): Harness['request'] {
  return ({ key, partnerKey, headers, ...options }) => {
    const auth: Record<string, string> = {}
    if (key !== null) auth['x-api-key'] = key ?? boot.apiKey
    if (partnerKey) auth['x-partner-api-key'] = partnerKey
    return server.app.inject({ ...options, headers: { ...auth, ...headers } })
  }
}

/**
 * Makes every `inject` of the app (`request`, and tests that inject themselves) check its answer
 * against the served OpenAPI document (`createDocumentChecker`): an answer off the document throws,
 * so the test that sent it fails.
 */
function checkEveryAnswer(app: RunningServer['app'], document: OpenApiDocument): void {
  const check = createDocumentChecker(document)
  const inject = app.inject.bind(app) as (options: InjectOptions) => Promise<LightMyRequestResponse>
  const checked = async (options: InjectOptions) => {
    const response = await inject(options)
    check({ method: options.method ?? 'GET', url: String(options.url ?? options.path ?? '/') }, response)
    return response
  }
  Object.assign(app, { inject: checked })
}

/** The error body (docs/decisions.md, "Error body"), for `toEqual` / `toMatchObject`. */
export function errorBody(statusCode: number, code: string) {
  return { statusCode, error: expect.any(String), code, message: expect.any(String) }
}
