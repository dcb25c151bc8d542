// How the Meta adapter reads Meta's failures, against the local Graph API: each error code Meta
// documents for these calls becomes wait-and-resume, reconnect or report, in words a person can act
// on and never with the token; and the transport's own limits (timeout, answer size, redirects).
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { type MetaGraphServer, startMetaGraphServer } from '@visitor-id/testing/meta-graph-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AdsPlatform, AdsPlatformError } from './ads-platform.js'
import { createMetaAdsPlatform, metaEmailHash, metaGraphVersion } from './meta-custom-audiences.js'
import { retryAfterMs } from './meta-errors.js'

let meta: MetaGraphServer
let platform: AdsPlatform
let token: string
let audienceId: string

beforeAll(async () => {
  meta = await startMetaGraphServer()
  platform = createMetaAdsPlatform({ graphUrl: meta.url, appId: meta.appId, appSecret: meta.appSecret })
  token = meta.issueToken()
  audienceId = await platform.createAudience(token, 'act_1000000001', 'Errors')
})
afterAll(() => meta.close())

const rejection = (work: Promise<unknown>) =>
  work.then(
    () => {
      throw new Error('expected a rejection')
    },
    (error: unknown) => error as AdsPlatformError,
  )
let syncs = 0
/** One batch of one new sync. */
const upload = (adapter = platform, user = token, audience = audienceId) =>
  adapter.addMembers(user, { accountId: 'act_1000000001', audienceId: audience }, [metaEmailHash('a@b.co')], {
    syncId: `errors-${++syncs}`,
    sequence: 1,
    last: true,
  })

describe('Meta throttling and passing faults: retry later', () => {
  for (const code of [4, 17, 32, 341, 613, 80003, 80004, 1, 2]) {
    it(`code ${code}`, async () => {
      meta.failNext(1, { code })
      const error = await rejection(upload())
      expect(error).toMatchObject({ name: 'AdsPlatformError', kind: 'retry_later', details: { code } })
      expect(error.message).toMatch(/resumes later/)
      // The next call goes through: the failure was the one asked for.
      await expect(upload()).resolves.toMatchObject({ received: 1 })
    })
  }

  it("waits as long as Meta's usage headers say", async () => {
    const usage = {
      '1357': [{ type: 'custom_audience', call_count: 100, estimated_time_to_regain_access: 7 }],
    }
    meta.failNext(1, { code: 80003, headers: { 'x-business-use-case-usage': JSON.stringify(usage) } })
    expect(await rejection(upload())).toMatchObject({
      kind: 'retry_later',
      details: { retryAfterMs: 7 * 60_000 },
    })
    meta.failNext(1, {
      code: 17,
      headers: { 'x-ad-account-usage': '{"acc_id_util_pct":100,"reset_time_duration":90}' },
    })
    expect(await rejection(upload())).toMatchObject({ details: { retryAfterMs: 90_000 } })
    meta.failNext(1, { code: 4, headers: { 'x-app-usage': '{"call_count":100}' } })
    expect((await rejection(upload())).details.retryAfterMs).toBeUndefined()
    expect(retryAfterMs(new Headers({ 'x-business-use-case-usage': 'not json', 'retry-after': '5' }))).toBe(
      5000,
    )
  })

  it('counts an unreachable Graph API and a timeout as passing', async () => {
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const { port } = closed.address() as AddressInfo
    await new Promise((resolve) => closed.close(resolve))
    const away = createMetaAdsPlatform({
      graphUrl: `http://127.0.0.1:${port}`,
      appId: '1',
      appSecret: 's3cret',
    })
    expect(await rejection(away.listAccounts(token))).toMatchObject({
      kind: 'retry_later',
      details: { status: 0 },
    })

    const impatient = createMetaAdsPlatform({ ...credentials(), timeoutMs: 50 })
    meta.delayNext(1, 300)
    const error = await rejection(impatient.listAccounts(token))
    expect(error).toMatchObject({ kind: 'retry_later', details: { status: 0 } })
    expect(error.message).toMatch(/no answer within 50 ms/)
  })
})

describe('Meta refused tokens: reconnect', () => {
  it('an expired token (190/463)', async () => {
    const user = meta.issueToken({ expiresInSeconds: 60 })
    meta.advanceClock(61_000)
    const error = await rejection(upload(platform, user))
    expect(error).toMatchObject({ kind: 'reauthorize', details: { code: 190 } })
    expect(error.message).toMatch(/the token expired.*reconnect/)
    expect(error.message).not.toContain(user)
  })

  it('a revoked token (190/458) and an unknown one', async () => {
    const user = meta.issueToken()
    meta.revokeToken(user)
    expect(await rejection(platform.listAccounts(user))).toMatchObject({ kind: 'reauthorize' })
    expect(await rejection(platform.listAccounts('EAAnot-a-token'))).toMatchObject({ kind: 'reauthorize' })
  })
})

