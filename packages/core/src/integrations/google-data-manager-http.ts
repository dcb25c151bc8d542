// One call to Google's Data Manager API and the reading of its answer: the bearer token, JSON both
// ways, a timeout, a cap on the answer's size, no redirects; Google's error body turned into an
// `AdsPlatformError` whose kind says what the sync does about it.
//
// Google's REST errors (AIP-193) are `{ error: { code, message, status, details } }`: `code` the
// HTTP status, `status` the canonical gRPC code, `details` typed payloads: `google.rpc.ErrorInfo`
// (`reason`: the Data Manager `ErrorReason`, or googleapis.com's own such as
// `ACCESS_TOKEN_SCOPE_INSUFFICIENT`), `google.rpc.BadRequest` (`fieldViolations[]` with `field`,
// `description` and their own `reason`), `google.rpc.RetryInfo` (`retryDelay`, a Duration like `"30s"`).
import { type AdsFailureKind, AdsPlatformError } from './ads-platform.js'

export interface GoogleHttp {
  fetch: typeof fetch
  timeoutMs: number
  maxAnswerBytes: number
}

interface GoogleErrorDetail {
  '@type'?: unknown
  reason?: unknown
  retryDelay?: unknown
  fieldViolations?: unknown
}

interface GoogleErrorBody {
  code?: unknown
  message?: unknown
  status?: unknown
  details?: unknown
}

/** Calls the API; its JSON answer, or an `AdsPlatformError`. */
export async function googleCall<T>(
  http: GoogleHttp,
  token: string,
  request: { method: 'GET' | 'POST'; url: string; body?: object },
): Promise<T> {
  let response: Response
  try {
    response = await http.fetch(request.url, {
      method: request.method,
      headers: {
        authorization: `Bearer ${token}`,
        accept: 'application/json',
        ...(request.body ? { 'content-type': 'application/json' } : {}),
      },
      ...(request.body ? { body: JSON.stringify(request.body) } : {}),
      redirect: 'error',
      signal: AbortSignal.timeout(http.timeoutMs),
    })
  } catch (error) {
    throw unanswered(error, http.timeoutMs)
  }
  const text = await readCapped(response, http.maxAnswerBytes).catch((error: unknown) => {
    throw unanswered(error, http.timeoutMs)
  })
  if (!response.ok) throw googleError(response.status, response.headers, text)
  if (text === undefined) {
    throw new AdsPlatformError('report', `Google's answer is over ${http.maxAnswerBytes} bytes`, {
      status: response.status,
    })
  }
  try {
    return (text ? JSON.parse(text) : {}) as T
  } catch {
    throw new AdsPlatformError('report', 'Google answered something else than JSON', {
      status: response.status,
    })
  }
}

/** No answer: the network, a timeout (both worth a later try), or a redirect (not). */
function unanswered(error: unknown, timeoutMs: number): AdsPlatformError {
  const name = (error as Error)?.name
  if (name === 'TimeoutError' || name === 'AbortError') {
    return new AdsPlatformError('retry_later', `Google did not answer within ${timeoutMs / 1000} s`, {
      status: 0,
    })
  }
  const cause = String((error as { cause?: { message?: unknown } })?.cause?.message ?? '')
  if (/redirect/i.test(cause)) {
    return new AdsPlatformError('report', 'Google answered with a redirect, which is not followed', {
      status: 0,
    })
  }
  return new AdsPlatformError('retry_later', `Google could not be reached (${name ?? 'error'})`, {
    status: 0,
  })
}

/** The answer's text, or undefined when it is over `maxBytes` (reading stops there). */
async function readCapped(response: Response, maxBytes: number): Promise<string | undefined> {
  if (!response.body) return ''
  const reader = response.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > maxBytes) {
      await reader.cancel()
      return undefined
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks).toString('utf8')
}

const retryableStatuses = new Set(['RESOURCE_EXHAUSTED', 'UNAVAILABLE', 'DEADLINE_EXCEEDED'])
/**
 * Reasons that mean "later, not never". `TOO_MANY_AUDIENCE_MEMBERS` is among them as the sync's
 * contract asks (back off and resume): the adapter never sends more than `maxBatch`, so Google
 * saying so is a limit of the moment, not of the batch.
 */
