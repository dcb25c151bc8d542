// The HTTP side of the fake Graph API: every request recorded with its parameters read as Graph
// reads them (query and body, a form or JSON, merged; a POST's `method=delete` honoured), the
// pinned version required in the path, the injected failures and delays served first, then the
// route; answers and errors in Graph's JSON with its `facebook-api-version` and `x-fb-trace-id`.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { listenLocal } from '../local-http.js'
import { createCustomAudience, listAdAccounts } from './ad-accounts.js'
import { GraphError, injectedError, unknownPath, unsupported } from './errors.js'
import { accessToken, authenticate, dialog } from './oauth.js'
import { type MetaGraphState, newTraceId } from './state.js'
import { changeMembers } from './users.js'

/** 10,000 hashes as a form field are about 1 MB; Meta takes far bigger posts. */
const maxBodyBytes = 8 * 1024 * 1024

export async function listenMetaGraphServer(state: MetaGraphState): Promise<Server> {
  const server = createServer((request, response) => {
    handle(state, request, response).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500, { 'content-type': 'application/json' })
      response.end(
        JSON.stringify({ error: { message: String(error), type: 'FacebookApiException', code: 1 } }),
      )
    })
  })
  await listenLocal(server)
  return server
}

async function handle(state: MetaGraphState, request: IncomingMessage, response: ServerResponse) {
  const url = new URL(request.url ?? '/', `http://${request.headers.host ?? '127.0.0.1'}`)
  const contentType = request.headers['content-type']
  const query = Object.fromEntries(url.searchParams)
  const body = readParams(await readBody(request), contentType)
  const params = { ...query, ...body }
  const override = request.method === 'POST' && params.method ? params.method.toUpperCase() : undefined
  const method = override ?? request.method ?? 'GET'
  state.requests.push({ method, path: url.pathname, query, body, params, contentType })
  const delay = state.delays.shift()
  if (delay) await new Promise((resolve) => setTimeout(resolve, delay))
  const [, version, ...rest] = url.pathname.split('/')
  const path = `/${rest.join('/')}`
  try {
    if (version !== state.version) throw unknownPath(url.pathname)
    const failure = state.failures.findIndex((f) => !f.path || f.path.test(path))
    const injected = state.failures[failure]
    // A failure `after` some requests lets that many matching ones through first.
    if (injected?.after) injected.after--
    else if (injected) throw injectedError(state.failures.splice(failure, 1)[0]!)
    if (method === 'GET' && path === '/dialog/oauth') {
      const answer = dialog(state, params)
      response.writeHead(
        answer.status,
        answer.location ? { location: answer.location } : { 'content-type': 'text/plain' },
      )
      return response.end(answer.text ?? '')
    }
    const pageUrl = (next: Record<string, string>) =>
      `${url.origin}/${state.version}${path}?${new URLSearchParams(next).toString()}`
    reply(response, state, 200, route(state, method, path, params, pageUrl))
  } catch (error) {
    if (!(error instanceof GraphError)) throw error
    reply(
      response,
      state,
      error.status,
      { error: { ...error.body, fbtrace_id: newTraceId() } },
      error.headers,
    )
  }
}

/** The answer to a versioned request, or a thrown GraphError. */
function route(
  state: MetaGraphState,
  method: string,
  path: string,
  params: Record<string, string>,
  pageUrl: (query: Record<string, string>) => string,
): unknown {
  if ((method === 'GET' || method === 'POST') && path === '/oauth/access_token')
    return accessToken(state, params)
  const token = authenticate(state, params)
  if (method === 'GET' && path === '/me/adaccounts') return listAdAccounts(state, token, params, pageUrl)
  const audiences = /^\/(act_\d+)\/customaudiences$/.exec(path)
  if (method === 'POST' && audiences) return createCustomAudience(state, token, audiences[1]!, params)
  const users = /^\/(\d+)\/users$/.exec(path)
  if ((method === 'POST' || method === 'DELETE') && users) {
    return changeMembers(state, token, users[1]!, method, params)
  }
  throw unsupported(method, path.split('/')[1] ?? '')
}

function reply(
  response: ServerResponse,
  state: MetaGraphState,
  status: number,
  payload: unknown,
  headers: Record<string, string> = {},
) {
  response.writeHead(status, {
    'content-type': 'application/json; charset=UTF-8',
    'facebook-api-version': state.version,
    'x-fb-trace-id': newTraceId(),
    ...headers,
  })
  response.end(JSON.stringify(payload))
}

function readParams(text: string, contentType: string | undefined): Record<string, string> {
  if (!text) return {}
  if (contentType?.startsWith('application/json')) {
    const json = JSON.parse(text) as Record<string, unknown>
    // Graph reads a JSON body's object values as the JSON text a form field would carry.
    return Object.fromEntries(
      Object.entries(json).map(([key, value]) => [
        key,
        typeof value === 'string' ? value : JSON.stringify(value),
      ]),
    )
  }
  return Object.fromEntries(new URLSearchParams(text))
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    request.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > maxBodyBytes) {
        reject(new Error('request body too large for the fake Graph API'))
        request.destroy()
        return
      }
      chunks.push(chunk)
    })
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    request.on('error', reject)
  })
}
