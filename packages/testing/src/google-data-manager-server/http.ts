// The HTTP side of the fake: every request recorded, the bearer token checked (401 UNAUTHENTICATED
// for an expired, revoked or unknown one, as Google answers), injected failures answered next, then
// the documented routes; anything else is a 404. Answers and errors are Google's JSON.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { listenLocal } from '../local-http.js'
import { audienceMembers } from './audience-members.js'
import { GoogleServerError, invalidArgument, notFound, unauthenticated } from './errors.js'
import { retrieveRequestStatus } from './request-status.js'
import type { GoogleServerRequest, GoogleState } from './state.js'
import { createUserList, listUserLists } from './user-lists.js'

export async function listenGoogleServer(state: GoogleState): Promise<Server> {
  const server = createServer((request, response) => {
    handle(state, request, response).catch((error: unknown) => {
      reply(response, 500, { error: { code: 500, message: String(error), status: 'INTERNAL' } })
    })
  })
  await listenLocal(server)
  return server
}

function reply(
  response: ServerResponse,
  status: number,
  payload: unknown,
  headers: Record<string, string> = {},
) {
  response.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', ...headers })
  response.end(JSON.stringify(payload, null, 2))
}

async function handle(state: GoogleState, request: IncomingMessage, response: ServerResponse) {
  const url = new URL(request.url ?? '/', 'http://127.0.0.1')
  const method = request.method ?? 'GET'
  const text = await readBody(request)
  let body: unknown
  let malformed = false
  try {
    body = text ? JSON.parse(text) : undefined
  } catch {
    malformed = true
  }
  const recorded: GoogleServerRequest = {
    method,
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    authorization: request.headers.authorization,
    contentType: request.headers['content-type'],
    body,
    status: 0,
  }
  state.requests.push(recorded)
  try {
    authenticate(state, request.headers.authorization)
    const failure = state.failures.shift()
    if (failure) throw failure
    if (malformed) throw invalidArgument('', 'INVALID_ARGUMENT', 'Invalid JSON payload received.')
    const answer = route(state, method, url, body)
    recorded.status = 200
    reply(response, 200, answer)
  } catch (error) {
    if (!(error instanceof GoogleServerError)) throw error
    recorded.status = error.httpStatus
    reply(response, error.httpStatus, error.body, error.headers)
  }
}

function authenticate(state: GoogleState, authorization: string | undefined): void {
  const token = /^Bearer (.+)$/.exec(authorization ?? '')?.[1]
  if (!token) throw unauthenticated('CREDENTIALS_MISSING')
  const standing = state.tokens.get(token)
  if (standing === 'valid') return
  throw unauthenticated(standing === 'expired' ? 'ACCESS_TOKEN_EXPIRED' : undefined)
}

const userListsPath = /^\/v1\/accountTypes\/([^/]+)\/accounts\/([^/]+)\/userLists$/

function route(state: GoogleState, method: string, url: URL, body: unknown): unknown {
  const path = url.pathname
  if (method === 'POST' && path === '/v1/audienceMembers:ingest')
    return audienceMembers(state, 'ingest', body)
  if (method === 'POST' && path === '/v1/audienceMembers:remove')
    return audienceMembers(state, 'remove', body)
  if (method === 'GET' && path === '/v1/requestStatus:retrieve') {
    return retrieveRequestStatus(state, Object.fromEntries(url.searchParams))
  }
  const lists = userListsPath.exec(path)
  if (method === 'POST' && lists) {
    return createUserList(state, decodeURIComponent(lists[1]!), decodeURIComponent(lists[2]!), body)
  }
  if (method === 'GET' && lists) {
    const query = Object.fromEntries(url.searchParams)
    return listUserLists(state, decodeURIComponent(lists[1]!), decodeURIComponent(lists[2]!), query)
  }
  throw notFound(method, path)
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    request.on('error', reject)
  })
}
