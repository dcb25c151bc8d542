import { createHmac, randomUUID } from 'node:crypto'
import { existsSync } from 'node:fs'
import { createServer } from 'node:http'
import path from 'node:path'
import { appliedMigrations, createStore, readMigrations } from '@visitor-id/core/store'
import { closeLocal, listenLocal } from '@visitor-id/testing/local-http'
import {
  killServerProcess,
  runCli,
  type ServerProcess,
  startServerProcess,
} from '@visitor-id/testing/server-process'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { until } from '@visitor-id/testing/until'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { collect, pixelHit } from './fixtures/hits.js'
import {
  buildStoreAt0019,
  type Clock,
  companies,
  expectedAccounts,
  expectedTraffic,
  fixtureEvents,
  fixtureLevel,
  flowId,
  ids,
  keys,
  lists,
  secretKey,
  stripeEventId,
  trackingKeys,
  webhookSecret,
} from './fixtures/store-0019/index.js'

// Upgrades keep every row. The data directory of an install at migration 0019 (before the
// analytics rollups and their backfills, 0020-0023), with rows of every table, is started with
// today's server, which migrates it to the latest level; everything is then read back through the
// API, exact. A migration that loses or rewrites data fails here. Downgrades are refused.
const data = tempDir('vid-upgrade-')
const received: { path: string; headers: Record<string, string>; body: string }[] = []
const receiver = createServer((request, response) => {
  const chunks: Buffer[] = []
  request.on('data', (chunk: Buffer) => chunks.push(chunk))
  request.on('end', () => {
    const headers = Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k, String(v)]))
    received.push({ path: request.url ?? '', headers, body: Buffer.concat(chunks).toString('utf8') })
    response.writeHead(200).end()
  })
})
let server: ServerProcess | undefined
let clock: Clock
let applied: string[]
const testStarted = Date.now()

const serverEnv = {
  DATA_DIR: data.dir,
  // The install's SECRET_KEY: the partner's webhook secret and the integration's tokens are sealed with it.
  SECRET_KEY: secretKey,
  // Webhooks go to the test's receiver on loopback; a `searchAds` integration type is configured.
  WEBHOOK_ALLOW_PRIVATE: '1',
  SEARCH_ADS_CLIENT_ID: 'visitor-id-test',
  SEARCH_ADS_CLIENT_SECRET: 'not-a-secret',
  SEARCH_ADS_AUTHORIZE_URL: 'http://127.0.0.1:9/authorize',
  SEARCH_ADS_TOKEN_URL: 'http://127.0.0.1:9/token',
  SEARCH_ADS_API_URL: 'http://127.0.0.1:9/ads',
  CUSTOM_DOMAIN_TARGET: 'cname.visitor-id.test',
  // The ICP scores read are the ones 0019 stored, not a re-scoring on the pass's own timer.
  ICP_RESCORE_INTERVAL_MS: '600000',
  INGEST_BATCH_MS: '20',
  // A hit's address from X-Forwarded-For, so one can come from a company's imported range.
  TRUST_PROXY: '1',
  IDENTIFY_BATCH_MS: '50',
  // Each stored event the workers dispatch is logged (by id) at info.
  LOG_LEVEL: 'info',
}

beforeAll(async () => {
  const port = await listenLocal(receiver)
  ;({ clock, applied } = await buildStoreAt0019({
    dataDir: data.dir,
    webhookUrl: `http://127.0.0.1:${port}/hooks`,
  }))
  server = await startServerProcess(serverEnv)
}, 90_000)

afterAll(async () => {
  await killServerProcess(server)
  await closeLocal(receiver)
  data.remove()
})

/** A request to the API with Acme's admin key, another key, or a partner key. */
async function api(route: string, options: { key?: string; method?: string; body?: unknown } = {}) {
  const key = options.key ?? keys.acmeAdmin.plain
  const response = await fetch(`${server!.url}/api/v1${route}`, {
    method: options.method ?? 'GET',
    headers: {
      [key.startsWith('bsk_partner_') ? 'x-partner-api-key' : 'x-api-key']: key,
      ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
  })
  const text = await response.text()
  const json = response.headers.get('content-type')?.includes('application/json')
  return { status: response.status, headers: response.headers, body: json ? JSON.parse(text) : text }
}

/** The stored events the server's workers dispatched, by id (its `event` log lines). */
function dispatchedEvents(): string[] {
  return server!
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { msg?: string; eventId?: string })
    .filter((entry) => entry.msg === 'event')
    .map((entry) => entry.eventId!)
}

const range = () => `from=${clock.date(0)}&to=${clock.date(2)}`

