// socialAds on Meta: Custom Audiences from a customer file, through the Graph API (Marketing API).
//   OAuth       dialog https://www.facebook.com/{version}/dialog/oauth (scope ads_management), code
//               exchange GET|POST {graph}/{version}/oauth/access_token, then the short-lived token
//               traded for a long-lived one (grant_type=fb_exchange_token, about 60 days, no
//               refresh token: the organization reconnects before it expires); both answer
//               refusals in the Graph API's error shape, read by `metaLoginFailure`
//   accounts    GET    /me/adaccounts?fields=id,name,account_id        (cursor paging)
//   audience    POST   /act_{id}/customaudiences  name, subtype=CUSTOM, customer_file_source=USER_PROVIDED_ONLY
//   members     POST   /{audience_id}/users       payload={schema:EMAIL_SHA256,data:[hash,...]}, session={...}
//   removals    DELETE /{audience_id}/users       the same parameters
// at most 10,000 records a request; every call with `access_token` and `appsecret_proof`.
//
// Plain requests, not the official facebook-nodejs-business-sdk: its base URL is a static getter
// (`FacebookAdsApi.GRAPH`, so tests could point it at a local server only by patching the class),
// it puts the token in the query string of every call, POSTs included, has no `appsecret_proof` in
// its ads client, no timeout, answer cap or redirect control (axios defaults), keeps a process-wide
// default API object and turns on a crash reporter that sends reports to Meta by default. It is
// also about a thousand generated files under Meta's own Platform License (use with Meta's services
// only) for five endpoints that are plain form posts. Its session parameters would have fitted: it
// passes any parameter through.

import { sha256Hex } from '../ids.js'
import type { AdsAccount } from './ads-api.js'
import {
  type AdsPlatform,
  AdsPlatformError,
  type AudienceTarget,
  type BatchOutcome,
  type BatchPosition,
} from './ads-platform.js'
import { reconnectMarginMs } from './grant-expiry.js'
import { metaLoginFailure } from './meta-errors.js'
import { type GraphContext, graphRequest } from './meta-graph.js'
import type { TokenSet } from './oauth.js'
import { metaDialogUrl, metaGraphUrl, metaGraphVersion, metaScopes } from './platform-endpoints.js'

export { metaDialogUrl, metaGraphUrl, metaGraphVersion, metaScopes } from './platform-endpoints.js'

/** Meta takes at most 10,000 records in one request to `/{audience_id}/users`. */
export const metaMaxBatch = 10_000
/** How long before a long-lived token expires the integration asks to be reconnected (grant-expiry.ts). */
export const metaReconnectMarginMs = reconnectMarginMs
/** Meta's long-lived user tokens last about 60 days: assumed when its answer has no `expires_in`. */
const longLivedMs = 60 * 24 * 3600_000
/** Ad accounts read at most (100 a page): a person with more enters the account id. */
const maxAccountPages = 20

export interface MetaAdsPlatformOptions {
  /** The Meta app's id (digits). */
  appId: string
  /** The Meta app's secret: the long-lived token exchange and every call's `appsecret_proof`. */
  appSecret: string
  /** Origin of the Graph API; a local server in tests. Default `https://graph.facebook.com`. */
  graphUrl?: string
  /** The pinned Graph API version, `vNN.N`. Default `metaGraphVersion`. */
  version?: string
  /** The description every new audience gets. */
  audienceDescription?: string
  /** Per request. Default 30 s. */
  timeoutMs?: number
  /** The most of an answer that is read. Default 1 MB. */
  maxAnswerBytes?: number
  fetch?: typeof fetch
  /** The clock that dates a token's expiry. */
  now?: () => number
}

/**
 * A batch's position, with the sync's total when the sync knows it: sent to Meta as the session's
 * `estimated_num_total` (optional in Meta's session; it helps Meta plan the processing).
 */
export interface MetaBatchPosition extends BatchPosition {
  total?: number
}

/** The OAuth endpoints and scope of a Meta app, for the integration's provider settings. */
export function metaOAuthEndpoints(
  options: { graphUrl?: string; dialogUrl?: string; version?: string } = {},
) {
  const version = checkedVersion(options.version)
  return {
    authorizeUrl: `${origin(options.dialogUrl ?? metaDialogUrl, 'dialogUrl')}/${version}/dialog/oauth`,
    tokenUrl: `${origin(options.graphUrl ?? metaGraphUrl, 'graphUrl')}/${version}/oauth/access_token`,
    scopes: [...metaScopes],
  }
}

/**
 * Whether a Meta token is close enough to its expiry (or past it) that the integration should ask
 * to be reconnected: Meta issues no refresh token, a new authorization is the only renewal.
 */
