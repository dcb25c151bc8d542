// Privacy requests end to end on a real server: people identified by the pixel (a page view, an
// identify hit, the contact of the dataset, the partner's signed webhook), exported and erased
// through the API; afterwards a search of every column of every table of the store finds none of
// an erased person's email, hash, name or phone, and their browser's next hit is a new visitor.
// Wrong bodies, other tenants, and keys without `admin` are refused.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { emailSha256 } from '@visitor-id/core/identification'
import { errorBody, type Harness, startHarness } from '@visitor-id/testing/harness'
import { tablesNaming as tablesWithNeedles } from '@visitor-id/testing/store-search'
import { until } from '@visitor-id/testing/until'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

let h: Harness
let receiver: Server
const received: string[] = []

interface Person {
  email: string
  firstName: string
  lastName: string
  phone: string
  visitorId: string
  sessionId: string
}

const person = (name: string, phone: string): Person => ({
  email: `${name.toLowerCase()}.privacy@example.com`,
  firstName: `First${name}`,
  lastName: `${name}son`,
  phone,
  visitorId: crypto.randomUUID(),
  sessionId: crypto.randomUUID(),
})
const ada = person('Ada', '+15550003333')
const bob = person('Bob', '+15550004444')
const cid = person('Cid', '+15550005555')

const hit = (who: Person, extra: object) =>
  fetch(`${h.server.url}/collect`, {
    method: 'POST',
    headers: {
      'content-type': 'text/plain;charset=UTF-8',
      'user-agent':
        'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
    },
    body: JSON.stringify({
      k: h.boot.trackingKey,
      v: who.visitorId,
      s: who.sessionId,
      ts: Date.now(),
      ...extra,
    }),
  })

/** A visit and an identification, the contact of the dataset they match, the webhook delivered. */
async function identify(who: Person) {
  const at = new Date().toISOString()
  await h.store.insert('contacts', [
    {
      id: `contact-${who.visitorId}`,
      email: who.email,
      email_sha256: emailSha256(who.email),
      first_name: who.firstName,
      last_name: who.lastName,
      phone: who.phone,
      created_at: at,
      updated_at: at,
      version: 1,
    },
  ])
  expect((await hit(who, { e: 'pv', u: 'https://shop.test/pricing' })).status).toBe(202)
  expect((await hit(who, { e: 'id', u: 'https://shop.test/pricing', em: who.email })).status).toBe(202)
  await until(async () => received.find((body) => body.includes(who.email)))
}

const path = (organizationId = h.boot.organizationId) => `/api/v1/organization/${organizationId}`
const erase = (payload: unknown, key?: string, organizationId?: string) =>
  h.request({
    method: 'DELETE',
    url: `${path(organizationId)}/persons`,
    payload: payload as object,
    ...(key ? { key } : {}),
  })
const exported = (payload: unknown, key?: string) =>
  h.request({
    method: 'POST',
    url: `${path()}/persons/export`,
    payload: payload as object,
    ...(key ? { key } : {}),
  })

const tablesNaming = (needles: string[]) => tablesWithNeedles(h.store, needles)
const personal = (who: Person) => [who.email, emailSha256(who.email), who.lastName, who.firstName, who.phone]

