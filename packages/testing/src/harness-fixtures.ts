// The harness's fixtures, written through the real repositories and services (or straight into the
// store where the server's own writers would), grouped by what they make. Each group answers its
// part of the Harness; `startHarness` puts the parts together.
import { randomUUID } from 'node:crypto'
import { settleFirstHours } from '@visitor-id/core/analytics'
import { createApiKey } from '@visitor-id/core/api-keys'
import {
  approveCheckout,
  type BillingDeps,
  type LocalBillingProvider,
  processCheckout,
  readSubscription,
  type SubscriptionRow,
  startCheckout,
} from '@visitor-id/core/billing'
import type { Config } from '@visitor-id/core/config'
import type { Locks } from '@visitor-id/core/coordination'
import { createIcpConfig, type IcpConfigKind } from '@visitor-id/core/icp'
import { nextVersion } from '@visitor-id/core/ids'
import { createFlow, type FlowDeps } from '@visitor-id/core/integrations'
import { saveList } from '@visitor-id/core/lists'
import { type BootstrapFile, createOrganization, createUser } from '@visitor-id/core/organizations'
import type { Repositories } from '@visitor-id/core/repositories'
import { secretBox } from '@visitor-id/core/secret-box'
import type { Store } from '@visitor-id/core/store'
import type { Harness } from './harness-api.js'
import { personVisitorRow } from './rows.js'

/** What the fixtures write with: the started server's own stores and services. */
export interface FixtureContext {
  repos: Repositories
  store: Store
  boot: BootstrapFile
  config: Config
  /** Config writes take an organization lock; the test's own fixtures need no other process. */
  locks: Locks
  billing: BillingDeps
  integrations: FlowDeps
}

/** Keys, organizations, members and ICP configs. */
export function organizationFixtures(
  ctx: FixtureContext,
): Pick<Harness, 'createKey' | 'createTenant' | 'addMember' | 'createIcpConfig'> {
  const { repos, store, boot, config, locks } = ctx
  return {
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
      const icpConfig = await createIcpConfig(repos, locks, organizationId, kind, fixtureIcpConfig(kind))
      return icpConfig.slug
    },
  }
}

/** A partner's config matches visitors from Germany; an organization's, SaaS companies. */
function fixtureIcpConfig(kind: IcpConfigKind) {
  return {
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
  }
}

/** Visitors (their page views), identified persons and companies. */
export function visitorFixtures(
  ctx: FixtureContext,
): Pick<Harness, 'seedVisitor' | 'seedPerson' | 'seedCompany'> {
  const { repos, store } = ctx
  const seedVisitor: Harness['seedVisitor'] = async (organizationId, pages = 2, options = {}) => {
    const visitorId = options.visitorId ?? randomUUID()
    const sessionId = randomUUID()
    await store.insert('page_views', fixturePageViews(organizationId, visitorId, sessionId, pages, options))
    await settleFirstHours(store)
    return { visitorId, sessionId }
  }
  return {
    seedVisitor,
    async seedPerson(organizationId, fields = {}) {
      const { visitorId } = await seedVisitor(organizationId, 1)
      await repos.visitors.save(personVisitorRow(organizationId, visitorId, fields))
      return visitorId
    },
    async seedCompany(fields) {
      const id = `cmp_${randomUUID().slice(0, 8)}`
      const at = new Date().toISOString()
      await store.insert('companies', [
        { id, name: `Company ${id}`, ...fields, created_at: at, updated_at: at, version: 1 },
      ])
      return id
    },
  }
}

/** One session's page views, 30 seconds apart, starting two minutes ago. */
function fixturePageViews(
  organizationId: string,
  visitorId: string,
  sessionId: string,
  pages: number,
  options: NonNullable<Parameters<Harness['seedVisitor']>[2]>,
) {
  const start = Date.now() - 120_000
  return Array.from({ length: pages }, (_, i) => ({
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
}

/** Saved lists, over a contact imported once for the whole file. */
export function listFixtures(ctx: FixtureContext): Pick<Harness, 'createList'> {
  const { repos, store, locks } = ctx
  let fixtureContact: Promise<void> | undefined
  return {
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
  }
}

/** The `searchAds` integration and flows over it; a flow syncs a list, made with `createList`. */
export function integrationFixtures(
  ctx: FixtureContext,
  createList: Harness['createList'],
): Pick<Harness, 'connectIntegration' | 'createFlow'> {
  const { store, config, integrations } = ctx
  return {
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
      const listId = await createList(organizationId)
      const flow = await createFlow(integrations, organizationId, {
        title: 'Fixture flow',
        nodes: {
          trigger: { type: 'list.refreshed', listId },
          actions: [{ type: 'audience.sync', listId, integrationType: 'searchAds' }],
        },
      })
      return flow.id
    },
  }
}

/** Subscriptions through the local provider's checkout, and their end. */
export function billingFixtures(
  ctx: FixtureContext,
): Pick<Harness, 'completedCheckout' | 'subscribe' | 'endSubscription'> {
  const { repos, store, billing } = ctx
  const holds = (row: SubscriptionRow | undefined) =>
    row !== undefined && ['active', 'trialing', 'past_due'].includes(row.status)
  const endSubscription: Harness['endSubscription'] = async (organizationId) => {
    const row = await readSubscription(store, organizationId)
    if (!holds(row)) return
    await store.insert('subscriptions', [
      { ...row, status: 'canceled', cancel_at_period_end: 0, b2b_until: null, version: nextVersion() },
    ])
  }
  const completedCheckout: Harness['completedCheckout'] = async (
    organizationId,
    priceId = 'price_standard_monthly',
  ) => {
    await endSubscription(organizationId)
    const organization = (await repos.organizations.get({ id: organizationId }))!
    const plan = billing.plans.find((p) => p.priceId === priceId)!
    const checkout = await startCheckout(billing, organization, { priceId, productId: plan.productId })
    const local = billing.provider as LocalBillingProvider
    await local.confirmCheckout(checkout.id, billing.plans)
    if (local.needsApproval(plan)) await approveCheckout(billing, checkout.id)
    return checkout.id
  }
  return {
    completedCheckout,
    async subscribe(organizationId) {
      if (holds(await readSubscription(store, organizationId))) return
      await processCheckout(billing, await completedCheckout(organizationId))
    },
    endSubscription,
  }
}

/** A delivery to the partner's identification webhook and its first (failed) attempt, as the dispatcher writes them. */
export function webhookFixtures(ctx: FixtureContext): Pick<Harness, 'seedWebhookLog'> {
  const { store, boot } = ctx
  return {
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
  }
}
