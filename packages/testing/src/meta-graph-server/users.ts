// The members of a custom audience: POST /{audience_id}/users adds, DELETE removes, each with a
// `payload` ({ schema, data }) and an optional upload `session` ({ session_id, batch_seq,
// last_batch_flag, estimated_num_total }), both JSON in a form field. Validation is strict: a
// single-key schema's `data` is a list of strings (what Meta's own SDKs send), at most 10,000 of
// them; a malformed hash is counted in `num_invalid_entries`, as Meta counts it, not refused.
// Sessions are checked more strictly than Meta documents (a first batch is 1, no batch skipped, none
// after the last): a correct client never does otherwise, and a test then sees it when one does.
import { invalidParameter, missingPermission, termsNotAccepted, unsupported } from './errors.js'
import type { AudienceRecord, MetaGraphState, TokenRecord, UploadSession } from './state.js'

/** Meta's single-key schemas; the multi-key form (a list of keys) is outside this fake. */
const singleKeySchemas = new Set(['EMAIL_SHA256', 'PHONE_SHA256', 'MOBILE_ADVERTISER_ID'])
export const maxRecordsPerRequest = 10_000
const sha256Hex = /^[0-9a-f]{64}$/

interface Payload {
  schema: string
  data: string[]
}

interface SessionParam {
  sessionId: number
  batchSeq: number
  last: boolean
  estimatedTotal: number | undefined
}

export function changeMembers(
  state: MetaGraphState,
  token: TokenRecord,
  audienceId: string,
  method: 'POST' | 'DELETE',
  params: Record<string, string>,
) {
  const audience = reachableAudience(state, token, audienceId, method)
  const payload = readPayload(params.payload)
  const session = params.session === undefined ? undefined : readSession(params.session)
  const invalid = payload.data.filter((entry) => !validEntry(payload.schema, entry))
  const operation = method === 'POST' ? 'add' : 'remove'
  const upload = session ? continueSession(state, audience.id, operation, session) : undefined
  for (const entry of payload.data) {
    if (!validEntry(payload.schema, entry)) continue
    if (operation === 'add') audience.members.add(entry)
    else audience.members.delete(entry)
  }
  if (upload) {
    upload.received += payload.data.length
    upload.invalid += invalid.length
  }
  return {
    audience_id: audience.id,
    ...(session ? { session_id: session.sessionId } : {}),
    num_received: payload.data.length,
    num_invalid_entries: invalid.length,
    invalid_entry_samples: Object.fromEntries(invalid.slice(0, 10).map((entry) => [entry, 'Invalid format'])),
  }
}

function reachableAudience(
  state: MetaGraphState,
  token: TokenRecord,
  audienceId: string,
  method: string,
): AudienceRecord {
  const audience = state.audiences.get(audienceId)
  const account = audience && state.accounts.find((a) => a.accountId === audience.accountId)
  if (!audience || !account) throw unsupported(method, audienceId)
  if (!token.scopes.includes('ads_management')) throw missingPermission('ads_management')
  if (!account.termsAccepted) throw termsNotAccepted(account.accountId)
  return audience
}

function readPayload(raw: string | undefined): Payload {
  if (raw === undefined) throw invalidParameter('The parameter payload is required')
  const payload = parseJson(raw, 'payload') as { schema?: unknown; data?: unknown }
  if (typeof payload !== 'object' || payload === null) throw invalidParameter('payload must be a JSON object')
  const { schema, data } = payload
  if (Array.isArray(schema)) throw invalidParameter('multi-key schemas are not served by this test server')
  if (typeof schema !== 'string' || !singleKeySchemas.has(schema)) {
    throw invalidParameter(`payload.schema must be one of ${[...singleKeySchemas].join(', ')}`)
  }
  if (!Array.isArray(data)) throw invalidParameter('payload.data must be an array')
  if (data.length === 0) throw invalidParameter('payload.data is empty')
  if (data.length > maxRecordsPerRequest) {
    throw invalidParameter(
      `payload.data has ${data.length} records; at most ${maxRecordsPerRequest} a request`,
    )
  }
  if (!data.every((entry) => typeof entry === 'string')) {
    throw invalidParameter(`payload.data of the single-key schema ${schema} is a list of strings`)
  }
  return { schema, data: data as string[] }
}

function readSession(raw: string): SessionParam {
  const session = parseJson(raw, 'session') as Record<string, unknown>
  if (typeof session !== 'object' || session === null) throw invalidParameter('session must be a JSON object')
  const { session_id: id, batch_seq: seq, last_batch_flag: last, estimated_num_total: total } = session
  const sessionId = typeof id === 'string' && /^\d+$/.test(id) ? Number(id) : id
  if (!Number.isSafeInteger(sessionId) || (sessionId as number) < 1) {
    throw invalidParameter('session.session_id must be a positive 64-bit integer')
  }
  if (!Number.isInteger(seq) || (seq as number) < 1)
    throw invalidParameter('session.batch_seq must be an integer from 1')
  if (typeof last !== 'boolean') throw invalidParameter('session.last_batch_flag must be a boolean')
  if (total !== undefined && (!Number.isInteger(total) || (total as number) < 0)) {
    throw invalidParameter('session.estimated_num_total must be a non-negative integer')
  }
  return {
    sessionId: sessionId as number,
    batchSeq: seq as number,
    last,
    estimatedTotal: total as number | undefined,
  }
}

/** The session the batch belongs to, moved on by it; a replayed batch (same `batch_seq`) is taken again. */
function continueSession(
  state: MetaGraphState,
  audienceId: string,
  operation: 'add' | 'remove',
  session: SessionParam,
): UploadSession {
  const key = `${audienceId}:${operation}:${session.sessionId}`
  const known = state.sessions.get(key)
  const replay = known?.batches.includes(session.batchSeq) ?? false
  const expected = known ? Math.max(...known.batches) + 1 : 1
  if (!replay && known?.ended) {
    throw invalidParameter(`upload session ${session.sessionId} has ended: its last batch came already`)
  }
  if (!replay && session.batchSeq !== expected) {
    throw invalidParameter(
      `session.batch_seq ${session.batchSeq} does not follow: the session expects ${expected}`,
    )
  }
  const current: UploadSession = known ?? {
    audienceId,
    operation,
    sessionId: session.sessionId,
    batches: [],
    ended: false,
    estimatedTotal: session.estimatedTotal,
    received: 0,
    invalid: 0,
  }
  current.batches.push(session.batchSeq)
  if (session.last) current.ended = true
  state.sessions.set(key, current)
  return current
}

const validEntry = (schema: string, entry: string) =>
  schema === 'MOBILE_ADVERTISER_ID' ? entry.length > 0 : sha256Hex.test(entry)

function parseJson(raw: string, name: string): unknown {
  try {
    return JSON.parse(raw)
  } catch {
    throw invalidParameter(`${name} must be valid JSON`)
  }
}
