// Test helpers for the API's tests: one started server per test file (the embedded store allows one
// data directory per process), and fixtures written through the real repositories.
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import type { OpenApiDocument } from '@visitor-id/api'
import {
  approveCheckout,
  type BillingDeps,
  type BootstrapFile,
  createApiKey,
  createFlow,
  createIcpConfig,
  createMemoryCoordination,
  createOrganization,
  createUser,
  type FlowDeps,
  type IcpConfigKind,
  type LocalBillingProvider,
  loadConfig,
  nextVersion,
  processCheckout,
  type Repositories,
  readSubscription,
  type Scope,
  type Store,
  type SubscriptionRow,
  saveList,
  secretBox,
  settleFirstHours,
  startCheckout,
  type VisitorRow,
} from '@visitor-id/core'
import { type RunningServer, startServer } from '@visitor-id/server'
import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import { expect } from 'vitest'
import { createDocumentChecker } from './documented.js'
import { personVisitorRow } from './rows.js'
import { tempDir } from './temp-dir.js'

export interface Harness {
  server: RunningServer
  repos: Repositories
  store: Store
  /** The bootstrap agency organization, its admin key (with agency scopes) and its partner key. */
  boot: BootstrapFile
  /** `app.inject` with the key of `as` (default: the bootstrap admin key) in X-API-Key. */
  request(
    options: InjectOptions & { key?: string | null; partnerKey?: string },
  ): Promise<LightMyRequestResponse>
  /** A new organization key; `expiresAt` may lie in the past (the store takes it as given). */
  createKey(
    organizationId: string,
    scopes: Scope[],
    expiresAt?: string,
  ): Promise<{ id: string; plainKey: string }>
  /**
   * A new organization (not a sub-organization of the bootstrap agency) with an admin key; its
   * ledger opens with INITIAL_CREDITS, as POST /organization's does.
   */
  createTenant(options?: { plusEmployee?: boolean }): Promise<{ organizationId: string; key: string }>
  /** A user who is a plain member of the organization. */
  addMember(organizationId: string): Promise<string>
  /** A new ICP config of the organization (no recalculation is asked); returns its slug. */
  createIcpConfig(organizationId: string, kind: IcpConfigKind): Promise<string>
  /**
   * Page views of one visitor in one session, straight into the store (the views make the session
   * and the visitor facts): from Germany with `utm_source=news` unless told otherwise, and with the
   * company ingest would attribute to its IP, if any. The statistics count them at once (first_hours
   * settled, as the worker's pass would within ANALYTICS_SETTLE_INTERVAL_MS).
   */
  seedVisitor(
    organizationId: string,
    pages?: number,
    options?: { visitorId?: string; country?: string; utmSource?: string; companyId?: string },
  ): Promise<{ visitorId: string; sessionId: string }>
  /**
   * A saved list of the organization over every contact, with at least one contact with an email
   * (one is imported the first time), so its export has lines; returns its id.
   */
  createList(organizationId: string): Promise<string>
  /**
   * A visitor of the organization identified as a person with a LinkedIn URL (a visitors row and
   * a page view), ready for a phone search; returns its id.
   */
  seedPerson(organizationId: string, fields?: Partial<VisitorRow>): Promise<string>
  /**
   * A delivery of an event to the partner's identification webhook and its first (failed) attempt,
   * as the dispatcher writes them; returns the log entry's id.
   */
  seedWebhookLog(partnerId: string): Promise<string>
  /** An imported company with these fields; returns its id. */
  seedCompany(fields: Record<string, string>): Promise<string>
  /**
   * A checkout of the standard plan (local provider) the organization confirmed on its page and the
   * operator approved (`approveCheckout`, as `billing approve` does: a plan with a price waits for
   * it), so it is complete; an active subscription it had is ended first. Returns the session id.
   */
  completedCheckout(organizationId: string, priceId?: string): Promise<string>
  /** The billing service the server uses (the local provider unless the test set BILLING_PROVIDER). */
  billing: BillingDeps
  /** The integration services the server uses. */
  integrations: FlowDeps
  /**
   * The organization's `searchAds` integration as connected, straight into the store (tokens sealed
   * as installation seals them, valid an hour): ads accounts `1234567890` and `2222222222`.
   */
  connectIntegration(organizationId: string): Promise<void>
  /** A flow of the organization (a list's refresh syncs it to `searchAds`); returns its id. */
  createFlow(organizationId: string): Promise<string>
  /** Makes the organization subscribed (a processed local checkout), unless it already is. */
  subscribe(organizationId: string): Promise<void>
  /** Ends the organization's subscription (its copy says canceled), as a provider would at a period end. */
  endSubscription(organizationId: string): Promise<void>
  stop(): Promise<void>
}

