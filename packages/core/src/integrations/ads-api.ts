// The provider-neutral ads API (docs/decisions.md, "Integrations"): one small contract, documented in
// packages/api/README.md ("Integrations"), that a platform's API (or a thin adapter in front of it)
// speaks, and `createNeutralAdsPlatform`, the AdsPlatform adapter over it:
//   GET  {api}/accounts                                -> { accounts: [{ id, name }] }
//   POST {api}/accounts/{accountId}/audiences          { name }                               -> { id }
//   POST {api}/audiences/{audienceId}/members          { schema: "EMAIL_SHA256", data: [...] } -> 2xx
//   POST {api}/audiences/{audienceId}/members/remove   { schema: "EMAIL_SHA256", data: [...] } -> 2xx
// Every call carries `Authorization: Bearer <access token>`, times out after 30 s, and reads at most
// 1 MB of an answer. A member call may answer `{ received, invalid }` (counts), recorded on the sync.
import {
  type AdsAccount,
  type AdsFailureKind,
  type AdsPlatform,
  AdsPlatformError,
  type AudienceTarget,
  type BatchOutcome,
} from './ads-platform.js'

export type { AdsAccount } from './ads-platform.js'

/** The ads API answered something else than a success: its status, and whether the token was refused. */
export class AdsApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** How long a 429 or 503 asked to wait (`Retry-After`). */
    readonly retryAfterMs?: number,
  ) {
    super(message)
    this.name = 'AdsApiError'
  }
  get unauthorized(): boolean {
    return this.status === 401
  }
}

const timeoutMs = 30_000
const maxAnswerBytes = 1024 * 1024

async function call<T>(token: string, method: 'GET' | 'POST', url: string, body?: object): Promise<T> {
  let response: Response
  try {
    response = await fetch(url, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        accept: 'application/json',
        ...(body ? { 'content-type': 'application/json' } : {}),
      },
      ...(body ? { body: JSON.stringify(body) } : {}),
      redirect: 'error',
      signal: AbortSignal.timeout(timeoutMs),
    })
  } catch (error) {
    throw new AdsApiError(0, `the ads API did not answer (${(error as Error).name})`)
  }
  const text = (await response.text()).slice(0, maxAnswerBytes)
  if (!response.ok) {
    const words = wordsOf(text)
    throw new AdsApiError(
      response.status,
      `the ads API answered ${response.status}${words ? `: ${words}` : ''}`,
      retryAfterOf(response.headers.get('retry-after')),
    )
  }
  try {
    return (text ? JSON.parse(text) : {}) as T
  } catch {
    throw new AdsApiError(response.status, 'the ads API answered something else than JSON')
  }
}

/**
 * What an error answer says, for the run log: its `error` (a string, or an object's `message`) or
 * `message` field, at most 200 characters; nothing for an answer that is not such JSON.
 */
function wordsOf(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: unknown; message?: unknown }
    const error = body.error as { message?: unknown } | string | undefined
    const words = typeof error === 'string' ? error : (error?.message ?? body.message)
    return typeof words === 'string' ? words.replace(/\s+/g, ' ').trim().slice(0, 200) : ''
  } catch {
    return ''
  }
}

/** `Retry-After` in milliseconds: seconds or an HTTP date (RFC 9110, 10.2.3). */
function retryAfterOf(header: string | null): number | undefined {
  if (!header) return undefined
  const seconds = Number(header)
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000
  const at = Date.parse(header)
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now())
}

/** The ads accounts the token may use. */
export async function listAdsAccounts(apiUrl: string, token: string): Promise<AdsAccount[]> {
  const answer = await call<{ accounts?: unknown }>(token, 'GET', `${apiUrl}/accounts`)
  if (!Array.isArray(answer.accounts)) throw new AdsApiError(200, 'the ads API listed no `accounts` array')
  return answer.accounts
    .filter((a): a is { id: unknown; name?: unknown } => typeof a === 'object' && a !== null && 'id' in a)
    .map((a) => ({ id: String(a.id), name: typeof a.name === 'string' ? a.name : String(a.id) }))
}

/** A new customer-list audience on the account; its id. */
export async function createAudience(
  apiUrl: string,
  token: string,
  accountId: string,
  name: string,
): Promise<string> {
  const answer = await call<{ id?: unknown }>(
    token,
    'POST',
    `${apiUrl}/accounts/${encodeURIComponent(accountId)}/audiences`,
    {
      name,
    },
  )
  if (answer.id === undefined || answer.id === null)
    throw new AdsApiError(200, 'the ads API gave the audience no id')
  return String(answer.id)
}

const count = (value: unknown) =>
  typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined

/**
 * Adds hashed emails (SHA-256 hex of the normalized email) to the audience, or removes them
 * (`remove`); what the API counted, when it says.
 */
export async function uploadAudienceMembers(
  apiUrl: string,
  token: string,
  audienceId: string,
  hashes: readonly string[],
  remove = false,
): Promise<BatchOutcome> {
  const path = `${apiUrl}/audiences/${encodeURIComponent(audienceId)}/members${remove ? '/remove' : ''}`
  const answer = await call<{ received?: unknown; invalid?: unknown }>(token, 'POST', path, {
    schema: 'EMAIL_SHA256',
    data: hashes,
  })
  const received = count(answer.received)
  const invalid = count(answer.invalid)
  return {
    sent: hashes.length,
    ...(received !== undefined ? { received } : {}),
    ...(invalid !== undefined ? { invalid } : {}),
  }
}

/** What the sync does about an answer: 401 reconnects, 429, 503 and no answer wait, the rest is reported. */
function failureKindOf(status: number): AdsFailureKind {
  if (status === 401) return 'reauthorize'
  if (status === 429 || status === 503 || status === 0) return 'retry_later'
  return 'report'
}

async function translated<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (error) {
    if (!(error instanceof AdsApiError)) throw error
    throw new AdsPlatformError(failureKindOf(error.status), error.message, {
      status: error.status,
      ...(error.retryAfterMs !== undefined ? { retryAfterMs: error.retryAfterMs } : {}),
    })
  }
}

/**
 * The AdsPlatform adapter of the provider-neutral contract at `apiUrl`. The contract sets no batch
 * limit (AUDIENCE_BATCH_SIZE alone sizes the batches) and always lists the accounts; it ignores
 * batch positions.
 * @example const platform = createNeutralAdsPlatform(config.integrations.searchAds.apiUrl)
 */
export function createNeutralAdsPlatform(apiUrl: string): AdsPlatform {
  const base = apiUrl.replace(/\/+$/, '')
  const members = (token: string, target: AudienceTarget, hashes: readonly string[], remove: boolean) =>
    translated(() => uploadAudienceMembers(base, token, target.audienceId, hashes, remove))
  return {
    name: 'neutral',
    maxBatch: Number.POSITIVE_INFINITY,
    listAccounts: (token) => translated(() => listAdsAccounts(base, token)),
    isAccountId: (id) => /^[\w.:-]{1,200}$/.test(id),
    createAudience: (token, accountId, name) =>
      translated(() => createAudience(base, token, accountId, name)),
    addMembers: (token, target, hashes) => members(token, target, hashes, false),
    removeMembers: (token, target, hashes) => members(token, target, hashes, true),
  }
}
