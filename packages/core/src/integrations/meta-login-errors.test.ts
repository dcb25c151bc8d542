// Meta's refusals of a login: its token endpoint answers them in the Graph API's error shape
// (`{ error: { message, type, code, error_subcode, fbtrace_id } }`), not RFC 6749's, so the OAuth
// client hands the body on (TokenEndpointError) and the Meta adapter puts it in words a person acts
// on, Meta's own included, never a code or secret. Against the local Graph API, which refuses
// expired, used and misdirected codes as Meta does.
import { type MetaGraphServer, startMetaGraphServer } from '@visitor-id/testing/meta-graph-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { IntegrationProviderConfig } from '../config.js'
import { type AdsPlatform, AdsPlatformError } from './ads-platform.js'
import { createMetaAdsPlatform, metaOAuthEndpoints } from './meta-custom-audiences.js'
import { metaLoginFailure } from './meta-errors.js'
import { authorizationUrl, exchangeCode, pkcePair, TokenEndpointError } from './oauth.js'

let meta: MetaGraphServer
let platform: AdsPlatform
let provider: IntegrationProviderConfig
const redirectUri = 'https://app.example.com/integrations/callback/socialAds'

beforeAll(async () => {
  meta = await startMetaGraphServer()
  platform = createMetaAdsPlatform({ graphUrl: meta.url, appId: meta.appId, appSecret: meta.appSecret })
  provider = {
    name: 'Meta',
    platform: 'meta',
    clientId: meta.appId,
    clientSecret: meta.appSecret,
    apiUrl: meta.url,
    ...metaOAuthEndpoints({ graphUrl: meta.url, dialogUrl: meta.url }),
  }
})
afterAll(() => meta.close())

const body = (code: number, message: string, subcode?: number) => ({
  error: {
    message,
    type: 'OAuthException',
    code,
    ...(subcode ? { error_subcode: subcode } : {}),
    fbtrace_id: 'AbCdEf123',
  },
})

/** The person goes through the dialog; the callback URL and the PKCE verifier. */
async function authorized(): Promise<{ callback: URL; verifier: string }> {
  const { verifier, challenge } = await pkcePair()
  const page = authorizationUrl(provider, { redirectUri, state: 'st4te', codeChallenge: challenge })
  const dialog = await fetch(page, { redirect: 'manual' })
  return { callback: new URL(dialog.headers.get('location')!), verifier }
}

/** The code exchange's failure as the installation reads it: the adapter's error. */
async function refused(callback: URL, verifier: string, redirect = redirectUri) {
  const error = await exchangeCode(provider, {
    callback,
    state: 'st4te',
    redirectUri: redirect,
    codeVerifier: verifier,
  }).then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(TokenEndpointError)
  const { status, body: answer } = error as TokenEndpointError
  const code = callback.searchParams.get('code')!
  const read = platform.tokenEndpointFailure!(status, answer, [code, verifier])
  expect(read).toBeInstanceOf(AdsPlatformError)
  for (const secret of [code, verifier, meta.appSecret]) expect(read!.message).not.toContain(secret)
  return { status, answer, read: read! }
}

describe("Meta's refusals of the code exchange, from its token endpoint", () => {
  it('an expired code (100/36007): the body handed on, and words to start again in Meta’s', async () => {
    const { callback, verifier } = await authorized()
    meta.advanceClock(11 * 60_000)
    const { status, answer, read } = await refused(callback, verifier)
    expect(status).toBe(400)
    expect(answer).toMatchObject({ error: { code: 100, error_subcode: 36007, type: 'OAuthException' } })
    expect(read).toMatchObject({ kind: 'report', details: { status: 400, code: 100 } })
    expect(read.message).toMatch(/^The Meta authorization code expired .*: start the installation again/)
    expect(read.message).toContain('Meta: This authorization code has expired. [code 100/36007, trace ')
  })

  it('a used code (100/36009) and a redirect URI other than the dialog’s (100/36008)', async () => {
    const first = await authorized()
    await exchangeCode(provider, {
      callback: first.callback,
      state: 'st4te',
      redirectUri,
      codeVerifier: first.verifier,
    })
    const used = await refused(first.callback, first.verifier)
    expect(used.read.message).toMatch(/already used .*start the installation again/)
    expect(used.read.message).toContain('This authorization code has been used.')
    const second = await authorized()
    const elsewhere = await refused(second.callback, second.verifier, 'https://other.example.com/cb')
    expect(elsewhere.read.message).toMatch(/^Meta refused this server's redirect URI/)
    expect(elsewhere.read.message).toContain('[code 100/36008')
  })
})

describe('the words of each refusal', () => {
  const read = (step: 'code' | 'trade', answer: unknown, secrets: string[] = []) =>
    metaLoginFailure(step, 400, answer, secrets)

  it('a redirect URI Meta does not take (191), at either step', () => {
    for (const step of ['code', 'trade'] as const) {
      const error = read(
        step,
        body(191, "Can't load URL: The domain of this URL isn't included in the app's domains."),
      )
      expect(error).toMatchObject({ kind: 'report', details: { code: 191 } })
      expect(error.message).toMatch(/^Meta refused this server's redirect URI: .*Valid OAuth Redirect URIs/)
      expect(error.message).toContain("Meta: Can't load URL")
    }
  })

  it('another refusal of the code (100): start again, in Meta’s words', () => {
    const error = read('code', body(100, 'Invalid verification code format.'))
    expect(error.message).toBe(
      'Meta refused the authorization code: start the installation again ' +
        '(Meta: Invalid verification code format. [code 100, trace AbCdEf123])',
    )
  })

  it('a refused token (190): reconnect, as any Graph call says', () => {
    const error = read('trade', body(190, 'Error validating access token: Session has expired.', 463))
    expect(error).toMatchObject({ kind: 'reauthorize', details: { code: 190 } })
    expect(error.message).toMatch(/the token expired/)
  })

  it("the app's id or secret (101, 1), and throttling (4)", () => {
    const wrongSecret = read('code', body(1, 'Error validating client secret.'))
    expect(wrongSecret).toMatchObject({ kind: 'report', details: { code: 1 } })
    expect(wrongSecret.message).toMatch(/app's id or secret/)
    expect(read('code', body(101, 'Error validating application. Invalid application ID.')).message).toMatch(
      /app's id or secret/,
    )
    expect(read('trade', body(4, '(#4) Application request limit reached'))).toMatchObject({
      kind: 'retry_later',
    })
  })

  it('cuts the secrets out of Meta’s words, and reads a body without an error', () => {
    const error = read('code', body(100, 'Code AQBx-secret-code-123 is invalid'), ['AQBx-secret-code-123'])
    expect(error.message).toContain('Code [redacted] is invalid')
    expect(read('code', undefined).message).toMatch(/answered 400 without an error body/)
    expect(read('code', { error: 'invalid_grant' }).message).toMatch(/without an error body/)
  })
})