const retryableReasons = new Set(['RESOURCE_EXHAUSTED', 'RATE_LIMIT_EXCEEDED', 'TOO_MANY_AUDIENCE_MEMBERS'])
/** googleapis.com's reasons for a token that needs a new grant (a scope the grant lacks). */
const reauthorizeReasons = new Set(['ACCESS_TOKEN_SCOPE_INSUFFICIENT', 'ACCESS_TOKEN_EXPIRED'])

/** Google's error answer as an `AdsPlatformError`: what to do, Google's words, and its reason. */
export function googleError(
  httpStatus: number,
  headers: Headers,
  text: string | undefined,
): AdsPlatformError {
  const body = parseErrorBody(text)
  const details = Array.isArray(body.details) ? (body.details as GoogleErrorDetail[]) : []
  const rpcStatus = typeof body.status === 'string' ? body.status : undefined
  const violations = details.flatMap((d) => (Array.isArray(d.fieldViolations) ? d.fieldViolations : []))
  const reasons = [
    ...violations.map((v: { reason?: unknown }) => v?.reason),
    ...details.map((d) => d.reason),
  ].filter((r): r is string => typeof r === 'string' && r !== '')
  const kind = failureKind(httpStatus, rpcStatus, reasons)
  const retryAfterMs = kind === 'retry_later' ? retryDelayMs(headers, details) : undefined
  const code = reasons[0] ?? rpcStatus
  return new AdsPlatformError(kind, describe(httpStatus, body, rpcStatus, code, violations), {
    status: httpStatus,
    ...(code ? { code } : {}),
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
  })
}

function parseErrorBody(text: string | undefined): GoogleErrorBody {
  try {
    const parsed = JSON.parse(text ?? '') as { error?: unknown }
    return typeof parsed.error === 'object' && parsed.error !== null ? (parsed.error as GoogleErrorBody) : {}
  } catch {
    return {}
  }
}

function failureKind(httpStatus: number, rpcStatus: string | undefined, reasons: string[]): AdsFailureKind {
  if (httpStatus === 401 || rpcStatus === 'UNAUTHENTICATED') return 'reauthorize'
  if (reasons.some((r) => reauthorizeReasons.has(r))) return 'reauthorize'
  if (httpStatus === 429 || httpStatus === 503 || httpStatus === 504) return 'retry_later'
  if (rpcStatus && retryableStatuses.has(rpcStatus)) return 'retry_later'
  if (reasons.some((r) => retryableReasons.has(r))) return 'retry_later'
  return 'report'
}

/** `Retry-After` (seconds or an HTTP date), else RetryInfo's `retryDelay` (`"1.5s"`). */
function retryDelayMs(headers: Headers, details: GoogleErrorDetail[]): number | undefined {
  const header = headers.get('retry-after')?.trim()
  if (header) {
    if (/^\d+$/.test(header)) return Number(header) * 1000
    const date = Date.parse(header)
    if (!Number.isNaN(date)) return Math.max(0, date - Date.now())
  }
  for (const detail of details) {
    const delay = typeof detail.retryDelay === 'string' ? /^(\d+(?:\.\d+)?)s$/.exec(detail.retryDelay) : null
    if (delay) return Math.round(Number(delay[1]) * 1000)
  }
  return undefined
}

const maxMessageLength = 500

/** Google's words, its reason, and the first field it named, in one line of bounded length. */
function describe(
  httpStatus: number,
  body: GoogleErrorBody,
  rpcStatus: string | undefined,
  code: string | undefined,
  violations: unknown[],
): string {
  const message = typeof body.message === 'string' && body.message ? body.message : `HTTP ${httpStatus}`
  const first = violations[0] as { field?: unknown; description?: unknown } | undefined
  const field =
    typeof first?.field === 'string' && typeof first.description === 'string'
      ? `; ${first.field}: ${first.description}`
      : ''
  const label = [rpcStatus, code && code !== rpcStatus ? code : undefined].filter(Boolean).join(' ')
  const text = `Google Data Manager API: ${message}${field}${label ? ` (${label})` : ''}`
  return text.length > maxMessageLength ? `${text.slice(0, maxMessageLength - 1)}…` : text
}
