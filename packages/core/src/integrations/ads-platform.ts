// The port an audience sync talks to: one ads platform's customer-list API, whatever its protocol.
// Each adapter (the provider-neutral `ads-api.ts`, Google's Data Manager API, Meta's Custom
// Audiences) turns these calls into the platform's own documented requests and its errors into
// `AdsPlatformError`, whose `kind` tells the sync what to do: wait and resume, ask the organization
// to reconnect, or report the failure on the list's sync.
import type { TokenSet } from './oauth.js'

/** An ads account the organization may send audiences to. */
export interface AdsAccount {
  id: string
  name: string
}

/** How a platform normalizes emails before hashing (see `AdsPlatform.emailRule`). */
export type EmailRule = 'standard' | 'google'

/** What the sync does about a failed call. */
export type AdsFailureKind =
  /** Rate limit or quota: wait (`retryAfterMs` when the platform says), then resume where it stopped. */
  | 'retry_later'
  /** The grant is expired or revoked: the integration needs a new authorization. */
  | 'reauthorize'
  /** Anything else (bad request, permissions, policy): reported on the list's sync, not retried. */
  | 'report'

export class AdsPlatformError extends Error {
  constructor(
    readonly kind: AdsFailureKind,
    message: string,
    readonly details: {
      /** The HTTP status, 0 when the platform did not answer. */
      status?: number
      /** The platform's own error code (Meta's `code`, Google's `reason`). */
      code?: string | number
      /** How long the platform asked to wait. */
      retryAfterMs?: number
    } = {},
  ) {
    super(message)
    this.name = 'AdsPlatformError'
  }
}

/**
 * What the people in an audience agreed to, as Google's Data Manager API takes it with every
 * ingestion: the use of their data for ads, and for personalized ads. Unset: not sent.
 */
export interface AdsConsent {
  adUserData?: ConsentStatus
  adPersonalization?: ConsentStatus
}
export type ConsentStatus = 'CONSENT_GRANTED' | 'CONSENT_DENIED'

/** The audience a batch goes to. */
export interface AudienceTarget {
  accountId: string
  audienceId: string
  /** The organization's consent, when it set one (platforms that take none ignore it). */
  consent?: AdsConsent
}

/**
 * Where a batch stands in one sync: platforms that group a sync's uploads (Meta's upload sessions)
 * use it; the others ignore it. A sync's additions and its removals are two sequences, each with
 * its own `syncId` and numbered from 1.
 */
export interface BatchPosition {
  /** Stable for one sequence of one sync, so a resumed sync continues the same session. */
  syncId: string
  /** 1 for the first batch of the sync. */
  sequence: number
  last: boolean
}

/** What the platform said about one batch. */
export interface BatchOutcome {
  /** Members sent in the batch. */
  sent: number
  /** Members the platform took (Meta's `num_received`), when it says. */
  received?: number
  /** Members it refused as malformed (Meta's `num_invalid_entries`), when it says. */
  invalid?: number
  /** An id to read the batch's processing back with (Google's `requestId`). */
  requestId?: string
}

/** How the platform processed an earlier request, read back later (Google's request status). */
export interface RequestStatus {
  state: 'processing' | 'succeeded' | 'partial' | 'failed'
  /** Members the platform matched to its users, when it says. */
  matched?: number
  /**
   * The share of the request's members the platform matched, in percent, when it gives a range
   * instead of a count (Google's `uploadMatchRateRange`: `{ min: 20, max: 30 }`).
   */
  matchRate?: { min: number; max: number }
  /** The platform's words on a partial or failed request. */
  detail?: string
}

export interface AdsPlatform {
  readonly name: string
  /** The most members one request may carry. */
  readonly maxBatch: number
  /** Extra query parameters of the authorization page (Google: `access_type=offline`, `prompt=consent`). */
  readonly authorizationParams?: Readonly<Record<string, string>>
  /**
   * Runs after the code exchange, on platforms whose exchanged token is not the one to keep (Meta:
   * the short-lived token is traded for a long-lived one, about 60 days, and there is no refresh
   * token, so the organization reconnects before it expires).
   */
  keepTokens?(tokens: TokenSet): Promise<TokenSet>
  /**
   * The platform's words for an error its token endpoint answered outside RFC 6749's form (Meta's
   * Graph error body), on the code exchange; undefined when it does not know the body. `secrets`
   * (the code, the client secret) never appear in the message.
   */
  tokenEndpointFailure?(
    status: number,
    body: unknown,
    secrets: readonly string[],
  ): AdsPlatformError | undefined
  /**
   * The ads accounts the token may use; undefined when the platform offers no way to list them,
   * and the organization enters its account id (checked with `isAccountId`).
   */
  listAccounts(token: string): Promise<AdsAccount[] | undefined>
  /** Whether an account id a person typed has the platform's form. */
  isAccountId(id: string): boolean
  /**
   * How the platform normalizes an email before hashing it: `standard` (the default) trims and
   * lowercases, which is the project's own `email_sha256` (Meta's rule, the neutral API's);
   * `google` also folds Gmail addresses (dots and `+tags` dropped), so the sync hashes those again
   * from the contact's email.
   */
  readonly emailRule?: EmailRule
  /** A new customer-list audience on the account; its id. */
  /**
   * `origin` names what the audience is made from (the list's id): a platform that reuses an
   * audience of the same name (Google refuses a second list of one name) reuses only one made from
   * the same origin, so two lists of one name never fill, and empty, one audience.
   */
  createAudience(token: string, accountId: string, name: string, origin?: string): Promise<string>
  /** Adds members: SHA-256 hex of normalized emails, at most `maxBatch`. */
  addMembers(
    token: string,
    target: AudienceTarget,
    hashes: readonly string[],
    position: BatchPosition,
  ): Promise<BatchOutcome>
  /** Removes members, as `addMembers` adds them. */
  removeMembers(
    token: string,
    target: AudienceTarget,
    hashes: readonly string[],
    position: BatchPosition,
  ): Promise<BatchOutcome>
  /** Reads back how an earlier request was processed, on platforms that process later. */
  requestStatus?(token: string, requestId: string): Promise<RequestStatus>
}
