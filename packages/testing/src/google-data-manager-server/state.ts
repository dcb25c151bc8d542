// What the fake Data Manager API keeps between requests: the access tokens it takes, the Google Ads
// accounts they may use and each account's user lists with their members, the status of every
// ingest and remove request, the failures it was told to answer next, and every request received.
import { randomUUID } from 'node:crypto'
import type { GoogleServerError } from './errors.js'

/** A request the server received. */
export interface GoogleServerRequest {
  method: string
  path: string
  query: Record<string, string>
  /** The `Authorization` header as sent. */
  authorization: string | undefined
  contentType: string | undefined
  /** The parsed JSON body; undefined without one. */
  body: unknown
  /** The HTTP status it was answered with. */
  status: number
}

export interface UserListState {
  id: string
  /** The UserList as Google answers it (without its members). */
  resource: Record<string, unknown>
  /** SHA-256 hex of the members' emails, lowercase. */
  members: Set<string>
}

export type RequestStatusName =
  | 'PROCESSING'
  | 'SUCCESS'
  | 'PARTIAL_SUCCESS'
  | 'FAILED'
  | 'REQUEST_STATUS_UNKNOWN'

export interface RequestStatusState {
  requestId: string
  action: 'ingest' | 'remove'
  destination: Record<string, unknown>
  recordCount: number
  userIdentifierCount: number
  requestStatus: RequestStatusName
  /** What processing ends in (the status while not held). */
  processedStatus: RequestStatusName
  errorCounts: { reason: string; recordCount: number }[]
  /** `MATCH_RATE_RANGE_*` of an ingestion, when set. */
  matchRateRange?: string
}

export interface GoogleState {
  /** Access token -> whether it is still good, or why not. */
  tokens: Map<string, 'valid' | 'expired' | 'revoked'>
  /** Customer id -> its user lists by id. */
  accounts: Map<string, Map<string, UserListState>>
  statuses: Map<string, RequestStatusState>
  /** Answered, in order, instead of the next requests that pass authentication. */
  /** Answered in order, one a request; `undefined` serves that request normally. */
  failures: (GoogleServerError | undefined)[]
  /** Whether new requests stay PROCESSING until a test settles them. */
  holdRequests: boolean
  requests: GoogleServerRequest[]
  nextListId: number
}

export function createGoogleState(tokens: readonly string[], accounts: readonly string[]): GoogleState {
  return {
    tokens: new Map(tokens.map((t) => [t, 'valid'])),
    accounts: new Map(accounts.map((a) => [a, new Map()])),
    statuses: new Map(),
    failures: [],
    holdRequests: false,
    requests: [],
    nextListId: 9_100_000_001,
  }
}

/** A request id shaped like Google's (a UUID). */
export const newRequestId = () => randomUUID()
