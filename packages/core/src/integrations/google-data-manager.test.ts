// The searchAds adapter against the local Data Manager API: what is checked is what Google would
// receive (paths, headers, bodies, batch sizes) and how its answers and errors are read.
import { createHash } from 'node:crypto'
import {
  type GoogleDataManagerServer,
  startGoogleDataManagerServer,
} from '@visitor-id/testing/google-data-manager-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AdsPlatform, AdsPlatformError } from './ads-platform.js'
import {
  createGoogleAdsPlatform,
  type GoogleAdsPlatformOptions,
  googleEmailHash,
  googleOAuth,
  normalizeGoogleEmail,
} from './google-data-manager.js'

const account = '1234567890'
const otherAccount = '9876543210'
const token = 'ya29.test-token-one'
const sha = (text: string) => createHash('sha256').update(text).digest('hex')
const hashes = (n: number, seed = 'member') =>
  Array.from({ length: n }, (_, i) => sha(`${seed}${i}@example.com`))
const position = { syncId: 'sync-1', sequence: 1, last: true }
const granted = { adUserData: 'CONSENT_GRANTED', adPersonalization: 'CONSENT_GRANTED' } as const

let google: GoogleDataManagerServer
let ads: AdsPlatform

const platform = (options: Partial<GoogleAdsPlatformOptions> = {}) =>
  createGoogleAdsPlatform({ apiUrl: google.apiUrl, consent: granted, membershipDays: 90, ...options })

beforeAll(async () => {
  google = await startGoogleDataManagerServer({ tokens: [token], accounts: [account, otherAccount] })
  ads = platform()
})
afterAll(() => google.close())

const lastRequest = () => google.requests.at(-1)!
let listCount = 0
const newList = async (accountId = account) => ads.createAudience(token, accountId, `Visitors ${++listCount}`)

/** The AdsPlatformError the call fails with. */
async function failure(call: Promise<unknown>): Promise<AdsPlatformError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(AdsPlatformError)
  return error as AdsPlatformError
}

describe('the Google adapter: what it is', () => {
  it('names Google, takes 10,000 members a request, asks for an offline grant', async () => {
    expect(ads.name).toBe('Google Ads')
    expect(ads.maxBatch).toBe(10_000)
    expect(ads.authorizationParams).toEqual({ access_type: 'offline', prompt: 'consent' })
    expect(googleOAuth).toEqual({
      authorizeUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
      tokenUrl: 'https://oauth2.googleapis.com/token',
      scope: 'https://www.googleapis.com/auth/datamanager',
    })
  })

  it('lists no accounts unless a way is configured, and then the configured one', async () => {
    expect(await ads.listAccounts(token)).toBeUndefined()
    const listing = platform({ listAccounts: async (t) => [{ id: account, name: `for ${t.length}` }] })
    expect(await listing.listAccounts(token)).toEqual([{ id: account, name: `for ${token.length}` }])
  })

  it('takes a Google Ads customer id as ten digits, alone or as 123-456-7890', () => {
    for (const id of ['1234567890', '123-456-7890', ' 123-456-7890 ']) expect(ads.isAccountId(id)).toBe(true)
    for (const id of [
      '123456789',
      '12345678901',
      '1234-567-890',
      '123 456 7890',
      'act_1234567890',
      '',
      '12345678a0',
    ]) {
      expect(ads.isAccountId(id)).toBe(false)
    }
  })

  it('refuses settings Google would not take', () => {
    const bad = (options: Partial<GoogleAdsPlatformOptions>) => () => platform(options)
    expect(bad({ consent: { adUserData: 'GRANTED' as never } })).toThrow(/CONSENT_GRANTED or CONSENT_DENIED/)
    expect(bad({ membershipDays: 0 })).toThrow(/whole days from 1 to 540/)
    expect(bad({ membershipDays: 541 })).toThrow(/whole days/)
    expect(bad({ membershipDays: 1.5 })).toThrow(/whole days/)
    expect(bad({ apiUrl: 'http://datamanager.example.com/v1' })).toThrow(/must be https/)
    expect(bad({ apiUrl: 'not a url' })).toThrow(/not a URL/)
  })
})

