// The searchAds adapter on Google's Data Manager API (datamanager.googleapis.com/v1): Google Ads
// Customer Match lists without a Google Ads developer token. The shapes follow the API's protos
// (googleapis/google/ads/datamanager/v1) and its REST reference:
//   POST {api}/accountTypes/GOOGLE_ADS/accounts/{customerId}/userLists   a UserList -> the UserList
//   GET  {api}/accountTypes/GOOGLE_ADS/accounts/{customerId}/userLists?filter=display_name = "..."
//        when the name is taken: the list of that name is reused (google-user-lists.ts)
//   POST {api}/audienceMembers:ingest    destinations, audienceMembers, consent, encoding, termsOfService
//   POST {api}/audienceMembers:remove    destinations, audienceMembers, encoding
//   GET  {api}/requestStatus:retrieve?requestId=...
// Ingestion is asynchronous: each ingest or remove answers a `requestId` whose processing is read
// back later. Consent (the DMA signals `adUserData`, `adPersonalization`) is set per integration and
// sent with every ingestion as request-level consent; Google drops EEA members whose ad user data
// consent is not granted. The remove request has no consent or terms field, so none is sent there.
import type { AdsAccount } from './ads-api.js'
import {
  type AdsConsent,
  type AdsPlatform,
  AdsPlatformError,
  type AudienceTarget,
  type BatchOutcome,
  type ConsentStatus,
} from './ads-platform.js'
import { googleAdsCustomerId, isGoogleAdsCustomerId } from './google-ads-identifiers.js'
import { type GoogleHttp, googleCall } from './google-data-manager-http.js'
import { readRequestStatus } from './google-request-status.js'
import { userListNamed } from './google-user-lists.js'
import { googleDataManagerApiUrl } from './platform-endpoints.js'

export { googleEmailHash, isGoogleAdsCustomerId, normalizeGoogleEmail } from './google-ads-identifiers.js'
export { googleDataManagerApiUrl, googleOAuth } from './platform-endpoints.js'

/** A refresh token only comes with `access_type=offline`, and again on a reconnect only with `prompt=consent`. */
export const googleAuthorizationParams = { access_type: 'offline', prompt: 'consent' } as const

/** The API's `ConsentStatus` values a setting may take (unset: Google applies the account's defaults). */
export type GoogleConsentStatus = ConsentStatus

export interface GoogleAdsPlatformOptions {
  /** The API's base, `/v1` included; another one for tests (plain http only on loopback). */
  apiUrl?: string
  /**
   * Request-level DMA consent sent with every ingestion: the server's default, under an
   * organization's own (`AudienceTarget.consent`).
   */
  consent: AdsConsent
  /** How long a member stays on a new list, in whole days (1 to 540); unset: Google's maximum. */
  membershipDays?: number
  /** The new lists' description. */
  description?: string
  /**
   * The Google Ads accounts a token may use. The Data Manager API has no such call (the Google Ads
   * API's `customers:listAccessibleCustomers` needs a developer token); without it the organization
   * types its customer id.
   */
  listAccounts?: (token: string) => Promise<AdsAccount[]>
  fetch?: typeof fetch
  /** Per call; 30 s by default. */
  timeoutMs?: number
  /** The most of an answer read; 1 MiB by default. */
  maxAnswerBytes?: number
}

/** The most audience members one ingest or remove request may carry (IngestAudienceMembersRequest). */
export const googleMaxAudienceMembers = 10_000

const consentStatuses = new Set<string>(['CONSENT_GRANTED', 'CONSENT_DENIED'])
const maxMembershipDays = 540
const secondsPerDay = 86_400
const sha256Hex = /^[0-9a-f]{64}$/i

