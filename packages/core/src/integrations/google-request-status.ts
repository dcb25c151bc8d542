// Google's answer to `requestStatus:retrieve` read as the port's RequestStatus. Google answers one
// `RequestStatusPerDestination` per destination of the original request (the adapter sends one):
// `requestStatus` (PROCESSING, SUCCESS, PARTIAL_SUCCESS, FAILED, REQUEST_STATUS_UNKNOWN), error and
// warning counts by reason, and for an ingestion the upload's match rate as a range, never a count
// of matched members (int64 counts arrive as JSON strings, as proto3 JSON writes them).
import type { RequestStatus } from './ads-platform.js'

interface ReasonCount {
  recordCount?: unknown
  reason?: unknown
}

export interface GoogleRequestStatusPerDestination {
  requestStatus?: unknown
  errorInfo?: { errorCounts?: ReasonCount[] }
  warningInfo?: { warningCounts?: ReasonCount[] }
  audienceMembersIngestionStatus?: { userDataIngestionStatus?: { uploadMatchRateRange?: unknown } }
}

const states: Record<string, RequestStatus['state']> = {
  PROCESSING: 'processing',
  SUCCESS: 'succeeded',
  PARTIAL_SUCCESS: 'partial',
  FAILED: 'failed',
}

/** The request's status over its destinations: the least finished one decides. */
export function readRequestStatus(answer: { requestStatusPerDestination?: unknown }): RequestStatus {
  const perDestination = Array.isArray(answer.requestStatusPerDestination)
    ? (answer.requestStatusPerDestination as GoogleRequestStatusPerDestination[])
    : []
  // An unknown status (or none yet) is read as still processing: the sync asks again later.
  const each = perDestination.map((d) => states[String(d.requestStatus)] ?? 'processing')
  const state = combine(each)
  const detail = perDestination.map(describeCounts).filter(Boolean).join('; ')
  const matchRate = perDestination
    .map((d) => matchRateOf(d.audienceMembersIngestionStatus?.userDataIngestionStatus?.uploadMatchRateRange))
    .find((range) => range !== undefined)
  return { state, ...(detail ? { detail } : {}), ...(matchRate ? { matchRate } : {}) }
}

function combine(states: RequestStatus['state'][]): RequestStatus['state'] {
  if (states.length === 0 || states.includes('processing')) return 'processing'
  if (states.every((s) => s === 'succeeded')) return 'succeeded'
  if (states.every((s) => s === 'failed')) return 'failed'
  return 'partial'
}

/** Words for the reasons a person can act on; the others are Google's reason names made readable. */
const reasonWords: Record<string, string> = {
  PROCESSING_ERROR_REASON_DENIED_CONSENT:
    'ad user data consent denied (by the members or the account default)',
  PROCESSING_ERROR_REASON_NO_CONSENT: "the advertiser has not consented to Google's ads platform services",
  PROCESSING_ERROR_REASON_UNKNOWN_CONSENT: 'consent unknown (EEA members need ad user data consent)',
  PROCESSING_ERROR_REASON_INVALID_FORMAT: 'malformed identifiers',
  PROCESSING_ERROR_REASON_INTERNAL_ERROR: 'an internal error at Google',
}

function words(reason: unknown): string {
  const name = String(reason)
  return (
    reasonWords[name] ??
    name
      .replace(/^PROCESSING_(ERROR|WARNING)_REASON_/, '')
      .toLowerCase()
      .replaceAll('_', ' ')
  )
}

function describeCounts(destination: GoogleRequestStatusPerDestination): string {
  const list = (counts: ReasonCount[] | undefined) =>
    (counts ?? []).map((c) => `${words(c.reason)} (${Number(c.recordCount ?? 0)} records)`).join(', ')
  const errors = list(destination.errorInfo?.errorCounts)
  const warnings = list(destination.warningInfo?.warningCounts)
  return [errors, warnings ? `warnings: ${warnings}` : ''].filter(Boolean).join('; ')
}

/** `MATCH_RATE_RANGE_20_TO_30` -> 20..30 %, `MATCH_RATE_RANGE_LESS_THAN_20` -> 0..19 %. */
function matchRateOf(range: unknown): { min: number; max: number } | undefined {
  const name = String(range ?? '')
  if (name === 'MATCH_RATE_RANGE_LESS_THAN_20') return { min: 0, max: 19 }
  const between = /^MATCH_RATE_RANGE_(\d+)_TO_(\d+)$/.exec(name)
  return between ? { min: Number(between[1]), max: Number(between[2]) } : undefined
}
