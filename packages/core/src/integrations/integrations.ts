// Ad-platform integrations (docs/decisions.md, "Integrations"): connecting an organization to an ads
// platform with OAuth 2.0 (authorization code + PKCE), keeping its tokens sealed at rest and fresh,
// listing its ads accounts (or taking the id the organization enters, on a platform that lists
// none) and the one selected. The platform's own parts (authorization parameters, the tokens to
// keep, its accounts) come from its AdsPlatform adapter, chosen by the server. The `state` of an
// authorization is a random token kept 10 minutes in the coordination key-value store (Redis when
// set), bound to the organization and the type, and usable once.
import type { Config, IntegrationProviderConfig } from '../config.js'
import type { Coordination } from '../coordination/ports.js'
import { withLock } from '../coordination/with-lock.js'
import { appError } from '../errors.js'
import { randomToken, sha256Hex } from '../ids.js'
import { secretBox } from '../secret-box/secret-box.js'
import type { Store } from '../store/client.js'
import { type AdsConsent, type AdsPlatform, AdsPlatformError } from './ads-platform.js'
import { grantExpiresAt, integrationStatus } from './grant-expiry.js'
import {
  type IntegrationRow,
  type IntegrationType,
  integrationTypes,
  readIntegration,
  writeIntegration,
} from './integration-store.js'
import {
  authorizationUrl,
  exchangeCode,
  OAuthGrantError,
  pkcePair,
  refreshTokens,
  TokenEndpointError,
  type TokenSet,
} from './oauth.js'

export interface IntegrationDeps {
  store: Store
  coordination: Pick<Coordination, 'kv' | 'locks'>
  settings: Config['integrations']
  /** Where browsers reach this server: the OAuth callback and the installer links. */
  publicUrl: string
  /** The adapter of each configured type (the server builds them from `*_PLATFORM`). */
  platforms: Partial<Record<IntegrationType, AdsPlatform>>
}

const stateTtlMs = 10 * 60_000
const integratorTokenTtlMs = 15 * 60_000
/** A token this close to its expiry is refreshed before use. */
const refreshMarginMs = 60_000

/** The settings of a configured type, else 409 `integration_not_configured` saying how to configure it. */
export function providerOf(
  settings: Config['integrations'],
  type: IntegrationType,
): IntegrationProviderConfig {
  const provider = settings[type]
  if (!provider) {
    const prefix = type === 'searchAds' ? 'SEARCH_ADS' : 'SOCIAL_ADS'
    throw appError(
      'integration_not_configured',
      `${type} is not configured on this server: set ${prefix}_CLIENT_ID, ${prefix}_CLIENT_SECRET, ` +
        `${prefix}_AUTHORIZE_URL, ${prefix}_TOKEN_URL, ${prefix}_API_URL (and SECRET_KEY); see the README, "Integrations"`,
    )
  }
  return provider
}

/** The adapter of a configured type, else the same 409 as `providerOf`. */
export function platformOf(
  deps: Pick<IntegrationDeps, 'settings' | 'platforms'>,
  type: IntegrationType,
): AdsPlatform {
  providerOf(deps.settings, type)
  const platform = deps.platforms[type]
  if (!platform) throw new Error(`No AdsPlatform adapter was built for ${type}`)
  return platform
}

export const callbackPath = (type: IntegrationType) => `/integrations/callback/${type}`
const base = (deps: IntegrationDeps) => deps.publicUrl.replace(/\/+$/, '')
const sealContext = (organizationId: string, type: string) => `integration:${organizationId}:${type}`

function box(deps: IntegrationDeps) {
  if (!deps.settings.secretKey) throw new Error('SECRET_KEY is not set')
  return secretBox(deps.settings.secretKey)
}

// --- Installation --------------------------------------------------------------------------------

interface PendingAuthorization {
  organizationId: string
  type: IntegrationType
  verifier: string
}

/**
 * The provider's authorization page for the organization: PKCE S256, a fresh `state` bound to the
 * organization and type for 10 minutes, the callback of this server as redirect URI.
 */
