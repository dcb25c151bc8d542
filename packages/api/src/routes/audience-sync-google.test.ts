// searchAds on Google's Data Manager API, end to end on a real server: SEARCH_ADS_PLATFORM=google
// picks the adapter (the composition root), the installation goes through a real OAuth 2.0 server
// (oauth2-mock-server, standing in for Google's endpoints) with Google's authorization parameters,
// the organization enters its Google Ads customer id (Google offers no account listing without a
// developer token), and a list's sync reaches a local Data Manager API, which checks every request
// against the documented shapes. Asserted on what that server received: the user list, batches,
// consent, encoding, a rate limit paused and resumed without a member sent twice, and a flow made
// again for the same list filling the Customer Match list the first one made (its name being taken).

import { googleEmailHash } from '@visitor-id/core/integrations'
import { audienceSyncFixtures, sha256Hex } from '@visitor-id/testing/audience-sync-fixtures'
import {
  type GoogleDataManagerServer,
  googleFailures,
  startGoogleDataManagerServer,
} from '@visitor-id/testing/google-data-manager-server'
import { type Harness, startHarness } from '@visitor-id/testing/harness'
import { OAuth2Server } from 'oauth2-mock-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

let h: Harness
let oauth: OAuth2Server
let google: GoogleDataManagerServer
const customerId = '1234567890'

beforeAll(async () => {
  oauth = new OAuth2Server()
  await oauth.issuer.keys.generate('RS256')
  await oauth.start(0, '127.0.0.1')
  google = await startGoogleDataManagerServer({ accounts: [customerId] })
  // Every access token the OAuth server issues is one the Data Manager API takes.
  oauth.service.on('beforeResponse', (response: { body?: { access_token?: unknown } }) => {
    if (typeof response.body?.access_token === 'string') google.addToken(response.body.access_token)
  })
  const issuer = oauth.issuer.url!
  h = await startHarness({
    PUBLIC_URL: 'https://app.visitor-id.test',
    SEARCH_ADS_PLATFORM: 'google',
    SEARCH_ADS_CLIENT_ID: 'visitor-id.apps.googleusercontent.com',
    SEARCH_ADS_CLIENT_SECRET: 'google-client-secret',
    // Google's endpoints are the defaults; the tests point them at the local servers.
    SEARCH_ADS_AUTHORIZE_URL: `${issuer}/authorize`,
    SEARCH_ADS_TOKEN_URL: `${issuer}/token`,
    SEARCH_ADS_API_URL: google.apiUrl,
    SEARCH_ADS_CONSENT_AD_USER_DATA: 'CONSENT_GRANTED',
    SEARCH_ADS_CONSENT_AD_PERSONALIZATION: 'CONSENT_DENIED',
    AUDIENCE_BATCH_SIZE: '3',
  })
})

afterAll(async () => {
  await h?.stop()
  await oauth?.stop()
  await google?.close()
})

const { api, installed, contacts, syncedList, runNumber } = audienceSyncFixtures(() => h)

async function installedOrganization(): Promise<{ organizationId: string; authorization: URL }> {
  const { organizationId, url } = await installed('searchAds', 'Google Co')
  return { organizationId, authorization: url }
}

/** Another flow syncing the list to searchAds on each refresh; its id. */
async function anotherFlow(organizationId: string, listId: string): Promise<string> {
  const flow = await api('POST', '/integrations/flows', {
    organizationId,
    title: 'Made again',
    nodes: {
      trigger: { type: 'list.refreshed', listId },
      actions: [{ type: 'audience.sync', listId, integrationType: 'searchAds' }],
    },
  })
  expect(flow.statusCode, flow.body).toBe(200)
  return flow.json().id as string
}

type IngestBody = {
  destinations: {
    operatingAccount: { accountType: string; accountId: string }
    productDestinationId: string
  }[]
  audienceMembers: { userData: { userIdentifiers: { emailAddress: string }[] } }[]
  consent: { adUserData: string; adPersonalization: string }
  encoding: string
}
const ingests = () =>
  google.requests
    .filter((r) => r.path === '/v1/audienceMembers:ingest')
    .map((r) => ({ status: r.status, body: r.body as IngestBody }))
