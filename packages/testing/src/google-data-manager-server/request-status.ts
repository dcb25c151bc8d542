// GET /v1/requestStatus:retrieve?requestId=...: RetrieveRequestStatusResponse, one
// RequestStatusPerDestination for each destination of the original request, in its order. Counts
// are int64, so strings in JSON; error info and warning info are absent while PROCESSING.
import { invalidArgument, requiredField } from './errors.js'
import type { Json } from './fields.js'
import type { GoogleState, RequestStatusState } from './state.js'

/** The statuses of the request's destinations, in order. */
export function statusesOf(state: GoogleState, requestId: string): RequestStatusState[] {
  return [...state.statuses.entries()]
    .filter(([key]) => key.startsWith(`${requestId}#`))
    .map(([, status]) => status)
}

export function retrieveRequestStatus(state: GoogleState, query: Record<string, string>): Json {
  const known = ['requestId']
  for (const name of Object.keys(query)) {
    if (!known.includes(name)) {
      throw invalidArgument(
        '',
        'INVALID_ARGUMENT',
        `Invalid JSON payload received. Unknown name "${name}": Cannot bind query parameter.`,
      )
    }
  }
  const requestId = query.requestId
  if (!requestId) throw requiredField('request_id')
  const statuses = statusesOf(state, requestId)
  if (statuses.length === 0) {
    throw invalidArgument(
      'request_id',
      'INVALID_REQUEST_ID',
      'The request ID used to retrieve the status of a request is not valid.',
    )
  }
  return { requestStatusPerDestination: statuses.map(render) }
}

function render(status: RequestStatusState): Json {
  const counts = {
    recordCount: String(status.recordCount),
    userIdentifierCount: String(status.userIdentifierCount),
  }
  const processing = status.requestStatus === 'PROCESSING'
  const failedSome = status.requestStatus === 'FAILED' || status.requestStatus === 'PARTIAL_SUCCESS'
  return {
    destination: status.destination,
    requestStatus: status.requestStatus,
    ...(!processing && failedSome
      ? {
          errorInfo: {
            errorCounts: status.errorCounts.map((c) => ({
              recordCount: String(c.recordCount),
              reason: c.reason,
            })),
          },
        }
      : {}),
    ...(status.action === 'ingest'
      ? {
          audienceMembersIngestionStatus: {
            userDataIngestionStatus: {
              ...counts,
              ...(status.matchRateRange && !processing
                ? { uploadMatchRateRange: status.matchRateRange }
                : {}),
            },
          },
        }
      : { audienceMembersRemovalStatus: { userDataRemovalStatus: counts } }),
  }
}