export async function requestInstall(
  deps: IntegrationDeps,
  organizationId: string,
  type: IntegrationType,
): Promise<{ url: string }> {
  const provider = providerOf(deps.settings, type)
  const platform = platformOf(deps, type)
  const state = randomToken('', 24)
  const { verifier, challenge } = await pkcePair()
  const pending: PendingAuthorization = { organizationId, type, verifier }
  await deps.coordination.kv.set(`oauth:state:${sha256Hex(state)}`, JSON.stringify(pending), stateTtlMs)
  return {
    url: authorizationUrl(provider, {
      redirectUri: `${base(deps)}${callbackPath(type)}`,
      state,
      codeChallenge: challenge,
      extraParams: platform.authorizationParams,
    }),
  }
}

/**
 * The OAuth callback: the `state` must be one this server issued for this type (once, within 10
 * minutes), else 400 and nothing stored. The code is exchanged (with the PKCE verifier), the tokens
 * the platform keeps taken (`keepTokens`), the ads accounts listed, and the tokens stored sealed. A
 * lone account is selected; a selection that is still listed (or, on a platform that lists none,
 * still of the platform's form) is kept.
 */
export async function completeInstall(
  deps: IntegrationDeps,
  type: IntegrationType,
  callback: URL,
): Promise<IntegrationRow> {
  const platform = platformOf(deps, type)
  const state = callback.searchParams.get('state') ?? ''
  const key = `oauth:state:${sha256Hex(state)}`
  const stored = state ? await deps.coordination.kv.get(key) : undefined
  const pending = stored ? (JSON.parse(stored) as PendingAuthorization) : undefined
  if (!pending || pending.type !== type) {
    throw appError(
      'invalid_request',
      'This authorization is unknown or expired: start the installation again',
    )
  }
  await deps.coordination.kv.delete(key)
  const denied = callback.searchParams.get('error')
  if (denied) throw appError('invalid_request', `The provider did not authorize: ${denied.slice(0, 100)}`)
  const tokens = await exchangedTokens(deps, type, platform, { callback, state, pending })
  const accounts = await platform.listAccounts(tokens.accessToken)
  const earlier = await readIntegration(deps.store, pending.organizationId, type)
  const previous = earlier?.selected_account_id
  const kept = accounts
    ? accounts.find((a) => a.id === previous)?.id
    : previous && platform.isAccountId(previous)
      ? previous
      : undefined
  const row = sealedRow(deps, pending.organizationId, type, tokens, {
    ads_accounts: accounts ?? null,
    selected_account_id: kept ?? (accounts?.length === 1 ? accounts[0]!.id : ''),
    // A new authorization keeps what the organization chose.
    consent: earlier?.consent ?? null,
    connected_at: new Date().toISOString(),
  })
  await writeIntegration(deps.store, row)
  return row
}

/** The code for tokens, then the tokens the platform keeps; a refusal is a 400 in the provider's words. */
async function exchangedTokens(
  deps: IntegrationDeps,
  type: IntegrationType,
  platform: AdsPlatform,
  input: { callback: URL; state: string; pending: PendingAuthorization },
): Promise<TokenSet> {
  const provider = providerOf(deps.settings, type)
  try {
    const tokens = await exchangeCode(provider, {
      callback: input.callback,
      state: input.state,
      redirectUri: `${base(deps)}${callbackPath(type)}`,
      codeVerifier: input.pending.verifier,
    })
    return platform.keepTokens ? await platform.keepTokens(tokens) : tokens
  } catch (error) {
    const secrets = [input.callback.searchParams.get('code') ?? '', input.pending.verifier]
    throw appError(
      'invalid_request',
      refusalWords(platform, error, [...secrets, provider.clientSecret ?? '']),
    )
  }
}

/**
 * What the person reads when the provider refused: the adapter's words for a platform's own error
 * body (Meta's), or for a failure of its own step (`keepTokens`), in full; else the OAuth error.
 */
function refusalWords(platform: AdsPlatform, error: unknown, secrets: string[]): string {
  const read =
    error instanceof TokenEndpointError
      ? platform.tokenEndpointFailure?.(error.status, error.body, secrets.filter(Boolean))
      : error
  if (read instanceof AdsPlatformError) return read.message.slice(0, 600)
  return `The provider refused the code: ${(error as Error).message.slice(0, 200)}`
}