/** Starts a server on a fresh data directory, with extra settings (e.g. `{ API_RATE_LIMIT: '5' }`). */
export async function startHarness(env: Record<string, string> = {}): Promise<Harness> {
  const data = tempDir('vid-api-')
  // Webhooks may go to the tests' receivers on loopback; SSRF tests set WEBHOOK_ALLOW_PRIVATE=0.
  const config = loadConfig({
    DATA_DIR: data.dir,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    WEBHOOK_ALLOW_PRIVATE: '1',
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
  const server = await startServer(config)
  checkEveryAnswer(server.app, (await server.app.inject({ method: 'GET', url: '/openapi.json' })).json())
  const boot = JSON.parse(readFileSync(server.bootstrapFile, 'utf8')) as BootstrapFile
  const { repos, store } = server
  // Config writes take an organization lock; the test's own fixtures need no other process.
  const { locks } = createMemoryCoordination()
  // The server's own services (built once by its composition root), not copies of them.
  const { billing, integrations } = server
  if (!billing || !integrations) throw new Error('The harness needs a role that serves the API')
  const holds = (row: SubscriptionRow | undefined) =>
    row !== undefined && ['active', 'trialing', 'past_due'].includes(row.status)
  let fixtureContact: Promise<void> | undefined
  const harness: Harness = {
    server,
    repos,
    store,
    boot,
    request({ key, partnerKey, headers, ...options }) {
      const auth: Record<string, string> = {}
      if (key !== null) auth['x-api-key'] = key ?? boot.apiKey
      if (partnerKey) auth['x-partner-api-key'] = partnerKey
      return server.app.inject({ ...options, headers: { ...auth, ...headers } })
    },
    async createKey(organizationId, scopes, expiresAt) {
      const { apiKey, plainKey } = await createApiKey(repos, {
        organizationId,
        createdByUserId: boot.userId,
        name: 'test key',
        scopes,
        expiresAt: expiresAt ?? null,
      })
      return { id: apiKey.id, plainKey }
    },
    async createTenant(options = {}) {
      const user = await createUser(repos, { email: `${randomUUID()}@tenant.test` })
      const { organization } = await createOrganization(repos, {
        name: 'Other tenant',
        ownerUserId: user.id,
        productType: options.plusEmployee ? 'plus_employee' : 'standard',
        initialCredits: { store, amount: config.initialCredits },
      })
      const { plainKey } = await createApiKey(repos, {
        organizationId: organization.id,
        createdByUserId: user.id,
        name: 'tenant admin',
        scopes: ['admin'],
      })
      return { organizationId: organization.id, key: plainKey }
    },
    async addMember(organizationId) {
      const user = await createUser(repos, { email: `${randomUUID()}@member.test`, name: 'Member' })
      const at = new Date().toISOString()
      await repos.memberships.save({
        organization_id: organizationId,
        user_id: user.id,
        role: 'member',
        created_at: at,
        updated_at: at,
      })
      return user.id
    },
    async createIcpConfig(organizationId, kind) {
      const config = await createIcpConfig(repos, locks, organizationId, kind, {
        name: `Fixture ${kind}`,
        ...(kind === 'partner'
          ? {
              rules: {
                groups: [
                  { operator: 'AND', conditions: [{ type: 'country', comparator: 'equals', value: 'DE' }] },
                ],
              },
            }
          : { filter: { company: { industries: ['SaaS'] } } }),
      })
      return config.slug
    },
    async createList(organizationId) {
      fixtureContact ??= (async () => {
        const at = new Date().toISOString()
        await store.insert('contacts', [
          {
            id: 'fixture-contact',
            email: 'fixture@contact.test',
            created_at: at,
            updated_at: at,
            version: 1,
          },
        ])
      })()
      await fixtureContact
      const list = await saveList({ store, repos, locks }, organizationId, {
        name: `Fixture ${randomUUID()}`,
        filter: {},
        contactsFound: 1,
      })
      return list.id
    },
    async seedPerson(organizationId, fields = {}) {
      const { visitorId } = await harness.seedVisitor(organizationId, 1)
      await repos.visitors.save(personVisitorRow(organizationId, visitorId, fields))
      return visitorId
    },
    billing,
    integrations,
    async connectIntegration(organizationId) {
      const box = secretBox(config.integrations.secretKey!)
      const context = `integration:${organizationId}:searchAds`
      const now = new Date().toISOString()
      await store.insert('integrations', [
        {
          organization_id: organizationId,
          type: 'searchAds',
          status: 'connected',
          access_token: box.seal('fixture-access-token', context),
          refresh_token: box.seal('fixture-refresh-token', context),
          expires_at: new Date(Date.now() + 3600_000).toISOString(),
          scope: 'ads',
          ads_accounts: JSON.stringify([
            { id: '1234567890', name: 'Main account' },
            { id: '2222222222', name: 'Second account' },
          ]),
          selected_account_id: '',
          connected_at: now,
          updated_at: now,
          version: nextVersion(),
          is_deleted: 0,
        },
      ])
    },
    async createFlow(organizationId) {
      const listId = await harness.createList(organizationId)
      const flow = await createFlow(integrations, organizationId, {
        title: 'Fixture flow',
        nodes: {
          trigger: { type: 'list.refreshed', listId },
          actions: [{ type: 'audience.sync', listId, integrationType: 'searchAds' }],
        },
      })
      return flow.id
    },
    async completedCheckout(organizationId, priceId = 'price_standard_monthly') {
      await harness.endSubscription(organizationId)
      const organization = (await repos.organizations.get({ id: organizationId }))!
      const plan = billing.plans.find((p) => p.priceId === priceId)!
      const checkout = await startCheckout(billing, organization, { priceId, productId: plan.productId })
      const local = billing.provider as LocalBillingProvider
      await local.confirmCheckout(checkout.id, billing.plans)
      if (local.needsApproval(plan)) await approveCheckout(billing, checkout.id)
      return checkout.id
    },
    async subscribe(organizationId) {
      if (holds(await readSubscription(store, organizationId))) return
      await processCheckout(billing, await harness.completedCheckout(organizationId))
    },
    async endSubscription(organizationId) {
      const row = await readSubscription(store, organizationId)
      if (!holds(row)) return
      await store.insert('subscriptions', [
        { ...row, status: 'canceled', cancel_at_period_end: 0, b2b_until: null, version: nextVersion() },
      ])
    },
    async seedWebhookLog(partnerId) {
      const at = new Date().toISOString()
      const deliveryId = `whd_${randomUUID()}_identification`
      const logId = `whl_${randomUUID().replaceAll('-', '').slice(0, 24)}`
      const common = {
        partner_id: partnerId,
        organization_id: boot.organizationId,
        kind: 'identification',
        event_id: randomUUID(),
        event_type: 'visitor.identified',
      }
      await store.insert('webhook_deliveries', [
        {
          ...common,
          id: deliveryId,
          body: '{"event_type":"visitor.identified"}',
          status: 'failed',
          attempts: 1,
          next_attempt_at: at,
          created_at: at,
          updated_at: at,
          version: 1,
        },
      ])
      await store.insert('webhook_attempts', [
        {
          ...common,
          id: logId,
          delivery_id: deliveryId,
          attempt: 1,
          status: 'failed',
          status_code: 500,
          error: 'HTTP 500',
          attempted_at: at,
          response_time_ms: 12,
        },
      ])
      return logId
    },
    async seedCompany(fields) {
      const id = `cmp_${randomUUID().slice(0, 8)}`
      const at = new Date().toISOString()
      await store.insert('companies', [
        { id, name: `Company ${id}`, ...fields, created_at: at, updated_at: at, version: 1 },
      ])
      return id
    },
    async seedVisitor(organizationId, pages = 2, options = {}) {
      const visitorId = options.visitorId ?? randomUUID()
      const sessionId = randomUUID()
      const start = Date.now() - 120_000
      const rows = Array.from({ length: pages }, (_, i) => ({
        event_id: randomUUID(),
        organization_id: organizationId,
        visitor_id: visitorId,
        session_id: sessionId,
        type: 'pageview',
        timestamp: new Date(start + i * 30_000).toISOString(),
        received_at: new Date(start + i * 30_000).toISOString(),
        url: `https://shop.test/page-${i}?utm_source=news`,
        path: `/page-${i}`,
        hostname: 'shop.test',
        title: `Page ${i}`,
        utm_source: options.utmSource ?? 'news',
        ip: '203.0.113.7',
        country: options.country ?? 'DE',
        asn: 3320,
        tracking_params: { gclid: 'abc' },
        company_id: options.companyId ?? '',
      }))
      await store.insert('page_views', rows)
      await settleFirstHours(store)
      return { visitorId, sessionId }
    },
    async stop() {
      await server.stop()
      data.remove()
    },
  }
  return harness
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
