// OAuth 2.0 with an ads platform (docs/decisions.md, "Integrations"): authorization code with PKCE (S256),
// through oauth4webapi (RFC-conformant checks of every response). The authorization server is
// described by the configured URLs (no discovery: ads platforms rarely publish it). Plain http is
// allowed only for loopback addresses (a local test server), never for a remote one.
import * as oauth from 'oauth4webapi'
import type { IntegrationProviderConfig } from '../config.js'

export interface TokenSet {
  accessToken: string
  /** Unset when the provider gives none (the integration then needs a new authorization at expiry). */
  refreshToken: string | undefined
  /** Milliseconds since the epoch; unset when the provider says nothing. */
  expiresAt: number | undefined
  scope: string
}

/** The provider refused a grant for good (a revoked or expired refresh token, a used code). */
export class OAuthGrantError extends Error {
  constructor(
    readonly error: string,
    message: string,
  ) {
    super(message)
    this.name = 'OAuthGrantError'
  }
}

const loopback = (url: string) => ['127.0.0.1', 'localhost', '[::1]'].includes(new URL(url).hostname)

function server(provider: IntegrationProviderConfig): oauth.AuthorizationServer {
  return {
    issuer: new URL(provider.authorizeUrl).origin,
    authorization_endpoint: provider.authorizeUrl,
    token_endpoint: provider.tokenUrl,
  }
}

const options = (provider: IntegrationProviderConfig) =>
  loopback(provider.tokenUrl) ? { [oauth.allowInsecureRequests]: true } : {}

const clientOf = (provider: IntegrationProviderConfig): oauth.Client => ({ client_id: provider.clientId })
const authOf = (provider: IntegrationProviderConfig) =>
  provider.clientSecret ? oauth.ClientSecretPost(provider.clientSecret) : oauth.None()

/** A PKCE verifier and its S256 challenge. */
export async function pkcePair(): Promise<{ verifier: string; challenge: string }> {
  const verifier = oauth.generateRandomCodeVerifier()
  return { verifier, challenge: await oauth.calculatePKCECodeChallenge(verifier) }
}

/**
 * The provider's authorization page for this request. `extraParams` are the platform's own
 * (Google's `access_type=offline`); they cannot replace the parameters of the protocol.
 */
export function authorizationUrl(
  provider: IntegrationProviderConfig,
  input: {
    redirectUri: string
    state: string
    codeChallenge: string
    extraParams?: Readonly<Record<string, string>> | undefined
  },
): string {
  const url = new URL(provider.authorizeUrl)
  for (const [name, value] of Object.entries(input.extraParams ?? {})) url.searchParams.set(name, value)
  url.searchParams.set('response_type', 'code')
  url.searchParams.set('client_id', provider.clientId)
  url.searchParams.set('redirect_uri', input.redirectUri)
  if (provider.scopes.length > 0) url.searchParams.set('scope', provider.scopes.join(' '))
  url.searchParams.set('state', input.state)
  url.searchParams.set('code_challenge', input.codeChallenge)
  url.searchParams.set('code_challenge_method', 'S256')
  return url.href
}

function tokenSet(response: oauth.TokenEndpointResponse, previousRefresh?: string): TokenSet {
  return {
    accessToken: response.access_token,
    // A refresh answer without a new refresh token keeps the old one (RFC 6749, 6).
    refreshToken: response.refresh_token ?? previousRefresh,
    expiresAt: typeof response.expires_in === 'number' ? Date.now() + response.expires_in * 1000 : undefined,
    scope: typeof response.scope === 'string' ? response.scope : '',
  }
}

/**
 * The token endpoint answered an error outside RFC 6749's form (Meta's `{ error: { message, code,
 * error_subcode } }`, where `error` is an object), which oauth4webapi does not read: its status and
 * parsed body, for the platform's adapter to put in words (`AdsPlatform.tokenEndpointFailure`).
 */
export class TokenEndpointError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(`the token endpoint answered HTTP ${status} without an OAuth error`)
    this.name = 'TokenEndpointError'
  }
}

/** The most of an error answer read. */
const maxErrorBytes = 64 * 1024

async function grant<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (error) {
    if (error instanceof oauth.ResponseBodyError) {
      throw new OAuthGrantError(error.error, `the provider refused: ${error.error}`)
    }
    const response = errorResponse(error)
    if (response) throw new TokenEndpointError(response.status, await errorBody(response))
    throw error
  }
}

/** The error answer behind oauth4webapi's "not a conform response" and challenge errors. */
function errorResponse(error: unknown): Response | undefined {
  const response =
    error instanceof oauth.WWWAuthenticateChallengeError
      ? error.response
      : error instanceof oauth.OperationProcessingError
        ? error.cause
        : undefined
  return response instanceof Response && response.status >= 400 ? response : undefined
}

async function errorBody(response: Response): Promise<unknown> {
  try {
    const text = await response.text()
    return text.length > maxErrorBytes ? undefined : JSON.parse(text)
  } catch {
    return undefined
  }
}

/**
 * The callback's code for tokens: `callback` is the URL the provider sent the browser to (its
 * `state` was checked against the one issued before this is called).
 */
export async function exchangeCode(
  provider: IntegrationProviderConfig,
  input: { callback: URL; state: string; redirectUri: string; codeVerifier: string },
): Promise<TokenSet> {
  const as = server(provider)
  const client = clientOf(provider)
  return grant(async () => {
    const parameters = oauth.validateAuthResponse(as, client, input.callback, input.state)
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      authOf(provider),
      parameters,
      input.redirectUri,
      input.codeVerifier,
      options(provider),
    )
    return tokenSet(await oauth.processAuthorizationCodeResponse(as, client, response))
  })
}

/** New tokens for a refresh token; `OAuthGrantError` (`invalid_grant`) when it was revoked. */
export async function refreshTokens(
  provider: IntegrationProviderConfig,
  refreshToken: string,
): Promise<TokenSet> {
  const as = server(provider)
  const client = clientOf(provider)
  return grant(async () => {
    const response = await oauth.refreshTokenGrantRequest(
      as,
      client,
      authOf(provider),
      refreshToken,
      options(provider),
    )
    return tokenSet(await oauth.processRefreshTokenResponse(as, client, response), refreshToken)
  })
}