export function createGoogleAdsPlatform(options: GoogleAdsPlatformOptions): AdsPlatform {
  const api = checkedApiUrl(options.apiUrl ?? googleDataManagerApiUrl)
  const consent = checkedConsent(options.consent)
  const membershipDuration = checkedMembershipDuration(options.membershipDays)
  const http: GoogleHttp = {
    fetch: options.fetch ?? globalThis.fetch,
    timeoutMs: options.timeoutMs ?? 30_000,
    maxAnswerBytes: options.maxAnswerBytes ?? 1024 * 1024,
  }
  const description = options.description ?? 'Customer list kept in sync by visitor-id'

  const members = (
    action: 'ingest' | 'remove',
    token: string,
    target: AudienceTarget,
    hashes: readonly string[],
  ) =>
    sendMembers(http, token, {
      url: `${api}/audienceMembers:${action}`,
      action,
      // The organization's own consent, where it set one, over the server's default.
      consent: { ...consent, ...checkedConsent(target.consent) },
      target,
      hashes,
    })

  return {
    name: 'Google Ads',
    maxBatch: googleMaxAudienceMembers,
    authorizationParams: googleAuthorizationParams,
    listAccounts: async (token) => (options.listAccounts ? options.listAccounts(token) : undefined),
    isAccountId: isGoogleAdsCustomerId,
    emailRule: 'google',
    async createAudience(token, accountId, name, origin) {
      const customerId = checkedCustomerId(accountId)
      const displayName = name.trim()
      if (!displayName) throw new AdsPlatformError('report', 'A Google Ads list needs a name')
      const listsUrl = `${api}/accountTypes/GOOGLE_ADS/accounts/${customerId}/userLists`
      try {
        const userList = await googleCall<{ name?: unknown; id?: unknown }>(http, token, {
          method: 'POST',
          url: listsUrl,
          body: userListBody(displayName, describedOrigin(description, origin), membershipDuration),
        })
        return userListId(userList)
      } catch (error) {
        if (!(error instanceof AdsPlatformError) || error.details.code !== nameTaken) throw error
        return reusedUserList(http, token, { listsUrl, displayName, origin }, error)
      }
    },
    addMembers: (token, target, hashes) => members('ingest', token, target, hashes),
    removeMembers: (token, target, hashes) => members('remove', token, target, hashes),
    async requestStatus(token, requestId) {
      if (!requestId) throw new AdsPlatformError('report', 'No Google request id to read the status of')
      const answer = await googleCall<{ requestStatusPerDestination?: unknown }>(http, token, {
        method: 'GET',
        url: `${api}/requestStatus:retrieve?requestId=${encodeURIComponent(requestId)}`,
      })
      return readRequestStatus(answer)
    },
  }
}

/** Google's reason for a list name the account already has. */
const nameTaken = 'DISPLAY_NAME_ALREADY_USED'

/**
 * The description of a list made from `origin`: the origin in it, so a list of the same name can be
 * told apart later (`(from list_…)`).
 */
const describedOrigin = (description: string, origin: string | undefined) =>
  origin ? `${description} (from ${origin})` : description

/**
 * The account's Customer Match list of that name made before from the same origin (an earlier sync
 * of the list, or a flow deleted and made again): its id. Google's refusal stands when there is
 * none, when the name belongs to a list of another kind, which contact uploads cannot fill, or to a
 * list made from another origin (another list of the same name: it would empty this one's members).
 */
async function reusedUserList(
  http: GoogleHttp,
  token: string,
  wanted: { listsUrl: string; displayName: string; origin: string | undefined },
  refusal: AdsPlatformError,
): Promise<string> {
  const existing = await userListNamed(http, token, wanted.listsUrl, wanted.displayName)
  if (!existing) throw refusal
  const refused = (why: string) =>
    new AdsPlatformError('report', `${refusal.message}; ${why}`, refusal.details)
  if (!existing.contactList) {
    throw refused(
      `the list of that name on the account is not a Customer Match contact list (list ${existing.id}): rename one of them`,
    )
  }
  if (wanted.origin && !existing.description.includes(`(from ${wanted.origin})`)) {
    throw refused(
      `the list of that name on the account (list ${existing.id}) was not made from this list: ` +
        "give the audience another name (the sync action's audienceName)",
    )
  }
  return existing.id
}

/** Ingests or removes one batch; Google's request id to read its processing back with. */
async function sendMembers(
  http: GoogleHttp,
  token: string,
  batch: {
    url: string
    action: 'ingest' | 'remove'
    consent: AdsConsent
    target: AudienceTarget
    hashes: readonly string[]
  },
): Promise<BatchOutcome> {
  const destination = destinationOf(batch.target)
  const audienceMembers = checkedMembers(batch.hashes)
  if (audienceMembers.length === 0) return { sent: 0 }
  const body = {
    destinations: [destination],
    audienceMembers,
    // Only an ingestion has consent and terms fields (RemoveAudienceMembersRequest has neither).
    ...(batch.action === 'ingest'
      ? { consent: batch.consent, termsOfService: { customerMatchTermsOfServiceStatus: 'ACCEPTED' } }
      : {}),
    encoding: 'HEX',
    validateOnly: false,
  }
  const answer = await googleCall<{ requestId?: unknown }>(http, token, {
    method: 'POST',
    url: batch.url,
    body,
  })
  return {
    sent: audienceMembers.length,
    ...(typeof answer.requestId === 'string' ? { requestId: answer.requestId } : {}),
  }
}