describe('Meta refusals a person acts on: reported', () => {
  it('a permission the token lacks (200)', async () => {
    const reader = meta.issueToken({ scopes: ['ads_read'] })
    const error = await rejection(platform.createAudience(reader, 'act_1000000001', 'No permission'))
    expect(error).toMatchObject({ kind: 'report', details: { code: 200, status: 403 } })
    expect(error.message).toMatch(/ads_management permission and a role on the ad account/)
  })

  it('Custom Audience terms the ad account has not accepted (2663)', async () => {
    meta.setTermsAccepted('1000000002', false)
    const error = await rejection(platform.createAudience(token, 'act_1000000002', 'Terms'))
    expect(error).toMatchObject({ kind: 'report', details: { code: 2663 } })
    expect(error.message).toMatch(/has not accepted Meta's Custom Audience terms/)
    meta.setTermsAccepted('1000000002', true)
  })

  it('an audience Meta could not update (2650), with its words for a person when it gives them', async () => {
    meta.failNext(1, {
      code: 2650,
      subcode: 1713230,
      userTitle: 'Audience Upload Blocked',
      userMessage: 'Resolve it.',
    })
    const error = await rejection(upload())
    expect(error).toMatchObject({ kind: 'report', details: { code: 2650 } })
    expect(error.message).toMatch(
      /could not update the custom audience.*Audience Upload Blocked: Resolve it\./,
    )
    expect(error.message).toMatch(/code 2650\/1713230, trace /)
  })

  it('an audience out of reach (100/33)', async () => {
    const error = await rejection(upload(platform, token, '99999'))
    expect(error).toMatchObject({ kind: 'report', details: { code: 100 } })
    expect(error.message).toMatch(/does not let the connected person reach/)
  })

  it('another version than the one served (2500)', async () => {
    const older = createMetaAdsPlatform({ ...credentials(), version: 'v19.0' })
    const error = await rejection(older.listAccounts(token))
    expect(error).toMatchObject({ kind: 'report', details: { code: 2500 } })
    expect(error.message).toMatch(/Graph API version setting/)
    expect(meta.requests.at(-1)!.path).toBe('/v19.0/me/adaccounts')
  })

  it('a wrong appsecret_proof (the app secret setting), and none at all', async () => {
    const wrong = createMetaAdsPlatform({ ...credentials(), appSecret: 'another-secret' })
    const error = await rejection(wrong.listAccounts(token))
    expect(error).toMatchObject({ kind: 'report', details: { code: 100 } })
    expect(error.message).toMatch(/Invalid appsecret_proof/)
    const bare = await fetch(`${meta.url}/${metaGraphVersion}/me/adaccounts?access_token=${token}`)
    expect(await bare.json()).toMatchObject({
      error: { message: 'API calls from the server require an appsecret_proof argument', code: 100 },
    })
  })

  it('an unknown code, with Meta’s message and never the token', async () => {
    meta.failNext(1, { code: 368, message: `(#368) Blocked for ${token}` })
    const error = await rejection(upload())
    expect(error).toMatchObject({ kind: 'report', details: { code: 368 } })
    expect(error.message).toContain('[redacted]')
    expect(error.message).not.toContain(token)
  })
})

describe('the transport', () => {
  it('reads at most the answer cap', async () => {
    const capped = createMetaAdsPlatform({ ...credentials(), maxAnswerBytes: 64 })
    const error = await rejection(capped.listAccounts(token))
    expect(error).toMatchObject({ kind: 'report', message: expect.stringMatching(/more than 64 bytes/) })
  })

  it('follows no redirect and bounds every request in time', async () => {
    const seen: RequestInit[] = []
    const recording = ((input: string | URL | Request, init?: RequestInit) => {
      seen.push(init!)
      return fetch(input, init)
    }) as typeof fetch
    const adapter = createMetaAdsPlatform({ ...credentials(), fetch: recording })
    await adapter.listAccounts(token)
    await upload(adapter)
    expect(seen).toHaveLength(2)
    for (const init of seen) {
      expect(init.redirect).toBe('error')
      expect(init.signal).toBeInstanceOf(AbortSignal)
    }
  })

  it('reports a redirect instead of following it', async () => {
    const redirecting = createServer((_, response) => {
      response.writeHead(302, { location: 'https://elsewhere.example/' })
      response.end()
    })
    await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve))
    const { port } = redirecting.address() as AddressInfo
    try {
      const adapter = createMetaAdsPlatform({
        graphUrl: `http://127.0.0.1:${port}`,
        appId: '1',
        appSecret: 's3cret',
      })
      expect(await rejection(adapter.listAccounts(token))).toMatchObject({
        kind: 'report',
        message: expect.stringMatching(/redirect/),
      })
    } finally {
      await new Promise((resolve) => redirecting.close(resolve))
    }
  })
})

function credentials() {
  return { graphUrl: meta.url, appId: meta.appId, appSecret: meta.appSecret }
}