function sealedRow(
  deps: IntegrationDeps,
  organizationId: string,
  type: IntegrationType,
  tokens: TokenSet,
  rest: Pick<IntegrationRow, 'ads_accounts' | 'selected_account_id' | 'consent' | 'connected_at'>,
): IntegrationRow {
  const sealer = box(deps)
  const context = sealContext(organizationId, type)
  return {
    organization_id: organizationId,
    type,
    status: 'connected',
    access_token: sealer.seal(tokens.accessToken, context),
    refresh_token: tokens.refreshToken ? sealer.seal(tokens.refreshToken, context) : '',
    expires_at: tokens.expiresAt ? new Date(tokens.expiresAt).toISOString() : null,
    scope: tokens.scope,
    ...rest,
    updated_at: new Date().toISOString(),
  }
}

/**
 * A short-lived installer token: an installer page (no API key) sends the browser to
 * `installUrl`, which starts the authorization for this organization. Single use, 15 minutes; only
 * its SHA-256 is kept.
 */
export async function integratorToken(
  deps: IntegrationDeps,
  organizationId: string,
  type: IntegrationType,
): Promise<{ token: string; expiresAt: string; installUrl: string }> {
  providerOf(deps.settings, type)
  const token = randomToken('vit_', 24)
  await deps.coordination.kv.set(
    `integrator:${sha256Hex(token)}`,
    JSON.stringify({ organizationId, type }),
    integratorTokenTtlMs,
  )
  return {
    token,
    expiresAt: new Date(Date.now() + integratorTokenTtlMs).toISOString(),
    installUrl: `${base(deps)}/integrations/install/${type}?token=${token}`,
  }
}

/** The installer link: the authorization page of its organization, or undefined for a bad token. */
export async function redeemIntegratorToken(
  deps: IntegrationDeps,
  type: IntegrationType,
  token: string,
): Promise<{ url: string } | undefined> {
  const key = `integrator:${sha256Hex(token)}`
  const stored = token ? await deps.coordination.kv.get(key) : undefined
  const bound = stored ? (JSON.parse(stored) as { organizationId: string; type: IntegrationType }) : undefined
  if (!bound || bound.type !== type) return undefined
  await deps.coordination.kv.delete(key)
  return requestInstall(deps, bound.organizationId, type)
}

// --- Use -----------------------------------------------------------------------------------------

/** 409 unless the organization's integration of this type is connected. */
export async function connectedIntegration(
  deps: IntegrationDeps,
  organizationId: string,
  type: IntegrationType,
): Promise<IntegrationRow> {
  const row = await readIntegration(deps.store, organizationId, type)
  if (!row) throw appError('integration_not_connected', `${type} is not connected: install it first`)
  return row
}

/**
 * Selects the ads account audiences go to: one of the listed accounts (400 `unknown_ads_account`
 * for another) or, on a platform that lists none, an id of the platform's form, kept as entered.
 */
export async function selectAdsAccount(
  deps: IntegrationDeps,
  organizationId: string,
  type: IntegrationType,
  accountId: string,
  consent?: AdsConsent,
): Promise<IntegrationRow> {
  const row = await connectedIntegration(deps, organizationId, type)
  const shown = JSON.stringify(accountId.slice(0, 100))
  if (row.ads_accounts === null) {
    if (!platformOf(deps, type).isAccountId(accountId)) {
      throw appError('unknown_ads_account', `${shown} is not an account id of the ${type} platform`)
    }
  } else if (!row.ads_accounts.some((account) => account.id === accountId)) {
    throw appError('unknown_ads_account', `The ${type} integration lists no ads account ${shown}`)
  }
  const selected = {
    ...row,
    selected_account_id: accountId,
    // Unset: the consent chosen before (or the server's default) stays.
    consent: consent ? { ...row.consent, ...consent } : row.consent,
    updated_at: new Date().toISOString(),
  }
  await writeIntegration(deps.store, selected)
  return selected
}

/** Disconnects: the row and its sealed tokens are deleted. */
export async function disconnectIntegration(
  deps: IntegrationDeps,
  organizationId: string,
  type: IntegrationType,
): Promise<void> {
  const row = await connectedIntegration(deps, organizationId, type)
  await writeIntegration(deps.store, row, true)
}

/**
 * A usable access token: refreshed first when it expires within a minute (or `force`, after the
 * ads API refused it), under a lock so concurrent users refresh once. A refresh token the provider
 * refuses marks the integration `reauthorization_required` (its flows fail, saying so, until it is
 * installed again).
 */
