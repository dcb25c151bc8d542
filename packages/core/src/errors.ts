/** One entry of the catalogue. */
export interface ErrorEntry {
  statusCode: number
  message: string
  /**
   * Set while no route returns the code: the feature of the spec that will. Reserved codes stay in
   * the catalogue (so their status is fixed and documented) but are listed apart in the docs; a test
   * fails when a reserved code is returned, or when a code is neither returned nor reserved.
   */
  reservedFor?: string
}

/**
 * The error catalogue: every error the service reports, with its stable string code, HTTP status
 * and message. Code throws `AppError`s built from here; one handler renders them as
 * `{ statusCode, error, code, message, details? }`.
 */
export const errorCatalogue = {
  invalid_request: { statusCode: 400, message: 'The request is invalid' },
  invalid_json: { statusCode: 400, message: 'The body is not valid JSON' },
  unauthorized: { statusCode: 401, message: 'A valid API key is required' },
  forbidden: { statusCode: 403, message: 'The API key lacks the scope this endpoint needs' },
  not_plus_employee: { statusCode: 403, message: 'This feature is available to B2B organizations only' },
  insufficient_credits: {
    statusCode: 402,
    message: 'Not enough identification credits',
  },
  no_linkedin: { statusCode: 400, message: 'The visitor has no LinkedIn URL' },
  search_ongoing: {
    statusCode: 409,
    message: 'A phone number search is already running for this visitor',
  },
  not_found: {
    statusCode: 409,
    message: 'A previous search found no phone number; it is not retried',
  },
  retry_exhausted: {
    statusCode: 409,
    message: 'The one retry after an error or an expired search was used; the search is not retried again',
  },
  already_unlocked: {
    statusCode: 409,
    message: 'The phone number is already unlocked',
  },
  organization_not_found: { statusCode: 404, message: 'Organization not found' },
  list_not_found: { statusCode: 404, message: 'List not found' },
  no_enriched_emails: { statusCode: 409, message: 'The list has no enriched emails' },
  resource_not_found: { statusCode: 404, message: 'Resource not found' },
  unknown_plan: { statusCode: 400, message: 'No subscription plan has this price and product' },
  subscription_not_found: { statusCode: 404, message: 'The organization has no subscription' },
  subscription_active: {
    statusCode: 409,
    message: 'The organization already has an active subscription; change its plan instead',
  },
  integration_not_configured: {
    statusCode: 409,
    message: 'This integration type is not configured on this server',
  },
  integration_not_connected: { statusCode: 409, message: 'The integration is not connected' },
  unknown_ads_account: { statusCode: 400, message: 'The integration lists no such ads account' },
  flow_not_found: { statusCode: 404, message: 'Flow not found' },
  checkout_not_found: { statusCode: 404, message: 'Checkout session not found' },
  checkout_incomplete: { statusCode: 409, message: 'The checkout is not complete and paid yet' },
  checkout_pending_approval: {
    statusCode: 409,
    message:
      "The checkout waits for the operator's approval (BILLING_PROVIDER=local, a plan with a price): npm run cli -- billing approve <session id>",
  },
  billing_provider_error: { statusCode: 502, message: 'The payment provider did not answer as expected' },
  route_not_found: { statusCode: 404, message: 'Route not found' },
  method_not_allowed: { statusCode: 405, message: 'The path exists, but not with this method' },
  conflict: { statusCode: 409, message: 'The resource already exists' },
  owner_not_removable: { statusCode: 409, message: "The organization's owner cannot be removed" },
  payload_too_large: { statusCode: 413, message: 'The request body is too large' },
  uri_too_long: { statusCode: 414, message: 'A path parameter is too long' },
  unsupported_media_type: { statusCode: 415, message: 'Unsupported content type' },
  rate_limited: { statusCode: 429, message: 'Rate limit exceeded' },
  internal_error: { statusCode: 500, message: 'Internal error' },
  service_unavailable: { statusCode: 503, message: 'The service is temporarily unavailable' },
} as const satisfies Record<string, ErrorEntry>

export type ErrorCode = keyof typeof errorCatalogue

/** The feature a reserved code waits for, or undefined when the code is in use. */
export function reservedFor(code: ErrorCode): string | undefined {
  const entry: ErrorEntry = errorCatalogue[code]
  return entry.reservedFor
}

/** An error with a catalogue code; safe to show to API callers. */
export class AppError extends Error {
  override name = 'AppError'
  readonly code: ErrorCode
  readonly statusCode: number
  readonly details: unknown

  constructor(code: ErrorCode, message?: string, details?: unknown) {
    super(message ?? errorCatalogue[code].message)
    this.code = code
    this.statusCode = errorCatalogue[code].statusCode
    this.details = details
  }
}

/** Shorthand: `throw appError('resource_not_found', 'Visitor not found')`. */
export function appError(code: ErrorCode, message?: string, details?: unknown): AppError {
  return new AppError(code, message, details)
}