export function metaTokenNeedsReconnect(
  expiresAt: number | undefined,
  now: number = Date.now(),
  marginMs: number = metaReconnectMarginMs,
): boolean {
  return expiresAt !== undefined && expiresAt - now <= marginMs
}

/**
 * An email as Meta's EMAIL_SHA256 takes it: trimmed, lowercased, then SHA-256 as lowercase hex
 * (Meta's "Normalize and hash customer information"). The same as the project's own
 * `email_sha256`, so stored hashes go to Meta as they are.
 * @example metaEmailHash(' Jane.Doe@Example.COM ') === metaEmailHash('jane.doe@example.com')
 */
export function metaEmailHash(email: string): string {
  const normalized = email.trim().toLowerCase()
  if (!normalized) throw new TypeError('an empty email has no Meta hash')
  return sha256Hex(normalized)
}

/**
 * The upload session id of one sync's additions or removals: Meta wants a 64-bit integer chosen by
 * the advertiser. Derived from the sync id, so a resumed sync (after a rate limit or a restart)
 * continues its session; kept below 2^53 so it is exact as a JSON number in every reader.
 */
export function metaSessionId(syncId: string, operation: 'add' | 'remove'): number {
  const digest = sha256Hex(`meta-upload-session:${operation}:${syncId}`)
  return Number(BigInt(`0x${digest.slice(0, 16)}`) % BigInt(Number.MAX_SAFE_INTEGER)) + 1
}

/**
 * The Meta adapter. Ad account ids are kept as Meta's node ids, `act_<digits>` (what every ad
 * account path takes); a bare number a person types is accepted and prefixed.
 */
export function createMetaAdsPlatform(options: MetaAdsPlatformOptions): AdsPlatform {
  if (!/^\d{1,32}$/.test(options.appId)) throw new TypeError('the Meta app id is its number (digits only)')
  if (!options.appSecret) throw new TypeError('the Meta app secret is required')
  const context: GraphContext = {
    graphUrl: origin(options.graphUrl ?? metaGraphUrl, 'graphUrl'),
    version: checkedVersion(options.version),
    appSecret: options.appSecret,
    timeoutMs: options.timeoutMs ?? 30_000,
    maxAnswerBytes: options.maxAnswerBytes ?? 1024 * 1024,
    fetch: options.fetch ?? fetch,
  }
  const now = options.now ?? Date.now
  const description =
    options.audienceDescription ?? 'People from a list, kept in sync by visitor identification'
  return {
    name: 'meta',
    maxBatch: metaMaxBatch,
    // Asks again for a permission the person declined before, instead of connecting without it.
    authorizationParams: { auth_type: 'rerequest' },
    keepTokens: (tokens) => longLivedTokens(context, options, tokens, now),
    // Meta's token endpoint answers the code exchange's refusals in the Graph API's error shape.
    tokenEndpointFailure: (status, body, secrets) =>
      metaLoginFailure('code', status, body, [options.appSecret, ...secrets]),
    listAccounts: (token) => listAdAccounts(context, token),
    isAccountId: (id) => /^(act_)?\d{1,20}$/.test(id),
    async createAudience(token, accountId, name) {
      if (!/^(act_)?\d{1,20}$/.test(accountId)) throw invalid(`"${accountId}" is not a Meta ad account id`)
      if (!name.trim()) throw invalid('an audience needs a name')
      const answer = await graphRequest<{ id?: unknown }>(context, {
        method: 'POST',
        path: `/${adAccountNode(accountId)}/customaudiences`,
        token,
        params: { name, subtype: 'CUSTOM', customer_file_source: 'USER_PROVIDED_ONLY', description },
      })
      if (typeof answer.id !== 'string' && typeof answer.id !== 'number') {
        throw new AdsPlatformError('report', 'Meta gave the new audience no id')
      }
      return String(answer.id)
    },
    addMembers: (token, target, hashes, position) => upload(context, 'POST', token, target, hashes, position),
    removeMembers: (token, target, hashes, position) =>
      upload(context, 'DELETE', token, target, hashes, position),
  }
}

/** Trades the short-lived token of the code exchange for a long-lived one. */
async function longLivedTokens(
  context: GraphContext,
  options: MetaAdsPlatformOptions,
  tokens: TokenSet,
  now: () => number,
): Promise<TokenSet> {
  const answer = await graphRequest<{ access_token?: unknown; expires_in?: unknown }>(context, {
    method: 'GET',
    path: '/oauth/access_token',
    params: {
      grant_type: 'fb_exchange_token',
      client_id: options.appId,
      client_secret: options.appSecret,
      fb_exchange_token: tokens.accessToken,
    },
    secrets: [tokens.accessToken],
    failure: (status, body, headers, secrets) => metaLoginFailure('trade', status, body, secrets, headers),
  })
  if (typeof answer.access_token !== 'string' || !answer.access_token) {
    throw new AdsPlatformError('report', 'Meta answered the long-lived token exchange without a token')
  }
  const expiresIn = Number(answer.expires_in)
  return {
    accessToken: answer.access_token,
    refreshToken: undefined,
    expiresAt: now() + (expiresIn > 0 ? expiresIn * 1000 : longLivedMs),
    scope: tokens.scope,
  }
}

