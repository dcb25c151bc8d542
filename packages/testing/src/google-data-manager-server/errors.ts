// Google's REST error bodies (AIP-193) as the Data Manager API answers them: `{ error: { code,
// message, status, details } }`, with `google.rpc.ErrorInfo`, `google.rpc.BadRequest` (field
// violations naming the field in proto names and the Data Manager `ErrorReason`) and
// `google.rpc.RetryInfo` payloads. A handler throws one; the server answers it.

const domain = 'datamanager.googleapis.com'

export interface FieldViolation {
  field?: string
  description: string
  reason?: string
}

/** Thrown by a handler (or queued as an injected failure): answered with its status, headers and body. */
export class GoogleServerError extends Error {
  constructor(
    readonly httpStatus: number,
    readonly status: string,
    message: string,
    readonly details: object[] = [],
    readonly headers: Record<string, string> = {},
  ) {
    super(message)
  }
  get body() {
    return {
      error: { code: this.httpStatus, message: this.message, status: this.status, details: this.details },
    }
  }
}

const errorInfo = (reason: string, metadata: Record<string, string> = {}, errorDomain = domain) => ({
  '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
  reason,
  domain: errorDomain,
  metadata,
})

const badRequest = (violations: FieldViolation[]) => ({
  '@type': 'type.googleapis.com/google.rpc.BadRequest',
  fieldViolations: violations,
})

/** A field Google refuses, with the Data Manager reason (`INVALID_SHA256_FORMAT`, `TOO_MANY_AUDIENCE_MEMBERS`...). */
export const invalidArgument = (field: string, reason: string, description: string) =>
  new GoogleServerError(400, 'INVALID_ARGUMENT', 'There was a problem with the request.', [
    errorInfo('INVALID_ARGUMENT'),
    badRequest([{ field, description, reason }]),
  ])

export const requiredField = (field: string) =>
  invalidArgument(field, 'REQUIRED_FIELD_MISSING', `The field ${field} is required.`)

/** What Google's JSON transcoding says of a name the message does not have. */
export function unknownField(name: string, at: string): GoogleServerError {
  const message = `Invalid JSON payload received. Unknown name "${name}"${at ? ` at '${at}'` : ''}: Cannot find field.`
  return new GoogleServerError(400, 'INVALID_ARGUMENT', message, [
    badRequest([{ ...(at ? { field: at } : {}), description: message }]),
  ])
}

/** A value of the wrong JSON type or outside an enum, as the transcoding words it. */
export function invalidValue(at: string, type: string, value: unknown): GoogleServerError {
  const message = `Invalid value at '${at}' (${type}), ${JSON.stringify(value)}`
  return new GoogleServerError(400, 'INVALID_ARGUMENT', message, [
    badRequest([{ field: at, description: message }]),
  ])
}

/** No usable credentials: expired, revoked or unknown, or none at all. */
export function unauthenticated(reason: 'ACCESS_TOKEN_EXPIRED' | 'CREDENTIALS_MISSING' | undefined) {
  return new GoogleServerError(
    401,
    'UNAUTHENTICATED',
    'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.',
    reason ? [errorInfo(reason, { service: domain }, 'googleapis.com')] : [],
    { 'www-authenticate': 'Bearer realm="https://accounts.google.com/", error="invalid_token"' },
  )
}

export const permissionDenied = (message = 'The caller does not have permission') =>
  new GoogleServerError(403, 'PERMISSION_DENIED', message, [errorInfo('PERMISSION_DENIED')])

/** The token lacks the datamanager scope: googleapis.com's own reason. */
export const scopeInsufficient = () =>
  new GoogleServerError(403, 'PERMISSION_DENIED', 'Request had insufficient authentication scopes.', [
    errorInfo('ACCESS_TOKEN_SCOPE_INSUFFICIENT', { service: domain }, 'googleapis.com'),
  ])

/** The project's quota is spent: 429 with `Retry-After` (seconds) and, when given, RetryInfo's delay. */
export function rateLimited(options: { retryAfterSeconds?: number; retryDelay?: string } = {}) {
  const { retryAfterSeconds = 30, retryDelay } = options
  return new GoogleServerError(
    429,
    'RESOURCE_EXHAUSTED',
    "Quota exceeded for quota metric 'Requests' and limit 'Requests per minute' of service 'datamanager.googleapis.com'.",
    [
      errorInfo(
        'RATE_LIMIT_EXCEEDED',
        { service: domain, quota_limit: 'RequestsPerMinute' },
        'googleapis.com',
      ),
      ...(retryDelay ? [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay }] : []),
    ],
    { 'retry-after': String(retryAfterSeconds) },
  )
}

export const unavailable = () =>
  new GoogleServerError(503, 'UNAVAILABLE', 'The service is currently unavailable.', [
    errorInfo('INTERNAL_ERROR'),
  ])

export const internalError = () =>
  new GoogleServerError(500, 'INTERNAL', 'Internal error encountered.', [errorInfo('INTERNAL_ERROR')])

export const notFound = (method: string, path: string) =>
  new GoogleServerError(
    404,
    'NOT_FOUND',
    `Method not found: ${method} ${path}. This test server serves only what the Google adapter calls.`,
  )
