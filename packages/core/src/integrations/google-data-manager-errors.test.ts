// How the searchAds adapter reads Google's failures: each error body the local Data Manager API
// answers (and no answer at all) mapped to what the sync does: wait and resume, reconnect, report.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import {
  type GoogleDataManagerServer,
  GoogleServerError,
  googleFailures,
  startGoogleDataManagerServer,
} from '@visitor-id/testing/google-data-manager-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AdsPlatform, AdsPlatformError } from './ads-platform.js'
import { createGoogleAdsPlatform } from './google-data-manager.js'

const account = '1234567890'
const consent = { adUserData: 'CONSENT_GRANTED' } as const
const hash = 'a'.repeat(64)
const position = { syncId: 'sync-1', sequence: 1, last: true }

let google: GoogleDataManagerServer
let ads: AdsPlatform
let list: string

beforeAll(async () => {
  google = await startGoogleDataManagerServer({ accounts: [account] })
  ads = createGoogleAdsPlatform({ apiUrl: google.apiUrl, consent })
  list = await ads.createAudience(google.token, account, 'Errors')
})
afterAll(() => google.close())

async function failure(call: Promise<unknown>): Promise<AdsPlatformError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(AdsPlatformError)
  return error as AdsPlatformError
}

const add = (platform = ads, token = google.token) =>
  platform.addMembers(token, { accountId: account, audienceId: list }, [hash], position)

describe('the Google adapter: errors that wait and resume', () => {
  it('waits as Retry-After says on 429 RESOURCE_EXHAUSTED, then the same batch goes through', async () => {
    google.failNext(googleFailures.rateLimited({ retryAfterSeconds: 12 }))
    const error = await failure(add())
    expect(error).toMatchObject({
      kind: 'retry_later',
      details: { status: 429, code: 'RATE_LIMIT_EXCEEDED', retryAfterMs: 12_000 },
    })
    expect(error.message).toMatch(/Quota exceeded/)
    expect(await add()).toMatchObject({ sent: 1, requestId: expect.any(String) })
  })

  it("waits as RetryInfo's retryDelay says when there is no Retry-After", async () => {
    google.failNext(
      new GoogleServerError(429, 'RESOURCE_EXHAUSTED', 'Too many requests.', [
        { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '2.5s' },
      ]),
    )
    expect(await failure(add())).toMatchObject({ kind: 'retry_later', details: { retryAfterMs: 2_500 } })
  })

  it('backs off on TOO_MANY_AUDIENCE_MEMBERS and on an unavailable service', async () => {
    google.failNext(googleFailures.tooManyMembers(), googleFailures.unavailable())
    expect(await failure(add())).toMatchObject({
      kind: 'retry_later',
      details: { status: 400, code: 'TOO_MANY_AUDIENCE_MEMBERS' },
    })
    expect(await failure(add())).toMatchObject({ kind: 'retry_later', details: { status: 503 } })
  })

  it('backs off when Google cannot be reached or does not answer in time', async () => {
    const closed = await startGoogleDataManagerServer()
    await closed.close()
    const unreachable = createGoogleAdsPlatform({ apiUrl: closed.apiUrl, consent })
    expect(await failure(add(unreachable))).toMatchObject({ kind: 'retry_later', details: { status: 0 } })
    const silent = await listen(() => {})
    try {
      const slow = createGoogleAdsPlatform({ apiUrl: `${silent.url}/v1`, consent, timeoutMs: 200 })
      const error = await failure(add(slow))
      expect(error).toMatchObject({ kind: 'retry_later', details: { status: 0 } })
      expect(error.message).toMatch(/did not answer within 0.2 s/)
    } finally {
      silent.server.closeAllConnections()
      silent.server.close()
    }
  })
})

describe('the Google adapter: errors that need a new grant', () => {
  it('asks for reconnection on an expired, a revoked or an unknown token, never naming it', async () => {
    for (const [token, standing] of [
      ['ya29.expired', 'expire'],
      ['ya29.revoked', 'revoke'],
    ] as const) {
      google.addToken(token)
      if (standing === 'expire') google.expireToken(token)
      else google.revokeToken(token)
      const error = await failure(add(ads, token))
      expect(error).toMatchObject({ kind: 'reauthorize', details: { status: 401 } })
      expect(error.message).not.toContain(token)
    }
    expect(await failure(add(ads, 'ya29.unknown'))).toMatchObject({ kind: 'reauthorize' })
  })

  it('asks for reconnection when the grant lacks the datamanager scope', async () => {
    google.failNext(googleFailures.scopeInsufficient())
    expect(await failure(add())).toMatchObject({
      kind: 'reauthorize',
      details: { status: 403, code: 'ACCESS_TOKEN_SCOPE_INSUFFICIENT' },
    })
  })
})

describe('the Google adapter: errors reported on the sync', () => {
  it("reports permission, internal and request errors with Google's words and reason", async () => {
    google.failNext(
      googleFailures.permissionDenied(),
      googleFailures.internalError(),
      googleFailures.invalidArgument(
        'audience_members[0]',
        'INVALID_SHA256_FORMAT',
        'The SHA256 encoded value is malformed.',
      ),
    )
    expect(await failure(add())).toMatchObject({
      kind: 'report',
      details: { status: 403, code: 'PERMISSION_DENIED' },
    })
    expect(await failure(add())).toMatchObject({
      kind: 'report',
      details: { status: 500, code: 'INTERNAL_ERROR' },
    })
    const invalid = await failure(add())
    expect(invalid).toMatchObject({ kind: 'report', details: { status: 400, code: 'INVALID_SHA256_FORMAT' } })
    expect(invalid.message).toBe(
      'Google Data Manager API: There was a problem with the request.; audience_members[0]: The SHA256 encoded value is malformed. (INVALID_ARGUMENT INVALID_SHA256_FORMAT)',
    )
  })

  it('reports an answer over the size cap, a non-JSON answer and a redirect', async () => {
    const capped = createGoogleAdsPlatform({ apiUrl: google.apiUrl, consent, maxAnswerBytes: 64 })
    expect(await failure(capped.createAudience(google.token, account, 'Capped'))).toMatchObject({
      kind: 'report',
    })
    const odd = await listen((_, response) => {
      response.writeHead(200, { 'content-type': 'text/html' })
      response.end('<html>hello</html>')
    })
    const moved = await listen((_, response) => {
      response.writeHead(302, { location: 'https://example.com/' })
      response.end()
    })
    try {
      const html = createGoogleAdsPlatform({ apiUrl: `${odd.url}/v1`, consent })
      expect((await failure(add(html))).message).toMatch(/something else than JSON/)
      const redirecting = createGoogleAdsPlatform({ apiUrl: `${moved.url}/v1`, consent })
      expect(await failure(add(redirecting))).toMatchObject({ kind: 'report', details: { status: 0 } })
    } finally {
      odd.server.close()
      moved.server.close()
    }
  })
})

/** A bare HTTP server on loopback answering with `handler`. */
async function listen(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; url: string }> {
  const server = createServer(handler)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
}
