// The Meta adapter against the local Graph API: real HTTP, so what is checked is what Meta would
// receive (paths at the pinned version, form fields, the token and its proof, upload sessions) and
// how its answers are read. The failures and their mapping are in meta-errors.test.ts.
import { createHash, createHmac } from 'node:crypto'
import { type MetaGraphServer, startMetaGraphServer } from '@visitor-id/testing/meta-graph-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { IntegrationProviderConfig } from '../config.js'
import type { AdsPlatform, AdsPlatformError } from './ads-platform.js'
import {
  createMetaAdsPlatform,
  metaEmailHash,
  metaGraphVersion,
  metaOAuthEndpoints,
  metaSessionId,
  metaTokenNeedsReconnect,
} from './meta-custom-audiences.js'
import { authorizationUrl, exchangeCode, pkcePair } from './oauth.js'

let meta: MetaGraphServer
let platform: AdsPlatform
let token: string

beforeAll(async () => {
  meta = await startMetaGraphServer()
  platform = createMetaAdsPlatform({ graphUrl: meta.url, appId: meta.appId, appSecret: meta.appSecret })
  token = meta.issueToken()
})
afterAll(() => meta.close())

const lastRequest = () => meta.requests.at(-1)!
const hashes = (count: number, prefix = 'person') =>
  Array.from({ length: count }, (_, i) => metaEmailHash(`${prefix}${i}@example.com`))
const rejection = (work: Promise<unknown>) =>
  work.then(
    () => {
      throw new Error('expected a rejection')
    },
    (error: unknown) => error as AdsPlatformError,
  )
const day = 24 * 3600_000

