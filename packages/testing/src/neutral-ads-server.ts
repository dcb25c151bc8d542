// A local ads API speaking the provider-neutral contract of packages/api/README.md ("Integrations"),
// for tests of the audience sync: bearer tokens required, accounts, audiences that keep their
// members, member batches checked (the schema, SHA-256 hex, an optional batch limit) and answered
// with their counts and a request id, and the failures a platform answers (401, 429 with
// Retry-After, 500 with the platform's words) when a test asks for them. Every request is kept, so
// a test asserts exactly what was sent. `GET /requests/{id}` reads a batch's processing back (not
// part of the contract: the tests' own AdsPlatform adapter uses it).
import { randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { closeLocal, listenLocal } from './local-http.js'

export interface NeutralAdsRequest {
  method: string
  path: string
  token: string
  body: unknown
  /** The status answered. */
  status: number
}

/** A failure the next member batches get. */
export interface MemberFailure {
  status: number
  /** Batches answered normally first (default 0). */
  afterBatches?: number
  /** How many batches get it (default 1). */
  times?: number
  retryAfterSeconds?: number
  message?: string
}

export interface NeutralAdsOptions {
  accounts?: { id: string; name: string }[]
  /** Batches larger than this are refused with 400. */
  maxBatch?: number
}

interface Answer {
  status: number
  headers?: Record<string, string>
  body: object
}

interface Audience {
  account: string
  name: string
  members: Set<string>
}

const hex64 = /^[0-9a-f]{64}$/

/** The platform's side: its accounts, audiences, pending failures and processed requests. */
function neutralAdsState(options: NeutralAdsOptions) {
  const accounts = options.accounts ?? [{ id: '111', name: 'Acme Ads' }]
  const audiences = new Map<string, Audience>()
  const failures: (MemberFailure & { skip: number; left: number })[] = []
  const processed = new Map<string, { matched: number }>()

  /** The next failure asked for, if this batch gets it. */
  const failure = (): Answer | undefined => {
    const next = failures[0]
    if (!next) return undefined
    if (next.skip > 0) {
      next.skip--
      return undefined
    }
    if (--next.left === 0) failures.shift()
    const headers: Record<string, string> = next.retryAfterSeconds
      ? { 'retry-after': String(next.retryAfterSeconds) }
      : {}
    return { status: next.status, headers, body: { error: next.message ?? `status ${next.status}` } }
  }

  const membersCall = (audience: Audience, remove: boolean, body: unknown): Answer => {
    const failed = failure()
    if (failed) return failed
    const { schema, data } = (body ?? {}) as { schema?: unknown; data?: unknown }
    if (schema !== 'EMAIL_SHA256' || !Array.isArray(data)) {
      return { status: 400, body: { error: 'expected { schema: "EMAIL_SHA256", data: [...] }' } }
    }
    if (options.maxBatch && data.length > options.maxBatch) {
      return { status: 400, body: { error: `at most ${options.maxBatch} members a request` } }
    }
    const valid = data.filter((hash): hash is string => typeof hash === 'string' && hex64.test(hash))
    for (const hash of valid) remove ? audience.members.delete(hash) : audience.members.add(hash)
    const requestId = `req_${randomBytes(6).toString('hex')}`
    processed.set(requestId, { matched: Math.floor(valid.length / 2) })
    return { status: 200, body: { received: valid.length, invalid: data.length - valid.length, requestId } }
  }

  const route = (method: string, path: string, body: unknown): Answer => {
    if (method === 'GET' && path === '/accounts') return { status: 200, body: { accounts } }
    const create = path.match(/^\/accounts\/([^/]+)\/audiences$/)
    if (method === 'POST' && create) {
      const account = decodeURIComponent(create[1]!)
      const id = `aud_${audiences.size + 1}`
      audiences.set(id, { account, name: String((body as { name?: unknown })?.name), members: new Set() })
      return { status: 200, body: { id } }
    }
    const members = path.match(/^\/audiences\/([^/]+)\/members(\/remove)?$/)
    const audience = members && audiences.get(decodeURIComponent(members[1]!))
    if (method === 'POST' && audience) return membersCall(audience, members[2] !== undefined, body)
    const request = path.match(/^\/requests\/([^/]+)$/)
    const done = request && processed.get(request[1]!)
    if (method === 'GET' && done) return { status: 200, body: { state: 'succeeded', ...done } }
    return { status: 404, body: { error: 'not found' } }
  }
  return { audiences, failures, route }
}

/**
 * Starts the server on 127.0.0.1 and a free port; `url` is the contract's `{api}`.
 * @example const ads = await startNeutralAdsServer(); config.SEARCH_ADS_API_URL = ads.url
 */
export async function startNeutralAdsServer(options: NeutralAdsOptions = {}) {
  const { audiences, failures, route } = neutralAdsState(options)
  const requests: NeutralAdsRequest[] = []
  let refuseTokens = false
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const token = String(request.headers.authorization ?? '').replace(/^Bearer /, '')
      const raw = Buffer.concat(chunks).toString()
      const body = raw ? (JSON.parse(raw) as unknown) : undefined
      const path = (request.url ?? '').replace(/^\/ads/, '')
      const answer: Answer =
        !token || refuseTokens
          ? { status: 401, body: { error: 'the access token is invalid or revoked' } }
          : route(request.method ?? 'GET', path, body)
      requests.push({ method: request.method ?? 'GET', path, token, body, status: answer.status })
      response.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers })
      response.end(JSON.stringify(answer.body))
    })
  })
  const port = await listenLocal(server)
  return {
    /** The contract's `{api}`. */
    url: `http://127.0.0.1:${port}/ads`,
    /** Every request, in order, with the status it got. */
    requests,
    audiences,
    failMembers(failure: MemberFailure) {
      failures.push({ ...failure, skip: failure.afterBatches ?? 0, left: failure.times ?? 1 })
    },
    /** Every call answers 401 (the grant revoked on the platform's side) while set. */
    refuseTokens(refuse: boolean) {
      refuseTokens = refuse
    },
    close: () => closeLocal(server),
  }
}

export type NeutralAdsServer = Awaited<ReturnType<typeof startNeutralAdsServer>>
