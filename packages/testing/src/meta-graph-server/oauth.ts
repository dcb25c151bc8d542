// Facebook Login as the fake plays it: the login dialog (the person grants, or declines), the code
// exchange at /oauth/access_token (a short-lived user token) and the long-lived token exchange
// (grant_type=fb_exchange_token), each checking the app's id and secret; and the check every other
// call passes: a known, unexpired, unrevoked `access_token` with its `appsecret_proof`.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto'
import {
  codeRefused,
  expiredToken,
  invalidAppId,
  invalidClientSecret,
  proofInvalid,
  proofMissing,
  revokedToken,
  tokenRequired,
  unparsableToken,
} from './errors.js'
import { issueCode, issueToken, type MetaGraphState, nowOf, type TokenRecord } from './state.js'

const codeLifetimeMs = 10 * 60_000

/**
 * The login dialog: the person grants (a redirect with `code` and `state`) or declines (Meta's
 * `error=access_denied` redirect). Answers a page, not a redirect, for a wrong app or redirect URI,
 * as Facebook does.
 */
export function dialog(
  state: MetaGraphState,
  params: Record<string, string>,
): { status: number; location?: string; text?: string } {
  if (params.client_id !== state.appId)
    return { status: 400, text: 'Invalid App ID: the app id is not valid.' }
  const redirect = parseUrl(params.redirect_uri)
  if (!redirect) return { status: 400, text: 'URL blocked: the redirect_uri is not a valid URL.' }
  if ((params.response_type ?? 'code') !== 'code')
    return { status: 400, text: 'This fake serves response_type=code only.' }
  const answer = state.dialogAnswers.shift() ?? 'grant'
  if (answer === 'deny') {
    redirect.searchParams.set('error', 'access_denied')
    redirect.searchParams.set('error_code', '200')
    redirect.searchParams.set('error_description', 'Permissions error')
    redirect.searchParams.set('error_reason', 'user_denied')
  } else {
    const scopes = (params.scope ?? '').split(/[\s,]+/).filter(Boolean)
    const code = issueCode(state, {
      redirectUri: params.redirect_uri!,
      scopes,
      codeChallenge: params.code_challenge,
    })
    redirect.searchParams.set('code', code)
  }
  if (params.state !== undefined) redirect.searchParams.set('state', params.state)
  // Facebook appends this fragment to the redirect of the login dialog.
  return { status: 302, location: `${redirect.href}#_=_` }
}

/** /oauth/access_token: a code for a short-lived token, or a short-lived token for a long-lived one. */
export function accessToken(state: MetaGraphState, params: Record<string, string>) {
  if (params.client_id !== state.appId) throw invalidAppId()
  if (!params.client_secret || !same(params.client_secret, state.appSecret)) throw invalidClientSecret()
  if (params.grant_type === 'fb_exchange_token') {
    const record = checkToken(state, params.fb_exchange_token)
    const token = issueToken(state, 'long', record.scopes)
    return { access_token: token, token_type: 'bearer', expires_in: state.longLivedSeconds }
  }
  const code = params.code ? state.codes.get(params.code) : undefined
  if (!code) throw codeRefused(undefined, 'Invalid verification code format.')
  if (code.used) throw codeRefused(36009, 'This authorization code has been used.')
  if (nowOf(state) - code.issuedAt > codeLifetimeMs)
    throw codeRefused(36007, 'This authorization code has expired.')
  if (params.redirect_uri !== code.redirectUri) {
    throw codeRefused(
      36008,
      'Error validating verification code. Please make sure your redirect_uri is identical to the one you used in the OAuth dialog request',
    )
  }
  if (code.codeChallenge !== undefined && !verifierMatches(params.code_verifier, code.codeChallenge)) {
    throw codeRefused(undefined, 'Invalid code verifier.')
  }
  code.used = true
  const token = issueToken(state, 'short', code.scopes)
  return { access_token: token, token_type: 'bearer', expires_in: state.shortLivedSeconds }
}

/** The token of a Graph call, checked with its proof; Meta's error when either is wrong. */
export function authenticate(state: MetaGraphState, params: Record<string, string>): TokenRecord {
  const token = params.access_token
  if (!token) throw tokenRequired()
  const record = checkToken(state, token)
  const proof = params.appsecret_proof
  // The app this fake plays has "Require App Secret" on, as the README asks: no proof, no call.
  if (!proof) throw proofMissing()
  const expected = createHmac('sha256', state.appSecret).update(token).digest('hex')
  if (!same(proof, expected)) throw proofInvalid()
  return record
}

function checkToken(state: MetaGraphState, token: string | undefined): TokenRecord {
  const record = token ? state.tokens.get(token) : undefined
  if (!record) throw unparsableToken()
  if (record.revoked) throw revokedToken(state.appId)
  const now = nowOf(state)
  if (record.expiresAt <= now) throw expiredToken(record.expiresAt, now)
  return record
}

function verifierMatches(verifier: string | undefined, challenge: string): boolean {
  if (!verifier) return false
  return same(createHash('sha256').update(verifier).digest('base64url'), challenge)
}

function same(a: string, b: string): boolean {
  const left = Buffer.from(a)
  const right = Buffer.from(b)
  return left.length === right.length && timingSafeEqual(left, right)
}

function parseUrl(value: string | undefined): URL | undefined {
  if (!value) return undefined
  try {
    const url = new URL(value)
    return url.protocol === 'https:' || url.protocol === 'http:' ? url : undefined
  } catch {
    return undefined
  }
}