/** A Customer Match list of contact information the advertiser collected itself. */
function userListBody(displayName: string, description: string, membershipDuration: string | undefined) {
  return {
    displayName,
    description,
    membershipStatus: 'OPEN',
    ...(membershipDuration ? { membershipDuration } : {}),
    ingestedUserListInfo: {
      uploadKeyTypes: ['CONTACT_ID'],
      contactIdInfo: { dataSourceType: 'DATA_SOURCE_TYPE_FIRST_PARTY' },
    },
  }
}

function checkedApiUrl(apiUrl: string): string {
  let url: URL
  try {
    url = new URL(apiUrl)
  } catch {
    throw new Error(`The Google Data Manager API URL is not a URL: ${JSON.stringify(apiUrl.slice(0, 200))}`)
  }
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    throw new Error('The Google Data Manager API URL must be https (plain http only on a loopback address)')
  }
  return url.href.replace(/\/+$/, '')
}

function checkedConsent(consent: AdsConsent | undefined): AdsConsent {
  const checked: AdsConsent = {}
  for (const key of ['adUserData', 'adPersonalization'] as const) {
    const value = consent?.[key]
    if (value === undefined) continue
    if (!consentStatuses.has(value)) {
      throw new Error(
        `Google consent ${key} must be CONSENT_GRANTED or CONSENT_DENIED, not ${JSON.stringify(value)}`,
      )
    }
    checked[key] = value
  }
  return checked
}

/** A protobuf Duration in JSON: whole days in seconds, `"7776000s"` for 90 days. */
function checkedMembershipDuration(days: number | undefined): string | undefined {
  if (days === undefined) return undefined
  if (!Number.isInteger(days) || days < 1 || days > maxMembershipDays) {
    throw new Error(`The Google membership duration must be whole days from 1 to ${maxMembershipDays}`)
  }
  return `${days * secondsPerDay}s`
}

function checkedCustomerId(accountId: string): string {
  const customerId = googleAdsCustomerId(accountId)
  if (!customerId) {
    throw new AdsPlatformError(
      'report',
      'The account is not a Google Ads customer id (10 digits, as 123-456-7890)',
    )
  }
  return customerId
}

function destinationOf(target: AudienceTarget) {
  if (!/^\d+$/.test(target.audienceId)) {
    throw new AdsPlatformError('report', 'The audience is not a Google Ads user list id')
  }
  return {
    operatingAccount: { accountType: 'GOOGLE_ADS', accountId: checkedCustomerId(target.accountId) },
    productDestinationId: target.audienceId,
  }
}

/** One member per hash, its one identifier the hashed email; a malformed hash is refused before sending. */
function checkedMembers(hashes: readonly string[]) {
  if (hashes.length > googleMaxAudienceMembers) {
    throw new AdsPlatformError(
      'report',
      `A Google request takes at most ${googleMaxAudienceMembers} members, not ${hashes.length}`,
    )
  }
  return hashes.map((hash, index) => {
    if (!sha256Hex.test(hash)) {
      throw new AdsPlatformError('report', `Member ${index} is not a SHA-256 hex digest of an email`)
    }
    return { userData: { userIdentifiers: [{ emailAddress: hash.toLowerCase() }] } }
  })
}

/** The list's id: the last segment of its resource name, else its `id` (an int64, a string in JSON). */
function userListId(userList: { name?: unknown; id?: unknown }): string {
  const fromName =
    typeof userList.name === 'string' ? /\/userLists\/(\d+)$/.exec(userList.name)?.[1] : undefined
  const id = fromName ?? (userList.id !== undefined && userList.id !== null ? String(userList.id) : '')
  if (!/^\d+$/.test(id))
    throw new AdsPlatformError('report', 'Google gave the new list no id', { status: 200 })
  return id
}