describe(`upgrade from migration ${fixtureLevel}`, () => {
  it('applies the later migrations at start and is ready, without a new bootstrap', async () => {
    const upTo = readMigrations().filter((migration) => migration.version <= fixtureLevel)
    expect(applied).toEqual(upTo.map((migration) => migration.name))
    expect(readMigrations().length).toBeGreaterThan(upTo.length)
    const ready = await fetch(`${server!.url}/readyz`)
    expect([ready.status, await ready.json()]).toEqual([200, { status: 'ready' }])
    // The store has organizations: the first-start bootstrap stays away.
    expect(existsSync(path.join(data.dir, 'bootstrap.json'))).toBe(false)
  })

  it('keeps the organizations, their members, keys and credit ledgers', async () => {
    const expected = expectedAccounts.organizations(clock)
    // Listed first: any use of the reporting key would move its lastUsedAt.
    const listed = await api(`/organization/${ids.acme}/api-keys`)
    const adminLastUsed = listed.body.apiKeys[0]?.lastUsedAt
    expect(adminLastUsed === null || Date.parse(adminLastUsed) >= testStarted - 1000).toBe(true)
    expect(listed.body).toEqual({ apiKeys: expectedAccounts.apiKeys(clock, adminLastUsed) })

    expect(await api(`/organization/${ids.acme}`)).toMatchObject({ status: 200, body: expected.acme })
    // The owner's other organization, through its membership there.
    expect((await api('/organization/list')).body).toEqual([expected.acme, expected.beta])
    const reporting = { key: keys.acmeReporting.plain }
    expect(await api(`/organization/${ids.acme}`, reporting)).toMatchObject({
      status: 200,
      body: expected.acme,
    })
    expect((await api(`/organization/${ids.acme}`, { ...reporting, method: 'PUT', body: {} })).status).toBe(
      403,
    )
    expect((await api(`/organization/${ids.acme}`, { key: keys.acmeRevoked.plain })).status).toBe(401)
    const partner = await api('/partner/organizations', { key: keys.partner.plain })
    expect(partner.body).toEqual({
      data: [expected.acme, expected.beta],
      page: 1,
      limit: 25,
      total: 2,
      totalPages: 1,
    })
  })

  it('keeps the pixel config, the partner custom domain and the email preferences', async () => {
    const { scriptTag, ...config } = (await api(`/visitor-tracking/${ids.acme}`)).body.pixelConfig
    expect({ ...config, scriptUrl: scriptTag.scriptUrl }).toEqual(expectedAccounts.pixelConfig(clock))
    const partner = { key: keys.partner.plain }
    const domain = (await api('/partner/domain/verification', partner)).body
    expect(domain).toMatchObject({
      domain: 'track.northwind.test',
      verified: true,
      cnameTarget: 'cname.visitor-id.test',
      dnsRecords: [
        { type: 'CNAME', name: 'track.northwind.test', value: 'cname.visitor-id.test', status: 'verified' },
      ],
    })
    expect(domain.instructions).toContain('CNAME track.northwind.test -> cname.visitor-id.test')
    const preferences = expectedAccounts.emailPreferences()
    expect((await api('/partner/email-preferences', partner)).body).toEqual({
      preferences: preferences.partner,
    })
    expect((await api(`/partner/organizations/${ids.acme}/email-preferences`, partner)).body).toEqual({
      preferences: preferences.acme,
    })
  })

  it('keeps every visitor profile: contact, company, sessions and page views, ICP, phone search', async () => {
    const profile = async (visitor: string) =>
      (await api(`/visitor-tracking/${ids.acme}/visitors/${visitor}`)).body
    expect(await profile(ids.ada)).toEqual(expectedTraffic.adaProfile(clock))
    expect(await profile(ids.initechVisitor)).toEqual(expectedTraffic.initechVisitorProfile(clock))
    expect(await profile(ids.sam)).toEqual(expectedTraffic.samProfile(clock))
    // Beta's visitor stays Beta's.
    expect((await api(`/visitor-tracking/${ids.acme}/visitors/${ids.betaVisitor}`)).status).toBe(404)
  })

  it('builds the statistics from the stored page views (the rollups of 0020 and 0021)', async () => {
    const expected = expectedTraffic.totals(clock)
    // Without rawDataFrom, which follows the clock (the retention's cutoff; checked below).
    const total = async (query = '') => {
      const { rawDataFrom, ...totals } = (
        await api(`/companies/statistic/${ids.acme}/total?${range()}${query}`)
      ).body as Record<string, unknown>
      expect(rawDataFrom).toMatch(/^\d{4}-\d\d-\d\dT\d\d:00:00\.000Z$/)
      return totals
    }
    // The first settling pass after the upgrade settles every visitor; until then figures are partial.
    await until(
      async () => (JSON.stringify(await total()) === JSON.stringify(expected.everyone) ? true : undefined),
      30_000,
    ).catch(() => {})
    expect(await total()).toEqual(expected.everyone)
    expect(await total('&ICPOnly=true')).toEqual(expected.icpOnly)
    expect((await api(`/companies/statistic/${ids.acme}/visitors/chart?${range()}`)).body).toEqual(
      expected.chart,
    )
    const query = `organizationId=${ids.acme}&${range()}`
    expect((await api(`/companies?${query}`)).body).toEqual(expectedTraffic.companyPage(clock))
    const visitors = expectedTraffic.visitorRows(clock)
    const page = (rows: unknown[]) => ({ data: rows, page: 1, limit: 25, total: rows.length, totalPages: 1 })
    expect((await api(`/companies/visitors?${query}`)).body).toEqual(page(visitors.all))
    expect((await api(`/companies/${companies.globex}/visitors?${query}`)).body).toEqual(page([visitors.ada]))
  }, 45_000)

  it('keeps the contacts dataset, the saved lists and their snapshots', async () => {
    const count = async (filter: object) =>
      (await api('/contacts/count', { method: 'POST', body: filter })).body
    expect(await count({})).toEqual({ count: 3 })
    expect(await count({ contact: { seniorities: ['vp'] } })).toEqual({ count: 1 })
    // Bob by his company's domain; his re-imported row replaced the first one.
    expect(await count({ company: { industries: ['Retail'] } })).toEqual({ count: 1 })
    expect(await count({ contact: { job_titles: ['manager'] } })).toEqual({ count: 1 })
    expect(await count({ contact: { seniorities: ['entry'] } })).toEqual({ count: 0 })

    const expected = expectedAccounts.savedLists(clock)
    expect((await api(`/lists/${lists.vps.id}`)).body).toEqual(expected.vps)
    expect((await api(`/lists/${lists.everyone.id}`)).body).toEqual(expected.everyone)
    for (const [list, hashes] of [
      [lists.vps.id, expected.vpsExport],
      [lists.everyone.id, expected.everyoneExport],
    ] as const) {
      const csv = await api(`/lists/${list}/chat-ads-export?organizationId=${ids.acme}`)
      expect(csv.body).toBe(['email_sha256', ...hashes, ''].join('\r\n'))
      expect(csv.headers.get('x-unique-email-count')).toBe(String(hashes.length))
    }
  })

  it('keeps the ICP configs of both kinds and their stats', async () => {
    const expected = expectedAccounts.icpConfigs(clock)
    expect((await api(`/organizations/${ids.acme}/icp-configs`)).body).toEqual(expected.organization)
    expect((await api(`/organizations/${ids.acme}/icp-configs/stats`)).body).toEqual(expected.stats)
    const partner = await api(`/partner/organizations/${ids.acme}/icp-configs`, { key: keys.partner.plain })
    expect(partner.body).toEqual(expected.partner)
  })

  it('keeps the outbox: what was due goes out with its stored bytes, nothing dispatched goes again', async () => {
    const events = fixtureEvents(clock)
    // Sam's delivery was due again (its third try); the phone event was stored but never dispatched.
    await until(() => (received.length >= 2 ? true : undefined), 20_000)
    const byEvent = new Map(received.map((delivery) => [delivery.headers['x-service-event-id'], delivery]))
    for (const event of [events.samIdentified, events.adaPhoneRevealed]) {
      const delivery = byEvent.get(event.id)
      expect(delivery?.path).toBe('/hooks/identification')
      expect(delivery?.body).toBe(event.payload)
      // Signed with the secret 0019 sealed under SECRET_KEY.
      const signature = createHmac('sha256', webhookSecret).update(delivery!.body).digest('hex')
      expect(delivery?.headers['x-service-signature']).toBe(signature)
    }
    const logs = await until(async () => {
      const body = (await api('/partner/webhooks/logs', { key: keys.partner.plain })).body
      return body.total >= 6 ? body : undefined
    })
    const sent = (event: { id: string; type: string }, attempt: number) =>
      expect.objectContaining({
        eventId: event.id,
        eventType: event.type,
        deliveryId: `whd_${event.id}_identification`,
        attempt,
        status: 'success',
        statusCode: 200,
      })
    expect(logs.logs).toEqual([
      sent(events.adaPhoneRevealed, 1),
      sent(events.samIdentified, 3),
      ...expectedAccounts.storedLogs(clock),
    ])
    // The workers dispatched the one unmarked event: those marked by 0018's marks or, before
    // them, by a later version of the event, stay dispatched.
    const dispatched = await until(() => {
      const logged = dispatchedEvents()
      return logged.length > 0 ? logged : undefined
    })
    expect(dispatched).toEqual([events.adaPhoneRevealed.id])
    expect(received).toHaveLength(2)
    const webhooks = (await api('/partner/webhooks', { key: keys.partner.plain })).body
    expect(webhooks).toMatchObject({
      identification: { enabled: true, hasSecret: true },
      billing: { enabled: true, hasSecret: true },
    })
  }, 45_000)

  it('keeps the integration, the flow with its run log, and the subscription', async () => {
    expect((await api(`/integrations/${ids.acme}`)).body).toEqual(expectedAccounts.integrations(clock))
    const flow = expectedAccounts.flow(clock)
    expect((await api(`/integrations/${ids.acme}/flows`)).body).toEqual(flow.list)
    expect((await api(`/integrations/${ids.acme}/flows/${flowId}`)).body).toEqual(flow.one)
    expect((await api(`/payment/customer-info?organizationId=${ids.acme}`)).body).toEqual(
      expectedAccounts.customer(clock),
    )
  })

  it('places hits with the tracking key at the company of their imported IP range', async () => {
    const visitor = randomUUID()
    const hit = pixelHit(trackingKeys.acme, { v: visitor, u: 'https://acme.test/after-upgrade' })
    const sent = await collect(server!.url, hit, {
      origin: 'https://acme.test',
      'x-forwarded-for': '203.0.113.77',
    })
    expect(sent.status).toBe(202)
    const profile = await until(async () => {
      const answer = await api(`/visitor-tracking/${ids.acme}/visitors/${visitor}`)
      return answer.status === 200 ? answer.body : undefined
    })
    expect(profile.company).toEqual(expectedTraffic.globexProfile)
    expect(profile.pageViews).toEqual([expect.objectContaining({ url: 'https://acme.test/after-upgrade' })])
  })

  it('identifies a new visitor by the contacts dataset (its keys and the cards of 0019)', async () => {
    const visitor = randomUUID()
    const hit = pixelHit(trackingKeys.acme, {
      v: visitor,
      e: 'id',
      u: 'https://acme.test/',
      em: ' Bob@Initech.test ',
    })
    expect((await collect(server!.url, hit, { origin: 'https://acme.test' })).status).toBe(202)
    const profile = await until(async () => {
      const answer = await api(`/visitor-tracking/${ids.acme}/visitors/${visitor}`)
      return answer.status === 200 && answer.body.contact ? answer.body : undefined
    })
    // Bob as his re-import left him, his company found by its domain.
    expect(profile.contact).toEqual(
      expectedTraffic.contact({
        email: 'bob@initech.test',
        firstName: 'Bob',
        lastName: 'Porter',
        jobTitle: 'Sales Manager',
        seniority: 'manager',
        department: 'sales',
        country: 'FR',
      }),
    )
    expect(profile.company).toMatchObject({ id: companies.initech, name: 'Initech' })
  })
})