beforeAll(async () => {
  receiver = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      received.push(Buffer.concat(chunks).toString('utf8'))
      response.writeHead(200).end('ok')
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  h = await startHarness()
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`
  const configured = await h.request({
    method: 'PUT',
    url: '/api/v1/partner/webhooks/identification',
    key: null,
    partnerKey: h.boot.partnerKey,
    payload: { url, secret: 'a-partner-secret-of-some-length' },
  })
  expect(configured.statusCode, configured.body).toBe(200)
  await identify(ada)
  await identify(bob)
  await identify(cid)
}, 60_000)

afterAll(async () => {
  await h?.stop()
  await new Promise((resolve) => receiver?.close(resolve))
})

describe('privacy requests', () => {
  it('exports what is held about a person, by email, hash or visitor id', async () => {
    for (const key of [
      { email: ada.email.toUpperCase() },
      { emailSha256: emailSha256(ada.email) },
      { visitorId: ada.visitorId },
    ]) {
      const response = await exported(key)
      expect(response.statusCode, response.body).toBe(200)
      const body = response.json()
      expect(body.found).toMatchObject({ visitorIds: [ada.visitorId], emails: [ada.email] })
      expect(body.tables.visitors.rows).toMatchObject([{ email: ada.email, last_name: ada.lastName }])
      expect(body.tables.page_views.rows.length).toBeGreaterThanOrEqual(2)
      expect(body.tables.webhook_deliveries.rows).toHaveLength(1)
      expect(body.tables.contacts.rows).toMatchObject([{ email: ada.email, phone: ada.phone }])
      expect(response.body).not.toContain(bob.email)
    }
  })

  it('erases a person: nothing of them is left in any table, the others are untouched, the browser starts afresh', async () => {
    const bobBefore = await tablesNaming(personal(bob))
    expect(Object.keys(await tablesNaming(personal(ada))).length).toBeGreaterThan(5)
    const response = await erase({ email: ada.email })
    expect(response.statusCode, response.body).toBe(200)
    expect(response.json()).toMatchObject({
      erasure: {
        keyKind: 'email',
        visitors: 1,
        contacts: 1,
        requestedBy: expect.stringMatching(/^(user|key):/),
      },
      kept: { credit_ledger: { rows: 1, reason: expect.any(String) } },
    })
    expect(response.json().erasure.rows).toMatchObject({
      visitors: expect.any(Number),
      page_views: 2,
      contacts: 1,
    })
    expect(await tablesNaming(personal(ada))).toEqual({})
    expect(await tablesNaming(personal(bob))).toEqual(bobBefore)
    // The same browser comes back: a new anonymous visitor, not the erased one.
    expect((await hit(ada, { e: 'pv', u: 'https://shop.test/again' })).status).toBe(202)
    const [again] = await until(async () => {
      const rows = await h.store.query<{ visitor_id: string }>(
        "SELECT toString(visitor_id) AS visitor_id FROM page_views WHERE path = '/again'",
      )
      return rows.length > 0 ? rows : undefined
    })
    expect(again!.visitor_id).not.toBe(ada.visitorId)
    const profile = await h.request({
      method: 'GET',
      url: `/api/v1/visitor-tracking/${h.boot.organizationId}/visitors/${ada.visitorId}`,
    })
    expect(profile.statusCode).toBe(404)
    // The record, without the key.
    const erasures = await h.request({ method: 'GET', url: `${path()}/erasures` })
    expect(erasures.statusCode).toBe(200)
    expect(erasures.json().erasures[0]).toMatchObject({ id: response.json().erasure.id, keyKind: 'email' })
    expect(erasures.body).not.toContain(ada.email)
  }, 60_000)

  it('erases by visitor id and by hash too', async () => {
    const byVisitor = await erase({ visitorId: bob.visitorId.toUpperCase() })
    expect(byVisitor.statusCode, byVisitor.body).toBe(200)
    expect(byVisitor.json().erasure).toMatchObject({ keyKind: 'visitor_id', visitors: 1, contacts: 1 })
    const byHash = await erase({ emailSha256: emailSha256(cid.email) })
    expect(byHash.json().erasure).toMatchObject({ keyKind: 'email_sha256', visitors: 1, contacts: 1 })
    expect(await tablesNaming([...personal(bob), ...personal(cid)])).toEqual({})
  }, 60_000)

  it('refuses wrong bodies with 400 invalid_request, naming the problem', async () => {
    for (const payload of [
      {},
      { email: ada.email, visitorId: ada.visitorId },
      { email: 5 },
      { email: 'not-an-email' },
      { email: `${'a'.repeat(400)}@example.com` },
      { emailSha256: 'abc' },
      { visitorId: 'not-a-uuid' },
      { email: ada.email, extra: true },
      [ada.email],
    ]) {
      for (const response of [await erase(payload), await exported(payload)]) {
        expect(response.json(), JSON.stringify(payload)).toMatchObject(errorBody(400, 'invalid_request'))
      }
    }
  })

  it("another organization's id is 404; keys without admin 403; revoked and expired keys 401", async () => {
    const other = await h.createTenant()
    expect((await erase({ email: ada.email }, other.key)).statusCode).toBe(404)
    expect((await erase({ email: ada.email }, other.key, other.organizationId)).json().erasure).toMatchObject(
      {
        visitors: 0,
      },
    )
    const reader = await h.createKey(h.boot.organizationId, ['read', 'write'])
    expect((await erase({ email: ada.email }, reader.plainKey)).statusCode).toBe(403)
    expect((await exported({ email: ada.email }, reader.plainKey)).statusCode).toBe(403)
    const expired = await h.createKey(
      h.boot.organizationId,
      ['admin'],
      new Date(Date.now() - 1000).toISOString(),
    )
    expect((await erase({ email: ada.email }, expired.plainKey)).statusCode).toBe(401)
  })

  it("retention and company-only settings: the server defaults, the organization's own, back to the defaults", async () => {
    const settings = (method: 'GET' | 'PUT', payload?: object, key?: string) =>
      h.request({
        method,
        url: `${path()}/privacy`,
        ...(payload ? { payload } : {}),
        ...(key ? { key } : {}),
      })
    const defaults = (await settings('GET')).json()
    expect(defaults).toMatchObject({
      retentionDays: 395,
      ipRetentionDays: 30,
      own: { retentionDays: null, ipRetentionDays: null },
    })
    expect(Date.parse(defaults.rawDataFrom)).toBeLessThan(Date.now() - 394 * 86_400_000)
    const set = await settings('PUT', { ipRetentionDays: 7 })
    expect(set.statusCode, set.body).toBe(200)
    expect(set.json()).toMatchObject({ retentionDays: 395, ipRetentionDays: 7, own: { ipRetentionDays: 7 } })
    expect((await settings('PUT', { retentionDays: 90 })).json()).toMatchObject({
      retentionDays: 90,
      ipRetentionDays: 7,
      own: { retentionDays: 90, ipRetentionDays: 7 },
    })
    expect((await settings('PUT', { retentionDays: null })).json()).toMatchObject({
      retentionDays: 395,
      own: { retentionDays: null, ipRetentionDays: 7 },
    })
    for (const payload of [
      { retentionDays: 0 },
      { retentionDays: 3651 },
      { ipRetentionDays: 'x' },
      { days: 3 },
    ]) {
      expect((await settings('PUT', payload)).json(), JSON.stringify(payload)).toMatchObject(
        errorBody(400, 'invalid_request'),
      )
    }
    const reader = await h.createKey(h.boot.organizationId, ['read'])
    expect((await settings('GET', undefined, reader.plainKey)).statusCode).toBe(200)
    expect((await settings('PUT', { retentionDays: 30 }, reader.plainKey)).statusCode).toBe(403)
    expect((await settings('GET')).json().own).toEqual({ retentionDays: null, ipRetentionDays: 7 })

    // Company-only countries: off by default; on without a list, the EEA; a list replaces it.
    expect(defaults.companyOnly).toEqual({ enabled: false, countries: [], appliedCountries: [] })
    const eea = (await settings('PUT', { companyOnly: { enabled: true } })).json()
    expect(eea.companyOnly).toMatchObject({ enabled: true, countries: [] })
    expect(eea.companyOnly.appliedCountries).toHaveLength(30)
    expect(eea.companyOnly.appliedCountries).toEqual(expect.arrayContaining(['DE', 'FR', 'IS', 'LI', 'NO']))
    expect(eea.companyOnly.appliedCountries).not.toEqual(expect.arrayContaining(['CH']))
    expect(eea.companyOnly.appliedCountries).not.toEqual(expect.arrayContaining(['GB']))
    expect(eea.own).toEqual({ retentionDays: null, ipRetentionDays: 7 })
    const listed = (
      await settings('PUT', { companyOnly: { enabled: true, countries: ['GB', 'CH', 'GB'] } })
    ).json()
    expect(listed.companyOnly).toEqual({
      enabled: true,
      countries: ['CH', 'GB'],
      appliedCountries: ['CH', 'GB'],
    })
    // Other fields leave the mode as it is.
    expect((await settings('PUT', { retentionDays: 30 })).json().companyOnly.countries).toEqual(['CH', 'GB'])
    for (const payload of [
      { companyOnly: { enabled: true, countries: ['de'] } },
      { companyOnly: { enabled: true, countries: ['XX'] } },
      { companyOnly: { enabled: true, countries: ['DEU'] } },
      { companyOnly: { enabled: 'yes' } },
      { companyOnly: { countries: ['DE'] } },
      { companyOnly: { enabled: true, regions: ['DE'] } },
    ]) {
      expect((await settings('PUT', payload)).json(), JSON.stringify(payload)).toMatchObject(
        errorBody(400, 'invalid_request'),
      )
    }
    expect((await settings('PUT', { companyOnly: { enabled: false } }, reader.plainKey)).statusCode).toBe(403)
    const off = (await settings('PUT', { companyOnly: { enabled: false } })).json()
    expect(off.companyOnly).toEqual({ enabled: false, countries: [], appliedCountries: [] })
  })
})
