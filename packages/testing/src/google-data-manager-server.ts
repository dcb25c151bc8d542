// A local stand-in for Google's Data Manager API (datamanager.googleapis.com/v1), for tests of the
// searchAds adapter: exactly the endpoints it calls (CreateUserList, ListUserLists with its paging
// and filter, IngestAudienceMembers, RemoveAudienceMembers, RetrieveRequestStatus), request bodies checked as strictly as the API's
// protos define them (unknown names, missing fields, enums, encoding, 64-hex hashes, the 10,000
// member limit), Google's error bodies, bearer tokens that expire or are revoked. It keeps user lists
// and members per Google Ads account and each request's status; helpers play Google's side
// (processing a request later, failing the next calls) and expose what was received.
//
// The parts live in ./google-data-manager-server/: state, HTTP side, field checks, errors, and one
// module per resource (user lists, audience members, request status).
import { randomBytes } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { maxAudienceMembers } from './google-data-manager-server/audience-members.js'
import {
  type GoogleServerError,
  internalError,
  invalidArgument,
  permissionDenied,
  rateLimited,
  scopeInsufficient,
  unauthenticated,
  unavailable,
} from './google-data-manager-server/errors.js'
import { listenGoogleServer } from './google-data-manager-server/http.js'
import { statusesOf } from './google-data-manager-server/request-status.js'
import {
  createGoogleState,
  type GoogleState,
  type RequestStatusName,
} from './google-data-manager-server/state.js'
import { closeLocal } from './local-http.js'

export { GoogleServerError } from './google-data-manager-server/errors.js'
export type { GoogleServerRequest } from './google-data-manager-server/state.js'

export interface GoogleDataManagerServerOptions {
  /** Access tokens the server takes; one random token by default. */
  tokens?: string[]
  /** Google Ads customer ids (ten digits) the tokens may use; `1234567890` by default. */
  accounts?: string[]
}

/** Failures a test can queue with `failNext`, as Google answers them. */
export const googleFailures = {
  /** 429 RESOURCE_EXHAUSTED with `Retry-After` (30 s by default) and, when given, RetryInfo's `retryDelay`. */
  rateLimited,
  /** 400 INVALID_ARGUMENT, field violation TOO_MANY_AUDIENCE_MEMBERS. */
  tooManyMembers: () =>
    invalidArgument(
      'audience_members',
      'TOO_MANY_AUDIENCE_MEMBERS',
      'Maximum number of audience members allowed per request is 10,000.',
    ),
  unauthenticated: () => unauthenticated(undefined),
  permissionDenied,
  scopeInsufficient,
  unavailable,
  internalError,
  invalidArgument,
}

/**
 * Starts the server on 127.0.0.1 and a free port.
 *
 * @example
 * const google = await startGoogleDataManagerServer()
 * const ads = createGoogleAdsPlatform({ apiUrl: google.apiUrl, consent: { adUserData: 'CONSENT_GRANTED' } })
 * const listId = await ads.createAudience(google.token, '1234567890', 'Visitors')
 * google.failNext(googleFailures.rateLimited())
 */
export async function startGoogleDataManagerServer(options: GoogleDataManagerServerOptions = {}) {
  const tokens = options.tokens ?? [`ya29.test-${randomBytes(12).toString('hex')}`]
  const state = createGoogleState(tokens, options.accounts ?? ['1234567890'])
  const server = await listenGoogleServer(state)
  const { port } = server.address() as AddressInfo
  return {
    port,
    apiUrl: `http://127.0.0.1:${port}/v1`,
    /** The first token the server takes. */
    token: tokens[0]!,
    maxAudienceMembers,
    requests: state.requests,
    ...googleSide(state),
    close: () => closeLocal(server),
  }
}

export type GoogleDataManagerServer = Awaited<ReturnType<typeof startGoogleDataManagerServer>>

function googleSide(state: GoogleState) {
  const list = (accountId: string, listId: string) => {
    const found = state.accounts.get(accountId)?.get(listId)
    if (!found) throw new Error(`no user list ${listId} in account ${accountId}`)
    return found
  }
  return {
    addToken: (token: string) => void state.tokens.set(token, 'valid'),
    /** The token's hour is over: 401 UNAUTHENTICATED, reason ACCESS_TOKEN_EXPIRED. */
    expireToken: (token: string) => void state.tokens.set(token, 'expired'),
    /** The grant was revoked: 401 UNAUTHENTICATED. */
    revokeToken: (token: string) => void state.tokens.set(token, 'revoked'),
    addAccount: (customerId: string) => void state.accounts.set(customerId, new Map()),
    /** The account's user lists as Google answers them, in the order they were made. */
    userLists: (accountId: string) =>
      [...(state.accounts.get(accountId)?.values() ?? [])].map((l) => l.resource),
    /**
     * A user list made in Google Ads itself, not through this API (a website visitors list: no
     * `ingestedUserListInfo`), as a name another list may already hold. Its id.
     */
    addOtherUserList: (accountId: string, displayName: string) => {
      const id = String(state.nextListId++)
      const resource = {
        name: `accountTypes/GOOGLE_ADS/accounts/${accountId}/userLists/${id}`,
        id,
        readOnly: false,
        displayName,
        membershipStatus: 'OPEN',
        membershipDuration: '2592000s',
        accessReason: 'OWNED',
        accountAccessStatus: 'ENABLED',
      }
      state.accounts.get(accountId)?.set(id, { id, resource, members: new Set() })
      return id
    },
    /** The user list as Google answers it. */
    userList: (accountId: string, listId: string) => list(accountId, listId).resource,
    /** The hashes on the list, sorted. */
    members: (accountId: string, listId: string) => [...list(accountId, listId).members].sort(),
    /** The next calls that pass authentication are answered with these failures, one each. */
    failNext: (...failures: GoogleServerError[]) => void state.failures.push(...failures),
    /** Serves `served` requests normally, then answers `failure` (one failure, later). */
    failAfter: (served: number, failure: GoogleServerError) =>
      void state.failures.push(...Array<undefined>(served).fill(undefined), failure),
    /** While held, new requests stay PROCESSING until `settleRequest`. */
    holdRequests: (hold = true) => {
      state.holdRequests = hold
    },
    /** Google's processing of the request is over: its status, error counts, match rate. */
    settleRequest: (
      requestId: string,
      outcome: {
        requestStatus?: RequestStatusName
        errorCounts?: { reason: string; recordCount: number }[]
        matchRateRange?: string
      } = {},
    ) => {
      const statuses = statusesOf(state, requestId)
      if (statuses.length === 0) throw new Error(`no request ${requestId}`)
      for (const status of statuses) {
        status.requestStatus = outcome.requestStatus ?? status.processedStatus
        if (outcome.errorCounts) status.errorCounts = outcome.errorCounts
        if (outcome.matchRateRange) status.matchRateRange = outcome.matchRateRange
      }
    },
  }
}