const hashesOf = (body: IngestBody) =>
  body.audienceMembers.map((m) => m.userData.userIdentifiers[0]!.emailAddress)

describe('searchAds on Google Data Manager', () => {
  it('installs with Google’s authorization parameters, takes an entered customer id and syncs a list to a Customer Match list in batches, with consent', async () => {
    const { organizationId, authorization } = await installedOrganization()
    expect(authorization.searchParams.get('access_type')).toBe('offline')
    expect(authorization.searchParams.get('prompt')).toBe('consent')
    const integration = (await api('GET', `/integrations/${organizationId}`)).json()[0]
    expect(integration).toMatchObject({ type: 'searchAds', status: 'connected', accountIdEntry: true })
    const chosen = await api('POST', '/integrations/account/select', {
      organizationId,
      integrationType: 'searchAds',
      accountId: '123-456-7890',
    })
    expect(chosen.statusCode, chosen.body).toBe(200)

    const hashes = await contacts('Marketer', 5)
    const ids = await syncedList(organizationId, 'Marketer', 'searchAds')
    expect((await api('POST', `/lists/refresh/${ids.listId}`)).statusCode).toBe(200)
    const run = await runNumber(organizationId, ids.flowId, 1)
    expect(run.status, JSON.stringify(run)).toBe('success')
    const { audienceId } = run.actions[0].sync
    expect(google.userList(customerId, audienceId)).toMatchObject({ displayName: 'Marketer' })
    expect(google.members(customerId, audienceId)).toEqual(hashes)
    const calls = ingests()
    expect(calls.map((c) => [c.status, c.body.audienceMembers.length])).toEqual([
      [200, 3],
      [200, 2],
    ])
    for (const { body } of calls) {
      expect(body.consent).toEqual({ adUserData: 'CONSENT_GRANTED', adPersonalization: 'CONSENT_DENIED' })
      expect(body.encoding).toBe('HEX')
      expect(body.destinations[0]).toMatchObject({
        operatingAccount: { accountType: 'GOOGLE_ADS', accountId: customerId },
        productDestinationId: audienceId,
      })
    }

    // Google reports its processing later: the next run reads it back, and the list shows it,
    // a match rate range where Google gives no count, and its words on a partial request.
    const [first, second] = run.actions[0].sync.requests as { id: string; state: string }[]
    expect([first?.state, second?.state]).toEqual(['processing', 'processing'])
    google.settleRequest(first!.id, { requestStatus: 'SUCCESS', matchRateRange: 'MATCH_RATE_RANGE_20_TO_30' })
    google.settleRequest(second!.id, {
      requestStatus: 'PARTIAL_SUCCESS',
      errorCounts: [{ reason: 'PROCESSING_ERROR_REASON_INVALID_FORMAT', recordCount: 1 }],
    })
    expect((await api('POST', `/lists/refresh/${ids.listId}`)).statusCode).toBe(200)
    expect((await runNumber(organizationId, ids.flowId, 2)).status).toBe('success')
    const list = (await api('GET', `/lists/${ids.listId}`)).json()
    expect(list.lastAudienceSync.requests).toEqual([
      { id: first!.id, state: 'succeeded', matchRate: { min: 20, max: 30 } },
      { id: second!.id, state: 'partial', detail: 'malformed identifiers (1 records)' },
    ])
  }, 60_000)

  it('a rate limit from Google pauses the sync; a job resumes it after Retry-After without a member sent twice', async () => {
    const { organizationId } = await installedOrganization()
    const select = await api('POST', '/integrations/account/select', {
      organizationId,
      integrationType: 'searchAds',
      accountId: customerId,
    })
    expect(select.statusCode, select.body).toBe(200)
    // A first sync makes the user list; the second meets the rate limit on its first member batch.
    const early = await contacts('Throttled', 1)
    const ids = await syncedList(organizationId, 'Throttled', 'searchAds')
    expect((await api('POST', `/lists/refresh/${ids.listId}`)).statusCode).toBe(200)
    const first = await runNumber(organizationId, ids.flowId, 1)
    expect(first.status, JSON.stringify(first)).toBe('success')
    const { audienceId } = first.actions[0].sync
    const late = await contacts('Throttled', 0)
    const at = new Date().toISOString()
    const more = Array.from({ length: 6 }, (_, n) => ({
      id: `Throttled-more-${n}`,
      email: `throttled-more${n}@example.test`,
      job_title: 'Throttled',
      created_at: at,
      updated_at: at,
      version: 1,
    }))
    await h.store.insert('contacts', more)
    const hashes = [...early, ...late, ...more.map((row) => sha256Hex(row.email))].sort()
    const before = ingests().length
    // The run reads the first sync's request status back first, then sends: both meet the limit
    // (a status read that fails is read again later; the member batch pauses the sync).
    google.failNext(
      googleFailures.rateLimited({ retryAfterSeconds: 1 }),
      googleFailures.rateLimited({ retryAfterSeconds: 1 }),
    )
    expect((await api('POST', `/lists/refresh/${ids.listId}`)).statusCode).toBe(200)
    const paused = await runNumber(organizationId, ids.flowId, 2)
    expect(paused.status, JSON.stringify(paused)).toBe('failed')
    expect(paused.actions[0].sync).toMatchObject({ status: 'paused' })
    const resumed = await runNumber(organizationId, ids.flowId, 3)
    expect(resumed, JSON.stringify(resumed)).toMatchObject({ status: 'success', eventId: paused.eventId })
    const calls = ingests().slice(before)
    expect(calls.map((c) => [c.status, c.body.audienceMembers.length])).toEqual([
      [429, 3],
      [200, 3],
      [200, 3],
    ])
    const sent = calls.filter((c) => c.status === 200).flatMap((c) => hashesOf(c.body))
    expect(new Set(sent).size).toBe(sent.length)
    expect(google.members(customerId, audienceId)).toEqual(hashes)
  }, 60_000)

  it('hashes Gmail addresses by Google’s rule (dots and +tags folded) from the contact’s email; others as stored', async () => {
    const { organizationId } = await installedOrganization()
    expect(
      (
        await api('POST', '/integrations/account/select', {
          organizationId,
          integrationType: 'searchAds',
          accountId: customerId,
        })
      ).statusCode,
    ).toBe(200)
    const at = new Date().toISOString()
    const row = (id: string, fields: Record<string, string>) => ({
      id,
      job_title: 'Gmailers',
      created_at: at,
      updated_at: at,
      version: 1,
      ...fields,
    })
    const rows = [
      row('gmail-dots', { email: 'jane.doe+ads@gmail.com' }),
      row('googlemail', { email: 'j.o.e@googlemail.com' }),
      row('work', { email: 'jane.doe+ads@example.test' }),
      // No work email: the personal one is the list's, folded too.
      row('personal', { personal_email: 'sam.smith@gmail.com' }),
      // Known only by a hash: there is no address to fold, the hash goes as it is.
      row('hash-only', { email_sha256: sha256Hex('someone@elsewhere.test') }),
    ]
    await h.store.insert('contacts', rows)
    const ids = await syncedList(organizationId, 'Gmailers', 'searchAds')
    expect((await api('POST', `/lists/refresh/${ids.listId}`)).statusCode).toBe(200)
    const run = await runNumber(organizationId, ids.flowId, 1)
    expect(run.status, JSON.stringify(run)).toBe('success')
    const expected = [
      googleEmailHash('janedoe@gmail.com'),
      googleEmailHash('joe@googlemail.com'),
      sha256Hex('jane.doe+ads@example.test'),
      googleEmailHash('samsmith@gmail.com'),
      sha256Hex('someone@elsewhere.test'),
    ].sort()
    expect(google.members(customerId, run.actions[0].sync.audienceId)).toEqual(expected)
  }, 60_000)

  it('a rate limit while making the user list pauses the sync; the resumed sync makes it once and sends the members', async () => {
    const { organizationId } = await installedOrganization()
    expect(
      (
        await api('POST', '/integrations/account/select', {
          organizationId,
          integrationType: 'searchAds',
          accountId: customerId,
        })
      ).statusCode,
    ).toBe(200)
    const hashes = await contacts('Early birds', 2)
    const ids = await syncedList(organizationId, 'Early birds', 'searchAds')
    const listsBefore = google.requests.filter((r) => r.path.endsWith('/userLists')).length
    google.failNext(googleFailures.rateLimited({ retryAfterSeconds: 1 }))
    expect((await api('POST', `/lists/refresh/${ids.listId}`)).statusCode).toBe(200)
    const paused = await runNumber(organizationId, ids.flowId, 1)
    expect(paused.status, JSON.stringify(paused)).toBe('failed')
    expect(paused.actions[0].sync).toMatchObject({ status: 'paused', audienceId: '', sent: 0 })
    expect(paused.actions[0].sync.error).toContain('Quota exceeded')
    const resumed = await runNumber(organizationId, ids.flowId, 2)
    expect(resumed, JSON.stringify(resumed)).toMatchObject({ status: 'success', eventId: paused.eventId })
    // The same sync, continued: one sync id, the user list made by the resumed run alone.
    expect(resumed.actions[0].sync.syncId).toBe(paused.actions[0].sync.syncId)
    const creations = google.requests.filter((r) => r.path.endsWith('/userLists')).slice(listsBefore)
    expect(creations.map((r) => r.status)).toEqual([429, 200])
    expect(google.members(customerId, resumed.actions[0].sync.audienceId)).toEqual(hashes)
  }, 60_000)

  it('a flow deleted and made again for the same list reuses the Customer Match list the first one made, members sent once', async () => {
    const { organizationId } = await installedOrganization()
    const chosen = await api('POST', '/integrations/account/select', {
      organizationId,
      integrationType: 'searchAds',
      accountId: customerId,
    })
    expect(chosen.statusCode, chosen.body).toBe(200)
    const early = await contacts('Returning', 3)
    const ids = await syncedList(organizationId, 'Returning', 'searchAds')
    expect((await api('POST', `/lists/refresh/${ids.listId}`)).statusCode).toBe(200)
    const first = await runNumber(organizationId, ids.flowId, 1)
    expect(first.status, JSON.stringify(first)).toBe('success')
    const { audienceId } = first.actions[0].sync
    const deleted = await h.request({
      method: 'DELETE',
      url: `/api/v1/integrations/${organizationId}/flows/${ids.flowId}`,
    })
    expect(deleted.statusCode, deleted.body).toBe(200)

    const again = await anotherFlow(organizationId, ids.listId)
    const late = (await contacts('Returning', 5)).filter((hash) => !early.includes(hash))
    const before = google.requests.length
    expect((await api('POST', `/lists/refresh/${ids.listId}`)).statusCode).toBe(200)
    const second = await runNumber(organizationId, again, 1)
    expect(second.status, JSON.stringify(second)).toBe('success')
    expect(second.actions[0].sync.audienceId).toBe(audienceId)
    // Google refused the taken name; the listing found the list.
    const calls = google.requests.slice(before)
    const lists = `/v1/accountTypes/GOOGLE_ADS/accounts/${customerId}/userLists`
    expect(calls.filter((c) => c.path === lists).map((c) => [c.method, c.status])).toEqual([
      ['POST', 400],
      ['GET', 200],
    ])
    expect(google.userLists(customerId).filter((l) => l.displayName === 'Returning')).toHaveLength(1)
    expect(google.members(customerId, audienceId)).toEqual([...early, ...late].sort())
    const sent = ingests()
      .filter((c) => c.status === 200 && c.body.destinations[0]!.productDestinationId === audienceId)
      .flatMap((c) => hashesOf(c.body))
    expect(sent.sort()).toEqual([...early, ...late].sort())
  }, 60_000)

  it('a sync stopped after two batches resumes after a restart with the next batch; no acknowledged batch is sent again', async () => {
    const { organizationId } = await installedOrganization()
    expect(
      (
        await api('POST', '/integrations/account/select', {
          organizationId,
          integrationType: 'searchAds',
          accountId: customerId,
        })
      ).statusCode,
    ).toBe(200)
    const hashes = await contacts('Restarted', 8)
    const ids = await syncedList(organizationId, 'Restarted', 'searchAds')
    const before = ingests().length
    // The user list and two batches go through; the third batch is refused (reported, not retried).
    google.failAfter(3, googleFailures.internalError())
    expect((await api('POST', `/lists/refresh/${ids.listId}`)).statusCode).toBe(200)
    const stopped = await runNumber(organizationId, ids.flowId, 1)
    expect(stopped.status, JSON.stringify(stopped)).toBe('failed')
    const sync = stopped.actions[0].sync
    expect(sync).toMatchObject({ status: 'failed', sent: 6 })
    // A new process on the same store: jobs, locks and caches of the first are gone.
    await h.restart()
    expect((await api('POST', `/lists/refresh/${ids.listId}`)).statusCode).toBe(200)
    const next = await runNumber(organizationId, ids.flowId, 2)
    expect(next.status, JSON.stringify(next)).toBe('success')
    expect(next.actions[0].detail).toContain(`resumed ${sync.syncId} at batch 3`)
    expect(next.actions[0].sync).toMatchObject({ syncId: sync.syncId, sent: 8 })
    const calls = ingests().slice(before)
    expect(calls.map((c) => [c.status, c.body.audienceMembers.length])).toEqual([
      [200, 3],
      [200, 3],
      [500, 2],
      [200, 2],
    ])
    const sent = calls.filter((c) => c.status === 200).flatMap((c) => hashesOf(c.body))
    expect(sent.sort()).toEqual(hashes)
    expect(google.members(customerId, sync.audienceId)).toEqual(hashes)
  }, 60_000)

  it("an organization's own consent, set with its account, goes with its uploads; kept by a new authorization; others keep the server's", async () => {
    const { organizationId } = await installedOrganization()
    const chosen = await api('POST', '/integrations/account/select', {
      organizationId,
      integrationType: 'searchAds',
      accountId: customerId,
      consent: { adPersonalization: 'CONSENT_GRANTED' },
    })
    expect(chosen.statusCode, chosen.body).toBe(200)
    expect(chosen.json().consent).toEqual({ adPersonalization: 'CONSENT_GRANTED' })
    const wrong = await api('POST', '/integrations/account/select', {
      organizationId,
      integrationType: 'searchAds',
      accountId: customerId,
      consent: { adPersonalization: 'YES' },
    })
    expect(wrong.statusCode).toBe(400)
    // Installing again keeps the choice.
    await installed('searchAds', 'Ignored')
    const again = (await api('GET', `/integrations/${organizationId}`)).json()[0]
    expect(again.consent).toEqual({ adPersonalization: 'CONSENT_GRANTED' })

    await contacts('Consenting', 2)
    const ids = await syncedList(organizationId, 'Consenting', 'searchAds')
    const before = ingests().length
    expect((await api('POST', `/lists/refresh/${ids.listId}`)).statusCode).toBe(200)
    expect((await runNumber(organizationId, ids.flowId, 1)).status).toBe('success')
    const [call] = ingests().slice(before)
    // The organization's value over the server's default; the value it did not set stays the server's.
    expect(call!.body.consent).toEqual({
      adUserData: 'CONSENT_GRANTED',
      adPersonalization: 'CONSENT_GRANTED',
    })
    const other = await installedOrganization()
    expect((await api('GET', `/integrations/${other.organizationId}`)).json()[0].consent).toBeNull()
  }, 60_000)
})