describe('the Google adapter: emails as Google normalizes them', () => {
  it('lowercases, drops all whitespace, and drops the dots and +tags of gmail.com and googlemail.com names', () => {
    expect(normalizeGoogleEmail('  Jane.Doe@GMail.com ')).toBe('janedoe@gmail.com')
    expect(normalizeGoogleEmail('j.a.n.e@googlemail.com')).toBe('jane@googlemail.com')
    expect(normalizeGoogleEmail('Jane .Doe@Example.com')).toBe('jane.doe@example.com')
    expect(normalizeGoogleEmail('jane.doe+ads@gmail.com')).toBe('janedoe@gmail.com')
    expect(normalizeGoogleEmail('jane.doe+ads@example.com')).toBe('jane.doe+ads@example.com')
    expect(normalizeGoogleEmail('jane.doe@mail.gmail.com')).toBe('jane.doe@mail.gmail.com')
  })

  it("hashes the normalized email to SHA-256 hex, and asks the sync for Google's rule", () => {
    expect(googleEmailHash(' Jane.Doe@GMail.com')).toBe(sha('janedoe@gmail.com'))
    expect(googleEmailHash('Jane@Example.com')).toBe(sha('jane@example.com'))
    expect(ads.emailRule).toBe('google')
  })
})

describe('the Google adapter: user lists', () => {
  it('creates one Customer Match contact list on the account, and answers its id', async () => {
    const id = await ads.createAudience(token, '123-456-7890', ' Visitors from Acme ')
    const request = lastRequest()
    expect(request).toMatchObject({
      method: 'POST',
      path: `/v1/accountTypes/GOOGLE_ADS/accounts/${account}/userLists`,
      authorization: `Bearer ${token}`,
      contentType: 'application/json',
    })
    expect(request.body).toEqual({
      displayName: 'Visitors from Acme',
      description: 'Customer list kept in sync by visitor-id',
      membershipStatus: 'OPEN',
      membershipDuration: '7776000s',
      ingestedUserListInfo: {
        uploadKeyTypes: ['CONTACT_ID'],
        contactIdInfo: { dataSourceType: 'DATA_SOURCE_TYPE_FIRST_PARTY' },
      },
    })
    expect(google.userList(account, id)).toMatchObject({
      name: `accountTypes/GOOGLE_ADS/accounts/${account}/userLists/${id}`,
      displayName: 'Visitors from Acme',
    })
  })

  it("leaves the membership duration to Google's maximum when none is set", async () => {
    const id = await platform({ membershipDays: undefined }).createAudience(token, account, 'Longest')
    expect(lastRequest().body).not.toHaveProperty('membershipDuration')
    expect(google.userList(account, id).membershipDuration).toBe(`${540 * 86_400}s`)
  })

  it('answers the list already made under a name used on the account (google-user-lists.test.ts)', async () => {
    const first = await ads.createAudience(token, account, 'Twice')
    expect(await ads.createAudience(token, account, 'Twice')).toBe(first)
    expect(google.userLists(account).filter((l) => l.displayName === 'Twice')).toHaveLength(1)
  })

  it('reports an account the grant has no access to, and refuses one that is no customer id unsent', async () => {
    const denied = await failure(ads.createAudience(token, '5555555555', 'Elsewhere'))
    expect(denied).toMatchObject({ kind: 'report', details: { status: 403, code: 'PERMISSION_DENIED' } })
    const sent = google.requests.length
    const malformed = await failure(ads.createAudience(token, 'act_12345', 'Nowhere'))
    expect(malformed).toMatchObject({ kind: 'report' })
    expect(google.requests.length).toBe(sent)
  })
})