describe('Meta login: the OAuth constants, the code exchange and the long-lived token', () => {
  it('names the dialog and token endpoints at the pinned version, with the ads_management scope', () => {
    expect(metaOAuthEndpoints()).toEqual({
      authorizeUrl: `https://www.facebook.com/${metaGraphVersion}/dialog/oauth`,
      tokenUrl: `https://graph.facebook.com/${metaGraphVersion}/oauth/access_token`,
      scopes: ['ads_management'],
    })
    expect(() => metaOAuthEndpoints({ version: '26' })).toThrow(/vNN\.N/)
    expect(() => metaOAuthEndpoints({ graphUrl: 'http://graph.example.com' })).toThrow(/https/)
  })

  it('goes from the dialog to a short-lived token, then trades it for a long-lived one', async () => {
    const endpoints = metaOAuthEndpoints({ graphUrl: meta.url, dialogUrl: meta.url })
    const provider: IntegrationProviderConfig = {
      name: 'Meta',
      platform: 'meta',
      clientId: meta.appId,
      clientSecret: meta.appSecret,
      apiUrl: meta.url,
      ...endpoints,
    }
    const redirectUri = 'https://app.example.com/integrations/callback/socialAds'
    const { verifier, challenge } = await pkcePair()
    const page = authorizationUrl(provider, { redirectUri, state: 'st4te', codeChallenge: challenge })
    const dialog = await fetch(page, { redirect: 'manual' })
    expect(dialog.status).toBe(302)
    const callback = new URL(dialog.headers.get('location')!)
    expect(callback.searchParams.get('state')).toBe('st4te')

    const before = Date.now()
    const short = await exchangeCode(provider, {
      callback,
      state: 'st4te',
      redirectUri,
      codeVerifier: verifier,
    })
    expect(short.refreshToken).toBeUndefined()
    expect(short.expiresAt! - before).toBeLessThan(3 * 3600_000)
    expect(lastRequest()).toMatchObject({ method: 'POST', path: `/${metaGraphVersion}/oauth/access_token` })

    const kept = await platform.keepTokens!(short)
    expect(lastRequest()).toMatchObject({
      method: 'GET',
      path: `/${metaGraphVersion}/oauth/access_token`,
      query: {
        grant_type: 'fb_exchange_token',
        client_id: meta.appId,
        client_secret: meta.appSecret,
        fb_exchange_token: short.accessToken,
      },
    })
    expect(kept.accessToken).not.toBe(short.accessToken)
    expect(kept.refreshToken).toBeUndefined()
    expect(kept.scope).toBe(short.scope)
    expect(Math.abs(kept.expiresAt! - (Date.now() + 5_183_944_000))).toBeLessThan(60_000)
    expect(await platform.listAccounts(kept.accessToken)).toHaveLength(2)
  })

  it('assumes about 60 days when Meta gives no expires_in', async () => {
    const answer = { access_token: 'EAAlonglived', token_type: 'bearer' }
    const fakeFetch = (async () => Response.json(answer)) as typeof fetch
    const stubbed = createMetaAdsPlatform({ appId: '1', appSecret: 's3cret', fetch: fakeFetch, now: () => 0 })
    const kept = await stubbed.keepTokens!({
      accessToken: 'EAAshort',
      refreshToken: undefined,
      expiresAt: 1,
      scope: '',
    })
    expect(kept).toEqual({
      accessToken: 'EAAlonglived',
      refreshToken: undefined,
      expiresAt: 60 * day,
      scope: '',
    })
  })

  it('asks for a new authorization when the short-lived token expired before the trade', async () => {
    const short = meta.issueToken({ kind: 'short', expiresInSeconds: 1 })
    meta.advanceClock(2000)
    const error = await rejection(
      platform.keepTokens!({ accessToken: short, refreshToken: undefined, expiresAt: undefined, scope: '' }),
    )
    expect(error).toMatchObject({ kind: 'reauthorize', details: { code: 190 } })
    expect(error.message).not.toContain(short)
  })

  it('reports a wrong app secret, not retried as Meta code 1 otherwise would be', async () => {
    const wrong = createMetaAdsPlatform({
      graphUrl: meta.url,
      appId: meta.appId,
      appSecret: 'not-the-secret',
    })
    const short = meta.issueToken({ kind: 'short' })
    const error = await rejection(
      wrong.keepTokens!({ accessToken: short, refreshToken: undefined, expiresAt: undefined, scope: '' }),
    )
    expect(error).toMatchObject({ kind: 'report', details: { code: 1 } })
    expect(error.message).toMatch(/app's id or secret/)
  })

  it('tells when a token is within 7 days of its expiry', () => {
    const now = Date.parse('2026-06-01T00:00:00Z')
    expect(metaTokenNeedsReconnect(undefined, now)).toBe(false)
    expect(metaTokenNeedsReconnect(now + 8 * day, now)).toBe(false)
    expect(metaTokenNeedsReconnect(now + 7 * day, now)).toBe(true)
    expect(metaTokenNeedsReconnect(now - 1, now)).toBe(true)
  })
})

describe('Meta ad accounts', () => {
  it('lists every page by cursor, as act_ ids, each call with the token and its appsecret_proof', async () => {
    const accounts = Array.from({ length: 130 }, (_, i) => ({
      accountId: String(2000000000 + i),
      name: `Acct ${i}`,
    }))
    const many = await startMetaGraphServer({ accounts })
    try {
      const adapter = createMetaAdsPlatform({
        graphUrl: many.url,
        appId: many.appId,
        appSecret: many.appSecret,
      })
      const user = many.issueToken()
      const listed = await adapter.listAccounts(user)
      expect(listed).toHaveLength(130)
      expect(listed![0]).toEqual({ id: 'act_2000000000', name: 'Acct 0' })
      expect(listed!.at(-1)).toEqual({ id: 'act_2000000129', name: 'Acct 129' })
      const proof = createHmac('sha256', many.appSecret).update(user).digest('hex')
      expect(many.requests.map((r) => [r.method, r.path])).toEqual([
        ['GET', `/${metaGraphVersion}/me/adaccounts`],
        ['GET', `/${metaGraphVersion}/me/adaccounts`],
      ])
      expect(many.requests[0]!.query).toEqual({
        fields: 'id,name,account_id',
        limit: '100',
        access_token: user,
        appsecret_proof: proof,
      })
      expect(many.requests[1]!.query.after).toEqual(expect.any(String))
    } finally {
      await many.close()
    }
  })

  it('takes act_<digits> or the bare digits as an account id', () => {
    expect(platform.isAccountId('act_1000000001')).toBe(true)
    expect(platform.isAccountId('1000000001')).toBe(true)
    for (const bad of ['act_', 'act_12a', 'acct_1', '', '1/users', 'act_1 '])
      expect(platform.isAccountId(bad)).toBe(false)
  })
})

describe('Meta custom audiences', () => {
  it('creates a customer-file audience on the account and answers its id', async () => {
    const id = await platform.createAudience(token, 'act_1000000001', 'Visitors from pricing')
    expect(id).toMatch(/^\d+$/)
    const request = lastRequest()
    expect(request).toMatchObject({
      method: 'POST',
      path: `/${metaGraphVersion}/act_1000000001/customaudiences`,
      contentType: 'application/x-www-form-urlencoded',
    })
    expect(request.body).toEqual({
      name: 'Visitors from pricing',
      subtype: 'CUSTOM',
      customer_file_source: 'USER_PROVIDED_ONLY',
      description: expect.any(String),
      access_token: token,
      appsecret_proof: createHmac('sha256', meta.appSecret).update(token).digest('hex'),
    })
    expect(request.query).toEqual({})
    expect(meta.audience(id)).toMatchObject({ accountId: '1000000001', name: 'Visitors from pricing' })
  })

  it('prefixes a bare account number, and refuses what is no account id before any request', async () => {
    const id = await platform.createAudience(token, '1000000002', 'Typed account')
    expect(lastRequest().path).toBe(`/${metaGraphVersion}/act_1000000002/customaudiences`)
    expect(meta.audience(id)?.accountId).toBe('1000000002')
    const count = meta.requests.length
    await expect(platform.createAudience(token, '../me', 'x')).rejects.toMatchObject({ kind: 'report' })
    expect(meta.requests).toHaveLength(count)
  })
})

describe('Meta audience members', () => {
  let audienceId: string
  beforeAll(async () => {
    audienceId = await platform.createAudience(token, 'act_1000000001', 'Members')
  })
  const target = () => ({ accountId: 'act_1000000001', audienceId })

  it('uploads batches in one session: payload and session as Meta documents them, counts read back', async () => {
    const syncId = 'sync-upload-1'
    const batches = [hashes(3, 'a'), hashes(3, 'b'), hashes(2, 'c')]
    const outcomes = []
    for (const [i, batch] of batches.entries()) {
      const position = { syncId, sequence: i + 1, last: i === batches.length - 1, total: 8 }
      outcomes.push(await platform.addMembers(token, target(), batch, position))
      const body = lastRequest().body
      expect(lastRequest()).toMatchObject({
        method: 'POST',
        path: `/${metaGraphVersion}/${audienceId}/users`,
      })
      expect(JSON.parse(body.payload!)).toEqual({ schema: 'EMAIL_SHA256', data: batch })
      expect(JSON.parse(body.session!)).toEqual({
        session_id: metaSessionId(syncId, 'add'),
        batch_seq: i + 1,
        last_batch_flag: i === batches.length - 1,
        estimated_num_total: 8,
      })
      expect(body.appsecret_proof).toBe(createHmac('sha256', meta.appSecret).update(token).digest('hex'))
    }
    expect(outcomes).toEqual([
      { sent: 3, received: 3, invalid: 0 },
      { sent: 3, received: 3, invalid: 0 },
      { sent: 2, received: 2, invalid: 0 },
    ])
    expect(meta.members(audienceId)).toEqual(batches.flat().sort())
    const session = meta.sessions().find((s) => s.sessionId === metaSessionId(syncId, 'add'))
    expect(session).toMatchObject({
      operation: 'add',
      batches: [1, 2, 3],
      ended: true,
      received: 8,
      estimatedTotal: 8,
    })
  })

  it('resumes a session after a rate limit, and a batch sent again is taken again', async () => {
    const syncId = 'sync-resume'
    await platform.addMembers(token, target(), hashes(2, 'r1'), { syncId, sequence: 1, last: false })
    meta.failNext(1, { code: 613 })
    const error = await rejection(
      platform.addMembers(token, target(), hashes(2, 'r2'), { syncId, sequence: 2, last: false }),
    )
    expect(error.kind).toBe('retry_later')
    await platform.addMembers(token, target(), hashes(2, 'r2'), { syncId, sequence: 2, last: false })
    // The answer was lost (a restart): the same batch again is no duplicate.
    await platform.addMembers(token, target(), hashes(2, 'r2'), { syncId, sequence: 2, last: false })
    await platform.addMembers(token, target(), hashes(1, 'r3'), { syncId, sequence: 3, last: true })
    const session = meta.sessions().find((s) => s.sessionId === metaSessionId(syncId, 'add'))
    expect(session).toMatchObject({ batches: [1, 2, 2, 3], ended: true })
    expect(meta.members(audienceId)).toEqual(expect.arrayContaining([...hashes(2, 'r2'), ...hashes(1, 'r3')]))
  })

  it('removes members with DELETE and the same payload, in a session of its own', async () => {
    const gone = hashes(2, 'a')
    const outcome = await platform.removeMembers(token, target(), gone, {
      syncId: 'sync-upload-1',
      sequence: 1,
      last: true,
    })
    expect(outcome).toEqual({ sent: 2, received: 2, invalid: 0 })
    const request = lastRequest()
    expect(request).toMatchObject({ method: 'DELETE', path: `/${metaGraphVersion}/${audienceId}/users` })
    expect(JSON.parse(request.body.payload!)).toEqual({ schema: 'EMAIL_SHA256', data: gone })
    expect(JSON.parse(request.body.session!).session_id).toBe(metaSessionId('sync-upload-1', 'remove'))
    for (const hash of gone) expect(meta.members(audienceId)).not.toContain(hash)
    expect(meta.members(audienceId)).toContain(hashes(3, 'a')[2])
  })

  it('sends 10,000 members in one request and refuses 10,001 before sending', async () => {
    const full = hashes(10_000, 'full')
    const outcome = await platform.addMembers(token, target(), full, {
      syncId: 'sync-full',
      sequence: 1,
      last: true,
    })
    expect(outcome).toEqual({ sent: 10_000, received: 10_000, invalid: 0 })
    const count = meta.requests.length
    const error = await rejection(
      platform.addMembers(token, target(), [...full, metaEmailHash('one@more.com')], {
        syncId: 'x',
        sequence: 1,
        last: true,
      }),
    )
    expect(error).toMatchObject({ kind: 'report', message: expect.stringMatching(/at most 10000/) })
    expect(meta.requests).toHaveLength(count)
    expect(platform.maxBatch).toBe(10_000)
  })

  it('refuses what is no hash or no audience id, and an empty batch, before sending', async () => {
    const count = meta.requests.length
    const position = { syncId: 's', sequence: 1, last: true }
    await expect(platform.addMembers(token, target(), ['jane@example.com'], position)).rejects.toMatchObject({
      kind: 'report',
      message: expect.stringMatching(/member 0 is not a SHA-256/),
    })
    await expect(platform.addMembers(token, target(), [], position)).rejects.toMatchObject({ kind: 'report' })
    await expect(
      platform.addMembers(token, { accountId: 'act_1', audienceId: '1/../me' }, hashes(1), position),
    ).rejects.toMatchObject({ kind: 'report' })
    expect(meta.requests).toHaveLength(count)
  })

  it('reads num_received and num_invalid_entries as Meta reports them', async () => {
    const answer = {
      audience_id: '1',
      session_id: 1,
      num_received: 5,
      num_invalid_entries: 2,
      invalid_entry_samples: {},
    }
    const stubbed = createMetaAdsPlatform({
      appId: '1',
      appSecret: 's3cret',
      fetch: (async () => Response.json(answer)) as typeof fetch,
    })
    const outcome = await stubbed.addMembers('EAAx', { accountId: 'act_1', audienceId: '1' }, hashes(5), {
      syncId: 's',
      sequence: 1,
      last: true,
    })
    expect(outcome).toEqual({ sent: 5, received: 5, invalid: 2 })
  })
})

describe('Meta hashing and sessions', () => {
  it('hashes an email as Meta asks: trimmed, lowercased, SHA-256 hex', () => {
    const expected = createHash('sha256').update('jane.doe@example.com').digest('hex')
    expect(metaEmailHash('  Jane.Doe@Example.COM\t')).toBe(expected)
    expect(metaEmailHash('jane.doe@example.com')).toMatch(/^[0-9a-f]{64}$/)
    expect(() => metaEmailHash('   ')).toThrow(/empty/)
  })

  it('derives a stable session id per sync and operation, exact as a JSON number', () => {
    const id = metaSessionId('sync-1', 'add')
    expect(metaSessionId('sync-1', 'add')).toBe(id)
    expect(metaSessionId('sync-1', 'remove')).not.toBe(id)
    expect(metaSessionId('sync-2', 'add')).not.toBe(id)
    for (const syncId of ['a', 'b', 'c', 'sync-1']) {
      const value = metaSessionId(syncId, 'add')
      expect(Number.isSafeInteger(value) && value > 0).toBe(true)
      expect(JSON.parse(JSON.stringify({ value })).value).toBe(value)
    }
  })

  it('refuses options that are not a Meta app', () => {
    expect(() => createMetaAdsPlatform({ appId: 'my-app', appSecret: 's' })).toThrow(/digits/)
    expect(() => createMetaAdsPlatform({ appId: '1', appSecret: '' })).toThrow(/secret/)
    expect(() => createMetaAdsPlatform({ appId: '1', appSecret: 's', version: 'latest' })).toThrow(/vNN\.N/)
  })
})