export async function accessToken(
  deps: IntegrationDeps,
  organizationId: string,
  type: IntegrationType,
  force = false,
): Promise<string> {
  const context = sealContext(organizationId, type)
  const usable = (row: IntegrationRow) =>
    !force && (row.expires_at === null || Date.parse(row.expires_at) - Date.now() > refreshMarginMs)
  const row = await connectedIntegration(deps, organizationId, type)
  if (row.status === 'reauthorization_required') throw reauthorize(type)
  if (usable(row)) return box(deps).open(row.access_token, context)
  const lockName = `integration:${organizationId}:${type}`
  return withLock(deps.coordination.locks, lockName, { leaseMs: 60_000, waitMs: 30_000 }, async () => {
    const fresh = await connectedIntegration(deps, organizationId, type)
    if (fresh.status === 'reauthorization_required') throw reauthorize(type)
    // Another process refreshed it while this one waited.
    if (fresh.updated_at !== row.updated_at && (usable(fresh) || force)) {
      return box(deps).open(fresh.access_token, context)
    }
    const refused = async () => {
      await writeIntegration(deps.store, needsReauthorization(fresh))
      return reauthorize(type)
    }
    if (!fresh.refresh_token) throw await refused()
    let tokens: TokenSet
    try {
      tokens = await refreshTokens(
        providerOf(deps.settings, type),
        box(deps).open(fresh.refresh_token, context),
      )
    } catch (error) {
      throw error instanceof OAuthGrantError ? await refused() : error
    }
    const { ads_accounts, selected_account_id, consent, connected_at } = fresh
    const kept = { ads_accounts, selected_account_id, consent, connected_at }
    await writeIntegration(deps.store, sealedRow(deps, organizationId, type, tokens, kept))
    return tokens.accessToken
  })
}

const needsReauthorization = (row: IntegrationRow): IntegrationRow => ({
  ...row,
  status: 'reauthorization_required',
  updated_at: new Date().toISOString(),
})

/**
 * The platform refused a fresh token too (a grant revoked on its side): the integration shows
 * `reauthorization_required` until it is installed again. Returns the error to throw.
 */
export async function requireReauthorization(
  deps: IntegrationDeps,
  organizationId: string,
  type: IntegrationType,
): Promise<ReauthorizationRequiredError> {
  const row = await readIntegration(deps.store, organizationId, type)
  if (row && row.status !== 'reauthorization_required') {
    await writeIntegration(deps.store, needsReauthorization(row))
  }
  return reauthorize(type)
}

/** The provider refused the stored authorization; the integration shows `reauthorization_required`. */
export class ReauthorizationRequiredError extends Error {
  constructor(type: IntegrationType) {
    super(`The ${type} provider refused the stored authorization: install the integration again`)
    this.name = 'ReauthorizationRequiredError'
  }
}

const reauthorize = (type: IntegrationType) => new ReauthorizationRequiredError(type)

/** The type's name as organizations see it: the configured one (`*_NAME`), else a plain one. */
export const integrationName = (settings: Config['integrations'], type: IntegrationType): string =>
  settings[type]?.name ?? (type === 'searchAds' ? 'Search ads' : 'Social ads')

/**
 * What `GET /integrations/{organizationId}` shows of each type at `now` (ms since the epoch):
 * `status` and `expiresAt` as grant-expiry.ts reads the stored grant.
 */
export function presentIntegrations(
  settings: Config['integrations'],
  rows: Map<IntegrationType, IntegrationRow>,
  now: number = Date.now(),
) {
  return integrationTypes.map((type) => {
    const row = rows.get(type)
    const id = row?.selected_account_id
    const listed = row?.ads_accounts
    // An entered id has no name of the platform's: it is shown as its name.
    const selected = !id ? null : listed ? (listed.find((a) => a.id === id) ?? null) : { id, name: id }
    return {
      type,
      name: integrationName(settings, type),
      configured: settings[type] !== undefined,
      installed: row !== undefined,
      status: row ? integrationStatus(row, now) : ('not_installed' as const),
      expiresAt: row ? grantExpiresAt(row) : null,
      adsAccounts: row?.ads_accounts ?? [],
      accountIdEntry: row?.ads_accounts === null,
      selectedAdsAccount: selected,
      consent: row?.consent ?? null,
      connectedAt: row?.connected_at ?? null,
    }
  })
}