describe('after the upgrade', () => {
  it('has every migration recorded once, and refuses to start the store at a newer level (no downgrades)', async () => {
    server!.child.kill('SIGTERM')
    expect((await server!.exit).code).toBe(0)
    // What a later release would have recorded: a migration this code does not have.
    const latest = readMigrations().at(-1)!
    const later = {
      version: latest.version + 1,
      name: `${String(latest.version + 1).padStart(4, '0')}_from_a_later_release.sql`,
    }
    const store = createStore({ database: 'default', dataDir: data.dir })
    try {
      const recorded = await appliedMigrations(store)
      expect([...recorded.values()].map((m) => m.name)).toEqual(readMigrations().map((m) => m.name))
      // The one table no API reads: the Stripe events already acted on.
      expect(await store.query('SELECT event_id, type FROM billing_webhook_events FINAL')).toEqual([
        { event_id: stripeEventId, type: 'invoice.paid' },
      ])
      await store.insert('schema_migrations', [{ ...later, checksum: 'of a later release' }])
    } finally {
      await store.close()
    }
    const refusal =
      `visitor-id: The store was upgraded by a later release: it has migration ${later.name}, which this ` +
      `release does not know (its latest is ${latest.name}). Downgrades are not supported`
    await expect(startServerProcess(serverEnv)).rejects.toThrow(refusal)
    const migrate = await runCli(['migrate'], { DATA_DIR: data.dir })
    expect(migrate.code).toBe(1)
    expect(migrate.stderr).toContain(refusal)
  }, 60_000)
})
