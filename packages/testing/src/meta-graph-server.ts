// A local stand-in for Meta's Graph API (graph.facebook.com and the www.facebook.com login dialog),
// for tests of the Meta Custom Audiences adapter: exactly the endpoints it calls, at the pinned
// version only (another version answers Meta's 2500 "Unknown path components"):
//   GET  /{v}/dialog/oauth                  the person grants (or declines): redirect with code and state
//   GET|POST /{v}/oauth/access_token        code -> short-lived token; fb_exchange_token -> long-lived
//   GET  /{v}/me/adaccounts                 fields id,name,account_id; cursor paging
//   POST /{v}/act_{id}/customaudiences      subtype=CUSTOM, customer_file_source
//   POST|DELETE /{v}/{audience_id}/users    payload {schema, data}, session {session_id, batch_seq, ...}
// Every call but the token exchange needs a valid `access_token` and its `appsecret_proof` (Meta's
// 190 for a bad, expired or revoked token; 100 for a missing or wrong proof). It keeps state (tokens,
// audiences and members, upload sessions), can be told to fail the next calls with any Meta error
// (rate limits 4/17/341/613/80003, 190, 200, 2650...), and records every request.
//
// The parts live in ./meta-graph-server/: the state, the error bodies, the HTTP side and its
// routes, one module per concern (login and tokens, ad accounts, audience members).
import type { AddressInfo } from 'node:net'
import { metaGraphVersion } from '@visitor-id/core/integrations'
import { closeLocal } from './local-http.js'
import { listenMetaGraphServer } from './meta-graph-server/http.js'
import {
  type AdAccountRecord,
  createMetaGraphState,
  type InjectedFailure,
  issueCode,
  issueToken,
  type MetaGraphState,
} from './meta-graph-server/state.js'

export type { InjectedFailure, MetaGraphRequest, UploadSession } from './meta-graph-server/state.js'
export { maxRecordsPerRequest } from './meta-graph-server/users.js'

export interface MetaGraphServerOptions {
  appId?: string
  appSecret?: string
  /** The version the server serves; the adapter's pinned one by default. */
  version?: string
  /** The user's ad accounts (digits, name); two by default, terms accepted unless said. */
  accounts?: Array<{ accountId: string; name: string; termsAccepted?: boolean }>
  /** Lifetime of a token from the code exchange. Default 2 hours, as Meta's web login tokens. */
  shortLivedSeconds?: number
  /** Lifetime of a long-lived token. Default 5,183,944 s (about 60 days), as Meta answers. */
  longLivedSeconds?: number
}

/**
 * Starts the server on 127.0.0.1 and a free port.
 *
 * @example
 * const meta = await startMetaGraphServer()
 * const platform = createMetaAdsPlatform({ graphUrl: meta.url, appId: meta.appId, appSecret: meta.appSecret })
 * const token = meta.issueToken()
 * const id = await platform.createAudience(token, 'act_1000000001', 'Visitors')
 * meta.failNext(1, { code: 17 })
 */
export async function startMetaGraphServer(options: MetaGraphServerOptions = {}) {
  const state = createMetaGraphState({
    appId: options.appId ?? '1234567890123456',
    appSecret: options.appSecret ?? 'fake-meta-app-secret-0123456789abcdef',
    version: options.version ?? metaGraphVersion,
    accounts: (options.accounts ?? defaultAccounts).map(
      (a): AdAccountRecord => ({ ...a, termsAccepted: a.termsAccepted ?? true }),
    ),
    shortLivedSeconds: options.shortLivedSeconds ?? 7200,
    longLivedSeconds: options.longLivedSeconds ?? 5_183_944,
  })
  const server = await listenMetaGraphServer(state)
  const { port } = server.address() as AddressInfo
  return {
    /** Origin of the Graph API and of the login dialog: `http://127.0.0.1:<port>`. */
    url: `http://127.0.0.1:${port}`,
    appId: state.appId,
    appSecret: state.appSecret,
    version: state.version,
    requests: state.requests,
    ...metaSide(state),
    close: () => closeLocal(server),
  }
}

export type MetaGraphServer = Awaited<ReturnType<typeof startMetaGraphServer>>

const defaultAccounts: NonNullable<MetaGraphServerOptions['accounts']> = [
  { accountId: '1000000001', name: 'Acme Ads' },
  { accountId: '1000000002', name: 'Acme Retargeting' },
]

/** The helpers that play Meta's side, for tests, over the server's state. */
function metaSide(state: MetaGraphState) {
  return {
    /** A user token, as if the person had logged in: long-lived and with `ads_management` by default. */
    issueToken: (input: { kind?: 'short' | 'long'; scopes?: string[]; expiresInSeconds?: number } = {}) =>
      issueToken(state, input.kind ?? 'long', input.scopes ?? ['ads_management'], input.expiresInSeconds),
    /** An authorization code, as the login dialog would redirect with. */
    issueCode: (input: { redirectUri: string; scopes?: string[]; codeChallenge?: string }) =>
      issueCode(state, { ...input, scopes: input.scopes ?? ['ads_management'] }),
    /** The person removes the app: the token answers 190/458 from now on. */
    revokeToken: (token: string) => {
      const record = state.tokens.get(token)
      if (record) record.revoked = true
    },
    /** Moves the server's clock: tokens and codes expire as time passes. */
    advanceClock: (ms: number) => {
      state.clockOffsetMs += ms
    },
    /** The lifetime of the long-lived tokens traded from now on (a grant near its end, a fresh one). */
    setLongLivedSeconds: (seconds: number) => {
      state.longLivedSeconds = seconds
    },
    /** When the token expires, in milliseconds since the epoch (server clock). */
    tokenExpiresAt: (token: string) => state.tokens.get(token)?.expiresAt,
    /** The next `count` requests (matching `failure.path` when given) answer this Meta error. */
    failNext: (count: number, failure: InjectedFailure) => {
      for (let i = 0; i < count; i++) state.failures.push(failure)
    },
    /** The next `count` requests wait `ms` before they are served. */
    delayNext: (count: number, ms: number) => {
      for (let i = 0; i < count; i++) state.delays.push(ms)
    },
    /** The person declines on the next visit of the login dialog. */
    declineNextLogin: () => {
      state.dialogAnswers.push('deny')
    },
    setTermsAccepted: (accountId: string, accepted: boolean) => {
      const account = state.accounts.find((a) => a.accountId === accountId)
      if (!account) throw new Error(`no ad account ${accountId} on the fake Graph API`)
      account.termsAccepted = accepted
    },
    audience: (id: string) => state.audiences.get(id),
    /** The audience's members (hashes), sorted. */
    members: (audienceId: string) => [...(state.audiences.get(audienceId)?.members ?? [])].sort(),
    /** The upload sessions, in the order they began. */
    sessions: () => [...state.sessions.values()],
  }
}
