// A phone is paid data (docs/decisions.md, "Phone search"): a person of the contacts dataset whose contact
// has a phone, identified by a standard organization and two B2B ones (all managed by the
// bootstrap partner, whose identification webhook goes to a receiver here). Every read route of the
// route table, the CSV downloads, the contacts count, every webhook delivery and the dashboard's
// files are searched for the phone's digits: nowhere before the unlock; after one B2B organization's
// search found it, in that organization's profile (`phoneNumber`) and `visitor.phone_revealed`
// only, never for the others.
import { randomUUID } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { identifyVisitors } from '@visitor-id/core/identification'
import { nextVersion } from '@visitor-id/core/ids'
import { type Harness, startHarness } from '@visitor-id/testing/harness'
import { until } from '@visitor-id/testing/until'
import type { InjectOptions } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Route } from '../route-definition.js'
import { routes } from './index.js'

/** The contact's phone as the dataset holds it, and its digits without the country code. */
const datasetPhone = '+44 20 7183 8750'
const digits = '2071838750'
const e164 = '+442071838750'

let h: Harness
let receiver: Server
const deliveries: { eventType: string; organizationId: string; raw: string }[] = []

/** Whether a body carries the phone in any spelling: separators and the country code aside. */
const carriesPhone = (body: string) => body.replace(/[\s().+-]/g, '').includes(digits)

interface Tenant {
  organizationId: string
  visitorId: string
  companyId: string
  listId: string
}
let standard: Tenant
let b2b: Tenant
let otherB2b: Tenant

