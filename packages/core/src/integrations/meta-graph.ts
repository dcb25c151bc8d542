// One Graph API request, as Meta documents it: the pinned version in the path, parameters in the
// query of a GET and in a form body otherwise (Meta reads both), `access_token` with its
// `appsecret_proof` (the HMAC-SHA256 of the token keyed with the app secret, so a leaked token is
// useless without the secret), a timeout, a cap on what is read of the answer, no redirect
// followed. Failures become `AdsPlatformError`s (see meta-errors.ts); no message carries a token.
import { createHmac } from 'node:crypto'
import { AdsPlatformError } from './ads-platform.js'
import { metaFailure } from './meta-errors.js'

export interface GraphContext {
  /** Origin of the Graph API, no trailing slash: `https://graph.facebook.com`. */
  graphUrl: string
  /** The pinned version, `v26.0`. */
  version: string
  appSecret: string
  timeoutMs: number
  maxAnswerBytes: number
  fetch: typeof fetch
}

export interface GraphRequest {
  method: 'GET' | 'POST' | 'DELETE'
  /** After the version: `/me/adaccounts`. */
  path: string
  params: Record<string, string>
  /** The user's token; unset for the token exchange, which authenticates with the app secret. */
  token?: string
  /** More values no error message may quote (the token being exchanged). */
  secrets?: readonly string[]
  /** Reads Meta's refusal instead of `metaFailure` (the login's own refusals). */
  failure?: typeof metaFailure
}

/** Meta's `appsecret_proof`: lowercase hex HMAC-SHA256 of the access token, keyed with the app secret. */
export function appSecretProof(token: string, appSecret: string): string {
  return createHmac('sha256', appSecret).update(token).digest('hex')
}

/** The answer's JSON; an `AdsPlatformError` when Meta refused, did not answer or answered too much. */
export async function graphRequest<T>(context: GraphContext, request: GraphRequest): Promise<T> {
  const params = new URLSearchParams(request.params)
  const secrets = [context.appSecret, ...(request.secrets ?? [])]
  if (request.token !== undefined) {
    const proof = appSecretProof(request.token, context.appSecret)
    params.set('access_token', request.token)
    params.set('appsecret_proof', proof)
    secrets.push(request.token, proof)
  }
  const url = new URL(`${context.graphUrl}/${context.version}${request.path}`)
  const inQuery = request.method === 'GET'
  if (inQuery) url.search = params.toString()
  const response = await send(context, url, {
    method: request.method,
    headers: {
      accept: 'application/json',
      ...(inQuery ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
    },
    ...(inQuery ? {} : { body: params.toString() }),
  })
  const text = await readCapped(response, context.maxAnswerBytes)
  const failure = request.failure ?? metaFailure
  let body: unknown
  try {
    body = text ? JSON.parse(text) : {}
  } catch {
    if (!response.ok) throw failure(response.status, undefined, response.headers, secrets)
    throw new AdsPlatformError('report', "Meta's Graph API answered something else than JSON", {
      status: response.status,
    })
  }
  const refused = typeof body === 'object' && body !== null && 'error' in body
  if (!response.ok || refused) throw failure(response.status, body, response.headers, secrets)
  return body as T
}

async function send(context: GraphContext, url: URL, init: RequestInit): Promise<Response> {
  try {
    return await context.fetch(url, {
      ...init,
      redirect: 'error',
      signal: AbortSignal.timeout(context.timeoutMs),
    })
  } catch (error) {
    // Only the error's name: fetch's messages and causes can quote the URL, whose query holds the token.
    const name = (error as Error).name
    const cause = String((error as { cause?: { message?: unknown } }).cause?.message ?? '')
    if (/redirect/i.test(cause)) {
      throw new AdsPlatformError(
        'report',
        "Meta's Graph API answered with a redirect, which is not followed",
        {
          status: 0,
        },
      )
    }
    const why = name === 'TimeoutError' ? `no answer within ${context.timeoutMs} ms` : name
    throw new AdsPlatformError('retry_later', `Meta's Graph API did not answer (${why})`, { status: 0 })
  }
}

/** The answer's text, reading no more than `limit` bytes: a larger answer is refused, not buffered. */
async function readCapped(response: Response, limit: number): Promise<string> {
  if (!response.body) return ''
  const reader = response.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    let chunk: Awaited<ReturnType<typeof reader.read>>
    try {
      chunk = await reader.read()
    } catch (error) {
      const why = (error as Error).name === 'TimeoutError' ? 'timed out' : 'was cut'
      throw new AdsPlatformError('retry_later', `Meta's Graph API answer ${why}`, { status: response.status })
    }
    if (chunk.done) break
    size += chunk.value.byteLength
    if (size > limit) {
      await reader.cancel().catch(() => {})
      throw new AdsPlatformError('report', `Meta's Graph API answered more than ${limit} bytes`, {
        status: response.status,
      })
    }
    chunks.push(chunk.value)
  }
  return Buffer.concat(chunks).toString('utf8')
}
