// The lean path of POST /collect: the pixel's usual request (a text/plain or JSON body of known
// length, at most 16 KB) is answered from Node's request event, before Fastify routes it. Fastify's
// per-request work (request and reply objects, a child logger, response listeners, the content-type
// parser, the async route and the reply's serialisation) cost about three times the hit's own; the
// answers are the same (status, body, CORS and Retry-After headers), since both paths run the same
// `collect` and the error bodies come from the same `toErrorBody`. Anything else (another content
// type, a query string, chunked bodies, a server closing) goes to Fastify's route as before.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { appError } from '@visitor-id/core/errors'
import { toErrorBody } from '@visitor-id/core/http-errors'
import { asksRetry, type Collect, retryAfterSeconds } from './collect.js'
import type { LogLike } from './durable-sink.js'
import type { HitRequest } from './pipeline/index.js'

/** Answers the request and returns true, or returns false for Fastify to serve it. */
export type CollectFastPath = (request: IncomingMessage, response: ServerResponse) => boolean

export interface CollectFastPathOptions {
  collect: Collect
  bodyLimit: number
  /** TRUST_PROXY: the client is the leftmost X-Forwarded-For address. */
  trustProxy: boolean
  log: () => LogLike
  /** True once the server is closing (Fastify answers 503 then). */
  closing: () => boolean
}

const leanContentTypes = new Set([
  'text/plain',
  'text/plain;charset=utf-8',
  'text/plain; charset=utf-8',
  'application/json',
  'application/json;charset=utf-8',
  'application/json; charset=utf-8',
])

const contentLengthPattern = /^[1-9][0-9]{0,5}$/

const stringHeader = (value: string | string[] | undefined) => (typeof value === 'string' ? value : undefined)

/**
 * The leftmost address of X-Forwarded-For, as Fastify's `request.ip` reads it when every proxy is
 * trusted (proxy-addr: comma-separated, spaces around an entry ignored, empty entries skipped).
 */
export function forwardedClient(header: string | undefined): string | undefined {
  if (header === undefined) return undefined
  for (const part of header.split(',')) {
    let start = 0
    let end = part.length
    while (start < end && part.charCodeAt(start) === 32) start++
    while (end > start && part.charCodeAt(end - 1) === 32) end--
    if (end > start) return part.slice(start, end)
  }
  return undefined
}

function clientIp(request: IncomingMessage, trustProxy: boolean): string {
  const socketAddress = request.socket.remoteAddress ?? ''
  if (!trustProxy) return socketAddress
  return forwardedClient(stringHeader(request.headers['x-forwarded-for'])) ?? socketAddress
}

function hitRequest(request: IncomingMessage, trustProxy: boolean): HitRequest {
  const headers = request.headers
  return {
    ip: clientIp(request, trustProxy),
    userAgent: stringHeader(headers['user-agent']) ?? '',
    origin: stringHeader(headers.origin),
    referer: stringHeader(headers.referer),
    privacySignal: headers['sec-gpc'] === '1' || headers.dnt === '1',
    receivedAt: Date.now(),
  }
}

const accepted = { 'access-control-allow-origin': '*', 'content-length': '0' }

/** The error's body, as Fastify's error handler would send it; CORS once the body parsed. */
function answerError(response: ServerResponse, error: unknown, parsed: boolean, log: LogLike) {
  const body = toErrorBody(error)
  if (body.statusCode >= 500) log.error({ err: error }, 'request failed')
  const text = JSON.stringify(body)
  const headers: Record<string, string> = {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(text)),
  }
  if (parsed) headers['access-control-allow-origin'] = '*'
  if (asksRetry(error)) headers['retry-after'] = retryAfterSeconds
  response.writeHead(body.statusCode, headers)
  response.end(text)
}

const invalidJson = Symbol('invalid JSON')

/** The body's JSON (named as the Fastify route's parser: the profile's stages find both). */
function parseJson(body: string): unknown {
  try {
    return JSON.parse(body)
  } catch {
    return invalidJson
  }
}

/** Whether the lean path serves this request (decided from its head alone). */
function isLean(request: IncomingMessage, bodyLimit: number): boolean {
  if (request.method !== 'POST' || request.url !== '/collect') return false
  const headers = request.headers
  if (headers['transfer-encoding'] !== undefined) return false
  const type = headers['content-type']
  if (type === undefined || !leanContentTypes.has(type.toLowerCase())) return false
  const length = headers['content-length']
  return length !== undefined && contentLengthPattern.test(length) && Number(length) <= bodyLimit
}

/**
 * Builds the lean path of POST /collect.
 * @example server.on('request', (req, res) => fastPath(req, res) || fastify(req, res))
 */
export function createCollectFastPath(options: CollectFastPathOptions): CollectFastPath {
  const { collect, trustProxy, bodyLimit } = options
  const answer = (response: ServerResponse, body: string, context: HitRequest) => {
    const hit = parseJson(body)
    if (hit === invalidJson) {
      answerError(response, appError('invalid_json'), false, options.log())
      return
    }
    collect(hit, context).then(
      () => {
        response.writeHead(202, accepted)
        response.end()
      },
      (error: unknown) => answerError(response, error, true, options.log()),
    )
  }
  return (request, response) => {
    if (!isLean(request, bodyLimit) || options.closing()) return false
    const context = hitRequest(request, trustProxy)
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const body = chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8')
      answer(response, body, context)
    })
    return true
  }
}