beforeAll(async () => {
  receiver = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8')
      const body = JSON.parse(raw) as { event_type: string; organization_id: string }
      deliveries.push({ eventType: body.event_type, organizationId: body.organization_id, raw })
      response.writeHead(200)
      response.end('ok')
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  // The default provider: the contacts dataset, which finds the phone at search time.
  h = await startHarness({ PHONE_PROVIDER: 'dataset' })
  const hook = await h.request({
    method: 'PUT',
    url: '/api/v1/partner/webhooks/identification',
    key: null,
    partnerKey: h.boot.partnerKey,
    payload: {
      url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`,
      secret: 'a-partner-secret-of-some-length',
    },
  })
  expect(hook.statusCode, hook.body).toBe(200)

  const companyId = await h.seedCompany({ domain: 'paid-data.test', industry: 'SaaS', country: 'GB' })
  const at = new Date().toISOString()
  const email = `ada.${randomUUID().slice(0, 8)}@paid-data.test`
  await h.store.insert('contacts', [
    {
      id: `c-${randomUUID()}`,
      email,
      first_name: 'Ada',
      last_name: 'Lovelace',
      job_title: 'CTO',
      seniority: 'c-level',
      phone: datasetPhone,
      country: 'GB',
      linkedin_url: 'https://www.linkedin.com/in/ada-paid-data',
      company_id: companyId,
      created_at: at,
      updated_at: at,
      version: nextVersion(),
    },
  ])

  /** A sub-organization of the bootstrap agency (so its events go to the partner's webhook). */
  const subOrganization = async (name: string, plusEmployee: boolean) => {
    const created = await h.request({
      method: 'POST',
      url: '/api/v1/organization',
      payload: { organizationName: name, domain: `${name}.test` },
    })
    expect(created.statusCode, created.body).toBe(200)
    const id = created.json().id as string
    if (plusEmployee) {
      const row = (await h.repos.organizations.get({ id }))!
      await h.repos.organizations.save({ ...row, product_type: 'plus_employee' })
    }
    return id
  }
  /** The person identified in the organization, as ingest's identify hit makes it. */
  const identify = async (organizationId: string): Promise<Tenant> => {
    const { visitorId, sessionId } = await h.seedVisitor(organizationId, 2, { companyId })
    await identifyVisitors({ store: h.store, repos: h.repos }, [
      {
        organization_id: organizationId,
        visitor_id: visitorId,
        session_id: sessionId,
        email,
        timestamp: new Date().toISOString(),
        company_id: companyId,
      },
    ])
    return { organizationId, visitorId, companyId, listId: await h.createList(organizationId) }
  }
  standard = await identify(await subOrganization('standard', false))
  b2b = await identify(h.boot.organizationId)
  otherB2b = await identify(await subOrganization('other-b2b', true))
  for (const tenant of [standard, b2b, otherB2b]) {
    await until(() =>
      deliveries.find(
        (d) => d.eventType === 'visitor.identified' && d.organizationId === tenant.organizationId,
      ),
    )
  }
}, 60_000)

afterAll(async () => {
  await h?.stop()
  receiver?.closeAllConnections()
  await new Promise((resolve) => receiver?.close(resolve))
})

const profileUrl = (tenant: Tenant) =>
  `/api/v1/visitor-tracking/${tenant.organizationId}/visitors/${tenant.visitorId}`

/** The example request of a read route, for the tenant: its ids, its person, its list. */
function readRequest(route: Route, tenant: Tenant): InjectOptions & { partnerKey?: string; key?: null } {
  const example = route.example({
    organizationId: tenant.organizationId,
    memberUserId: '',
    visitorId: tenant.visitorId,
    keyId: '',
    icpConfigSlug: '',
    partnerIcpConfigSlug: '',
    listId: tenant.listId,
    personVisitorId: tenant.visitorId,
    webhookLogId: '',
    checkoutSessionId: '',
    flowId: '',
    adsAccountId: '',
  })
  let url = `/api/v1${route.path}`
  for (const [name, value] of Object.entries(example.params ?? {})) url = url.replace(`{${name}}`, value)
  const query = new URLSearchParams(example.query ?? {}).toString()
  return {
    method: route.method,
    url: query ? `${url}?${query}` : url,
    ...(example.body !== undefined ? { payload: example.body as object } : {}),
    ...(route.auth === 'partner' ? { key: null, partnerKey: h.boot.partnerKey } : {}),
  }
}

/**
 * Every answer a client of the tenant may read about the person: the GET routes of the table that
 * need no fixture of their own (an ICP config, a flow...), the visitor lists and CSV downloads of
 * every kind, the list and its export, the contacts count. Each answer's label and body.
 */
async function readEverything(tenant: Tenant): Promise<{ label: string; status: number; body: string }[]> {
  const requests: (InjectOptions & { partnerKey?: string; key?: null })[] = []
  for (const route of routes) {
    if (route.method !== 'GET' || /\{(slug|flowId)\}/.test(route.path)) continue
    requests.push(readRequest(route, tenant))
  }
  const org = tenant.organizationId
  for (const statisticType of ['companies', 'visitors', 'companyVisitors']) {
    requests.push({
      method: 'GET',
      url: `/api/v1/companies/download?organizationId=${org}&statisticType=${statisticType}&companyId=${tenant.companyId}`,
    })
  }
  requests.push(
    { method: 'GET', url: `/api/v1/companies/visitors?organizationId=${org}` },
    { method: 'GET', url: `/api/v1/companies/${tenant.companyId}/visitors?organizationId=${org}` },
    { method: 'GET', url: `/api/v1/lists/${org}` },
    { method: 'GET', url: `/api/v1/lists/${tenant.listId}?organizationId=${org}` },
    {
      method: 'GET',
      url: `/api/v1/partner/webhooks/logs?organizationId=${org}`,
      key: null,
      partnerKey: h.boot.partnerKey,
    },
    { method: 'POST', url: '/api/v1/contacts/count', payload: { contact: { job_titles: ['CTO'] } } },
    { method: 'POST', url: `/api/v1/lists/refresh/${tenant.listId}`, payload: { organizationId: org } },
  )
  const answers = []
  for (const request of requests) {
    const response = await h.request(request)
    answers.push({
      label: `${request.method} ${request.url}`,
      status: response.statusCode,
      body: response.body,
    })
  }
  // The dashboard's page and every file it loads (the profile is drawn from the API's answer).
  const page = await h.request({ method: 'GET', url: '/app/', key: null })
  answers.push({ label: 'GET /app/', status: page.statusCode, body: page.body })
  for (const [, file] of page.body.matchAll(/(?:src|href)="\/app\/([^"]+)"/g)) {
    const asset = await h.request({ method: 'GET', url: `/app/${file}`, key: null })
    answers.push({ label: `GET /app/${file}`, status: asset.statusCode, body: asset.body })
  }
  return answers
}

async function expectNowhere(tenant: Tenant, except: (label: string) => boolean = () => false) {
  const answers = await readEverything(tenant)
  const profile = answers.find((a) => a.label === `GET ${profileUrl(tenant)}`)!
  // The walk saw the person: identified from the contact, in the lists and the downloads.
  expect(profile.status, profile.body).toBe(200)
  expect(JSON.parse(profile.body).contact).toMatchObject({ firstName: 'Ada', jobTitle: 'CTO' })
  const download = answers.find((a) => a.label.includes('statisticType=visitors'))!
  expect(download.body).toContain(tenant.visitorId)
  for (const answer of answers) {
    if (except(answer.label)) continue
    expect(
      carriesPhone(answer.body),
      `${answer.label} (${answer.status}): ${answer.body.slice(0, 300)}`,
    ).toBe(false)
  }
  return answers
}

describe('a phone is paid data', () => {
  it('no answer, download, webhook or dashboard file carries the phone before the unlock', async () => {
    for (const tenant of [standard, b2b, otherB2b]) await expectNowhere(tenant)
    expect(deliveries.filter((d) => d.eventType === 'visitor.identified')).toHaveLength(3)
    for (const delivery of deliveries) {
      expect(carriesPhone(delivery.raw), delivery.raw.slice(0, 300)).toBe(false)
      expect(JSON.parse(delivery.raw).visitor).toMatchObject({ first_name: 'Ada', phone: '' })
    }
    expect((await h.request({ method: 'GET', url: profileUrl(b2b) })).json()).toMatchObject({
      phoneNumberSearchStatus: 'not_started',
    })
  })

  it("after a B2B organization's search found it: its profile and visitor.phone_revealed, nothing else", async () => {
    const started = await h.request({
      method: 'POST',
      url: '/api/v1/visitor-tracking/phone-number-search',
      payload: { organizationId: b2b.organizationId, visitorId: b2b.visitorId },
    })
    expect(started.statusCode, started.body).toBe(200)
    const revealed = await until(() => deliveries.find((d) => d.eventType === 'visitor.phone_revealed'))
    expect(revealed.organizationId).toBe(b2b.organizationId)
    expect(JSON.parse(revealed.raw).visitor).toMatchObject({ id: b2b.visitorId, phone: e164 })

    // The B2B organization: the phone in `phoneNumber`, nowhere else (its log shows the delivery
    // of visitor.phone_revealed, which carries it).
    const answers = await expectNowhere(
      b2b,
      (label) => label === `GET ${profileUrl(b2b)}` || label.includes('/partner/webhooks/logs'),
    )
    const profile = JSON.parse(answers.find((a) => a.label === `GET ${profileUrl(b2b)}`)!.body)
    expect(profile).toMatchObject({ phoneNumber: e164, phoneNumberSearchStatus: 'found' })
    const { phoneNumber: _shown, ...rest } = profile
    expect(carriesPhone(JSON.stringify(rest))).toBe(false)

    // The others: nothing, though the same person's phone is now unlocked elsewhere.
    await expectNowhere(standard)
    await expectNowhere(otherB2b)
    expect((await h.request({ method: 'GET', url: profileUrl(otherB2b) })).json()).toMatchObject({
      phoneNumberSearchStatus: 'not_started',
    })
    expect((await h.request({ method: 'GET', url: profileUrl(standard) })).json()).not.toHaveProperty(
      'phoneNumberSearchStatus',
    )
    for (const delivery of deliveries) {
      if (delivery.eventType === 'visitor.phone_revealed') continue
      expect(carriesPhone(delivery.raw), delivery.raw.slice(0, 300)).toBe(false)
    }
    expect(deliveries.filter((d) => d.eventType === 'visitor.phone_revealed')).toHaveLength(1)
  })
})