describe('the Google adapter: members', () => {
  it('ingests hashed emails to the list with consent, HEX encoding and the Customer Match terms', async () => {
    const list = await newList()
    const batch = hashes(3)
    const outcome = await ads.addMembers(
      token,
      { accountId: '123-456-7890', audienceId: list },
      batch,
      position,
    )
    expect(outcome).toEqual({ sent: 3, requestId: expect.any(String) })
    const request = lastRequest()
    expect(request).toMatchObject({
      method: 'POST',
      path: '/v1/audienceMembers:ingest',
      authorization: `Bearer ${token}`,
      contentType: 'application/json',
    })
    expect(request.body).toEqual({
      destinations: [
        { operatingAccount: { accountType: 'GOOGLE_ADS', accountId: account }, productDestinationId: list },
      ],
      audienceMembers: batch.map((h) => ({ userData: { userIdentifiers: [{ emailAddress: h }] } })),
      consent: granted,
      termsOfService: { customerMatchTermsOfServiceStatus: 'ACCEPTED' },
      encoding: 'HEX',
      validateOnly: false,
    })
    expect(google.members(account, list)).toEqual([...batch].sort())
  })

  it('sends a list of 25,000 in requests of at most 10,000, each with the consent', async () => {
    const list = await newList()
    const all = hashes(25_000, 'bulk')
    const before = google.requests.length
    for (let start = 0; start < all.length; start += ads.maxBatch) {
      await ads.addMembers(
        token,
        { accountId: account, audienceId: list },
        all.slice(start, start + ads.maxBatch),
        position,
      )
    }
    const sent = google.requests.slice(before) as { body: { audienceMembers: unknown[]; consent: unknown } }[]
    expect(sent.map((r) => r.body.audienceMembers.length)).toEqual([10_000, 10_000, 5_000])
    for (const request of sent) expect(request.body.consent).toEqual(granted)
    expect(google.members(account, list).length).toBe(25_000)
  })

  it('refuses more than 10,000 members, or a malformed hash, before sending', async () => {
    const list = await newList()
    const sent = google.requests.length
    const target = { accountId: account, audienceId: list }
    expect(await failure(ads.addMembers(token, target, hashes(10_001), position))).toMatchObject({
      kind: 'report',
    })
    expect(await failure(ads.addMembers(token, target, ['jane@example.com'], position))).toMatchObject({
      kind: 'report',
    })
    expect(google.requests.length).toBe(sent)
    expect(await ads.addMembers(token, target, [], position)).toEqual({ sent: 0 })
  })

  it('removes members with the same destination and encoding, and no consent or terms (the request has none)', async () => {
    const list = await newList()
    const target = { accountId: account, audienceId: list }
    const batch = hashes(4, 'leaving')
    await ads.addMembers(token, target, batch, position)
    const outcome = await ads.removeMembers(token, target, batch.slice(0, 2), position)
    expect(outcome).toEqual({ sent: 2, requestId: expect.any(String) })
    expect(lastRequest()).toMatchObject({ method: 'POST', path: '/v1/audienceMembers:remove' })
    expect(lastRequest().body).toEqual({
      destinations: [
        { operatingAccount: { accountType: 'GOOGLE_ADS', accountId: account }, productDestinationId: list },
      ],
      audienceMembers: batch
        .slice(0, 2)
        .map((h) => ({ userData: { userIdentifiers: [{ emailAddress: h }] } })),
      encoding: 'HEX',
      validateOnly: false,
    })
    expect(google.members(account, list)).toEqual(batch.slice(2).sort())
  })
})

describe('the Google adapter: request status', () => {
  it('reads a processed ingestion as succeeded', async () => {
    const list = await newList()
    const { requestId } = await ads.addMembers(
      token,
      { accountId: account, audienceId: list },
      hashes(2),
      position,
    )
    expect(await ads.requestStatus!(token, requestId!)).toEqual({ state: 'succeeded' })
    expect(lastRequest()).toMatchObject({
      method: 'GET',
      path: '/v1/requestStatus:retrieve',
      query: { requestId },
      authorization: `Bearer ${token}`,
      body: undefined,
    })
  })

  it('reads processing, then the match rate range Google gives once done', async () => {
    const list = await newList()
    google.holdRequests()
    const { requestId } = await ads.addMembers(
      token,
      { accountId: account, audienceId: list },
      hashes(5),
      position,
    )
    google.holdRequests(false)
    expect(await ads.requestStatus!(token, requestId!)).toEqual({ state: 'processing' })
    google.settleRequest(requestId!, { matchRateRange: 'MATCH_RATE_RANGE_20_TO_30' })
    expect(await ads.requestStatus!(token, requestId!)).toEqual({
      state: 'succeeded',
      matchRate: { min: 20, max: 30 },
    })
  })

  it('reads members dropped for denied consent as a failed or partial request, in words', async () => {
    const denying = platform({
      consent: { adUserData: 'CONSENT_DENIED', adPersonalization: 'CONSENT_DENIED' },
    })
    const list = await newList()
    const { requestId } = await denying.addMembers(
      token,
      { accountId: account, audienceId: list },
      hashes(3),
      position,
    )
    expect(lastRequest().body).toMatchObject({
      consent: { adUserData: 'CONSENT_DENIED', adPersonalization: 'CONSENT_DENIED' },
    })
    expect(await ads.requestStatus!(token, requestId!)).toEqual({
      state: 'failed',
      detail: 'ad user data consent denied (by the members or the account default) (3 records)',
    })
    expect(google.members(account, list)).toEqual([])
    const partial = await ads.addMembers(token, { accountId: account, audienceId: list }, hashes(4), position)
    google.settleRequest(partial.requestId!, {
      requestStatus: 'PARTIAL_SUCCESS',
      errorCounts: [{ reason: 'PROCESSING_ERROR_REASON_INVALID_FORMAT', recordCount: 1 }],
    })
    expect(await ads.requestStatus!(token, partial.requestId!)).toEqual({
      state: 'partial',
      detail: 'malformed identifiers (1 records)',
    })
  })

  it('reports a request id Google does not know', async () => {
    const error = await failure(ads.requestStatus!(token, 'no-such-request'))
    expect(error).toMatchObject({ kind: 'report', details: { status: 400, code: 'INVALID_REQUEST_ID' } })
  })
})
