import { STATUS_CODES } from 'node:http'
import { AppError, type ErrorCode, errorCatalogue } from './errors.js'

/** The one error body of every HTTP reply: Fastify's shape plus our stable string `code`. */
export interface ErrorBody {
  statusCode: number
  error: string
  code: string
  message: string
  details?: unknown
}

// Fastify's own error codes for request problems, mapped to ours.
const fastifyCodes: Record<string, ErrorCode> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'invalid_request',
  FST_ERR_VALIDATION: 'invalid_request',
  FST_ERR_BAD_URL: 'invalid_request',
  FST_ERR_MAX_PARAM_LENGTH: 'uri_too_long',
  FST_ERR_ASYNC_CONSTRAINT: 'internal_error',
}

const body = (code: ErrorCode, message: string, details?: unknown): ErrorBody => {
  const statusCode = errorCatalogue[code].statusCode
  return {
    statusCode,
    error: STATUS_CODES[statusCode] ?? 'Error',
    code,
    message,
    ...(details === undefined ? {} : { details }),
  }
}

/**
 * Turns anything thrown while serving a request into the error body. Unknown errors become a
 * bare 500: their message never reaches the caller.
 */
export function toErrorBody(error: unknown): ErrorBody {
  if (error instanceof AppError) return body(error.code, error.message, error.details)
  const err = error as { code?: unknown; statusCode?: unknown; message?: unknown }
  const mapped = typeof err?.code === 'string' ? fastifyCodes[err.code] : undefined
  if (mapped) return body(mapped, errorCatalogue[mapped].message)
  // JSON.parse errors from a body parser.
  if (error instanceof SyntaxError) return body('invalid_json', errorCatalogue.invalid_json.message)
  const status = typeof err?.statusCode === 'number' ? err.statusCode : 500
  if (status === 413) return body('payload_too_large', errorCatalogue.payload_too_large.message)
  if (status === 415) return body('unsupported_media_type', errorCatalogue.unsupported_media_type.message)
  if (status >= 400 && status < 500) return body('invalid_request', errorCatalogue.invalid_request.message)
  return body('internal_error', errorCatalogue.internal_error.message)
}
