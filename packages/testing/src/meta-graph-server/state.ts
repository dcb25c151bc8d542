// What the fake Graph API keeps between requests: the app, the codes and tokens it issued, the ad
// accounts of its one user, the audiences with their members, the upload sessions, the failures
// it was told to answer next, and every request it received.
import { randomBytes } from 'node:crypto'

/** A request as the Graph API reads it: query and body (form or JSON) merged into `params`. */
export interface MetaGraphRequest {
  method: string
  /** The whole path, version included: `/v26.0/me/adaccounts`. */
  path: string
  query: Record<string, string>
  body: Record<string, string>
  params: Record<string, string>
  contentType: string | undefined
}

export interface CodeRecord {
  redirectUri: string
  scopes: string[]
  codeChallenge: string | undefined
  issuedAt: number
  used: boolean
}

export interface TokenRecord {
  kind: 'short' | 'long'
  expiresAt: number
  scopes: string[]
  revoked: boolean
}

export interface AdAccountRecord {
  /** The digits; the node id is `act_<digits>`. */
  accountId: string
  name: string
  /** Whether the account accepted the Custom Audience terms (else creating or filling an audience fails with 2663). */
  termsAccepted: boolean
}

export interface AudienceRecord {
  id: string
  accountId: string
  name: string
  description: string | undefined
  subtype: string
  customerFileSource: string
  members: Set<string>
}

export interface UploadSession {
  audienceId: string
  operation: 'add' | 'remove'
  sessionId: number
  /** Each batch's `batch_seq`, in the order the batches came (a replayed batch appears twice). */
  batches: number[]
  ended: boolean
  estimatedTotal: number | undefined
  received: number
  invalid: number
}

/** An error the server answers instead of serving a request (`failNext`). */
export interface InjectedFailure {
  code: number
  subcode?: number
  message?: string
  type?: string
  status?: number
  isTransient?: boolean
  userTitle?: string
  userMessage?: string
  /** Answer headers, e.g. `x-business-use-case-usage`. */
  headers?: Record<string, string>
  /** Only requests whose path (after the version) matches; every request by default. */
  path?: RegExp
  /** Matching requests served normally before this one fails (0 by default). */
  after?: number
}

export interface MetaGraphState {
  appId: string
  appSecret: string
  version: string
  shortLivedSeconds: number
  longLivedSeconds: number
  /** Added to the wall clock: tests move time forward to expire tokens. */
  clockOffsetMs: number
  /** What the next visit of the login dialog does. */
  dialogAnswers: Array<'grant' | 'deny'>
  codes: Map<string, CodeRecord>
  tokens: Map<string, TokenRecord>
  accounts: AdAccountRecord[]
  audiences: Map<string, AudienceRecord>
  sessions: Map<string, UploadSession>
  failures: InjectedFailure[]
  /** Milliseconds each of the next requests waits before it is served. */
  delays: number[]
  requests: MetaGraphRequest[]
}

export interface MetaGraphStateOptions {
  appId: string
  appSecret: string
  version: string
  accounts: AdAccountRecord[]
  shortLivedSeconds: number
  longLivedSeconds: number
}

export function createMetaGraphState(options: MetaGraphStateOptions): MetaGraphState {
  return {
    ...options,
    accounts: options.accounts.map((account) => ({ ...account })),
    clockOffsetMs: 0,
    dialogAnswers: [],
    codes: new Map(),
    tokens: new Map(),
    audiences: new Map(),
    sessions: new Map(),
    failures: [],
    delays: [],
    requests: [],
  }
}

export const nowOf = (state: MetaGraphState) => Date.now() + state.clockOffsetMs

/** A user access token as Meta's look: `EAA` and a long opaque tail. */
export function issueToken(
  state: MetaGraphState,
  kind: 'short' | 'long',
  scopes: string[],
  expiresInSeconds = kind === 'short' ? state.shortLivedSeconds : state.longLivedSeconds,
): string {
  const token = `EAA${randomBytes(48).toString('base64url')}`
  state.tokens.set(token, { kind, scopes, revoked: false, expiresAt: nowOf(state) + expiresInSeconds * 1000 })
  return token
}

/** An opaque authorization code, valid ten minutes. */
export function issueCode(
  state: MetaGraphState,
  input: { redirectUri: string; scopes: string[]; codeChallenge?: string },
): string {
  const code = `AQ${randomBytes(96).toString('base64url')}`
  state.codes.set(code, {
    redirectUri: input.redirectUri,
    scopes: input.scopes,
    codeChallenge: input.codeChallenge,
    issuedAt: nowOf(state),
    used: false,
  })
  return code
}

/** A Graph object id: a long decimal number, as Meta's are. */
export const newObjectId = () =>
  `238${BigInt(`0x${randomBytes(6).toString('hex')}`)
    .toString()
    .padStart(14, '0')}`

export const newTraceId = () => randomBytes(8).toString('base64url')
