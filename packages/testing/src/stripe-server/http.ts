// The HTTP side of the fake: requests recorded and read as Stripe reads them, the secret key
// checked, POSTs replayed by `Idempotency-Key`, answers and errors in Stripe's JSON.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { listenLocal } from '../local-http.js'
import { StripeServerError } from './errors.js'
import { parseStripeForm } from './form.js'
import { route } from './router.js'
import { newId, type StripeState } from './state.js'

type Reply = (status: number, payload: unknown) => void

/** Starts the server on 127.0.0.1 and a free port; a handler's unexpected error is a 500 `api_error`. */
export async function listenStripeServer(state: StripeState, secretKey: string): Promise<Server> {
  const handle = createStripeHandler(state, secretKey)
  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      response.writeHead(500, { 'content-type': 'application/json' })
      response.end(JSON.stringify({ error: { type: 'api_error', message: String(error) } }))
    })
  })
  await listenLocal(server)
  return server
}

function createStripeHandler(state: StripeState, secretKey: string) {
  /** The answers of POSTs by `Idempotency-Key`: the SDK's retries must not make a second session. */
  const idempotent = new Map<string, { status: number; body: unknown }>()
  return async (request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1')
    const method = request.method ?? 'GET'
    const query = parseStripeForm(url.search.slice(1))
    const body = parseStripeForm(await readBody(request))
    const version = request.headers['stripe-version']
    state.requests.push({
      method,
      path: url.pathname,
      query,
      body,
      apiVersion: Array.isArray(version) ? version[0] : version,
    })
    const reply: Reply = (status, payload) => {
      response.writeHead(status, { 'content-type': 'application/json', 'request-id': newId('req') })
      response.end(JSON.stringify(payload, null, 2))
    }
    if (request.headers.authorization !== `Bearer ${secretKey}`) return replyUnauthorized(request, reply)
    const key = request.headers['idempotency-key']
    const idempotencyKey = method === 'POST' && typeof key === 'string' ? key : undefined
    const replayed = idempotencyKey ? idempotent.get(idempotencyKey) : undefined
    if (replayed) return reply(replayed.status, replayed.body)
    const { status, payload } = answer(() => route(state, method, url.pathname, { ...query, ...body }))
    if (idempotencyKey) idempotent.set(idempotencyKey, { status, body: payload })
    reply(status, payload)
  }
}

/** The route's answer, or the Stripe error it threw with its status. */
function answer(routed: () => unknown): { status: number; payload: unknown } {
  try {
    return { status: 200, payload: routed() }
  } catch (error) {
    if (!(error instanceof StripeServerError)) throw error
    return { status: error.status, payload: { error: error.body } }
  }
}

function replyUnauthorized(request: IncomingMessage, reply: Reply): void {
  // Stripe names a wrong key by its last four characters only.
  const given = /^Bearer (.*)$/.exec(request.headers.authorization ?? '')?.[1] ?? ''
  reply(401, {
    error: {
      type: 'invalid_request_error',
      message: given ? `Invalid API Key provided: ${maskKey(given)}` : 'You did not provide an API key.',
    },
  })
}

const maskKey = (key: string) => `${key.slice(0, key.indexOf('_', 3) + 1)}${'*'.repeat(4)}${key.slice(-4)}`

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    request.on('error', reject)
  })
}