interface AccountsPage {
  data?: unknown
  paging?: { next?: unknown; cursors?: { after?: unknown } }
}

async function listAdAccounts(context: GraphContext, token: string): Promise<AdsAccount[]> {
  const accounts: AdsAccount[] = []
  let after: string | undefined
  for (let page = 0; page < maxAccountPages; page++) {
    const answer = await graphRequest<AccountsPage>(context, {
      method: 'GET',
      path: '/me/adaccounts',
      token,
      params: { fields: 'id,name,account_id', limit: '100', ...(after ? { after } : {}) },
    })
    for (const entry of Array.isArray(answer.data) ? answer.data : []) {
      const account = adsAccount(entry)
      if (account) accounts.push(account)
    }
    // Cursors rather than `paging.next`: that URL carries the token in its query, and its origin is Meta's to choose.
    const cursor = answer.paging?.cursors?.after
    if (!answer.paging?.next || typeof cursor !== 'string' || !cursor) break
    after = cursor
  }
  return accounts
}

function adsAccount(entry: unknown): AdsAccount | undefined {
  if (typeof entry !== 'object' || entry === null) return undefined
  const { id, account_id: accountId, name } = entry as { id?: unknown; account_id?: unknown; name?: unknown }
  const digits = typeof accountId === 'string' && /^\d+$/.test(accountId) ? accountId : undefined
  const node = digits ? `act_${digits}` : typeof id === 'string' && /^act_\d+$/.test(id) ? id : undefined
  if (!node) return undefined
  return { id: node, name: typeof name === 'string' && name ? name : node }
}

interface UsersAnswer {
  num_received?: unknown
  num_invalid_entries?: unknown
}

async function upload(
  context: GraphContext,
  method: 'POST' | 'DELETE',
  token: string,
  target: AudienceTarget,
  hashes: readonly string[],
  position: MetaBatchPosition,
): Promise<BatchOutcome> {
  if (!/^\d{1,32}$/.test(target.audienceId)) throw invalid(`"${target.audienceId}" is not a Meta audience id`)
  const data = checkedHashes(hashes)
  if (!Number.isInteger(position.sequence) || position.sequence < 1) {
    throw invalid('a batch sequence starts at 1')
  }
  const session = {
    session_id: metaSessionId(position.syncId, method === 'POST' ? 'add' : 'remove'),
    batch_seq: position.sequence,
    last_batch_flag: position.last,
    ...(position.total !== undefined && position.total > 0 ? { estimated_num_total: position.total } : {}),
  }
  const answer = await graphRequest<UsersAnswer>(context, {
    method,
    path: `/${target.audienceId}/users`,
    token,
    params: { payload: JSON.stringify({ schema: 'EMAIL_SHA256', data }), session: JSON.stringify(session) },
  })
  return {
    sent: data.length,
    received: count(answer.num_received),
    invalid: count(answer.num_invalid_entries),
  }
}

/** The batch as Meta's single-key schema takes it: a list of lowercase hex SHA-256 strings. */
function checkedHashes(hashes: readonly string[]): string[] {
  if (hashes.length === 0) throw invalid('a batch needs at least one member')
  if (hashes.length > metaMaxBatch) throw invalid(`Meta takes at most ${metaMaxBatch} members a request`)
  return hashes.map((hash, index) => {
    if (!/^[0-9a-f]{64}$/i.test(hash)) throw invalid(`member ${index} is not a SHA-256 hex digest`)
    return hash.toLowerCase()
  })
}

const count = (value: unknown) =>
  typeof value === 'number' || typeof value === 'string' ? Number(value) : undefined

const invalid = (message: string) => new AdsPlatformError('report', message)

const adAccountNode = (id: string) => (id.startsWith('act_') ? id : `act_${id}`)

function checkedVersion(version: string | undefined): string {
  const value = version ?? metaGraphVersion
  if (!/^v\d+\.\d+$/.test(value))
    throw new TypeError(`the Graph API version is vNN.N (e.g. ${metaGraphVersion})`)
  return value
}

/** An origin without a trailing slash; plain http only for a loopback address (a local test server). */
function origin(url: string, name: string): string {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new TypeError(`${name} is not a URL`)
  }
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(parsed.hostname)
  if (parsed.protocol !== 'https:' && !(parsed.protocol === 'http:' && loopback)) {
    throw new TypeError(`${name} must be https (plain http only on a loopback address)`)
  }
  return url.replace(/\/+$/, '')
}
