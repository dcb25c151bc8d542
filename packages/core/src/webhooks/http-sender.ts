// The HTTP client that delivers partner webhooks. A webhook URL is chosen by a customer, so it is
// an SSRF vector: without a guard, a URL could make the server POST to its own admin ports, the
// cloud metadata service (169.254.169.254) or the private network. The guard checks the address
// actually connected to, inside the socket's DNS lookup, so a name that resolves to a public
// address when the URL is saved and to 127.0.0.1 when it is called (DNS rebinding) is still
// refused. Reasons never carry the URL (it may hold credentials) nor the answer's body.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import {
  type ClientRequest,
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingMessage,
  type RequestOptions,
} from 'node:http'
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https'
import type { LookupFunction } from 'node:net'
import ipaddr from 'ipaddr.js'

export interface WebhookRequest {
  url: string
  /** The exact bytes to send (they were signed). */
  body: Buffer
  /** The caller adds content-type, signatures, event id. */
  headers: Record<string, string>
  /** Default 10 000; covers DNS, connect, response and body. */
  timeoutMs?: number
  /** WEBHOOK_ALLOW_PRIVATE: private, loopback and link-local addresses may be called. */
  allowPrivate?: boolean
  /** Default 64 KB: read at most this much of the answer, then stop reading. */
  maxResponseBytes?: number
  /** Aborts the request (the server is stopping): it ends as failed, 'aborted'. */
  signal?: AbortSignal
}

export interface WebhookResponse {
  /** A 2xx. */
  ok: boolean
  /** Null when there was no HTTP answer (refused, timeout, blocked...). */
  statusCode: number | null
  responseTimeMs: number
  /**
   * Why it failed, for the delivery log: 'HTTP 500', 'redirect (301) not followed',
   * 'timeout after 10000 ms', 'address 10.0.0.5 is private', 'network error (ECONNREFUSED)'...
   */
  error?: string
  /** The first bytes of the answer (at most maxResponseBytes), as text. */
  responseBody?: string
}

const defaultTimeoutMs = 10_000
const defaultMaxResponseBytes = 64 * 1024
const maxUrlLength = 2048
/** A URL check on save answers the request: it does not wait on a slow resolver for long. */
const checkLookupTimeoutMs = 5_000

/** Whether an IP address may be connected to: a public unicast one, IPv4-mapped IPv6 unwrapped. */
export function isPublicAddress(address: string): boolean {
  return addressRange(address) === 'unicast'
}

/**
 * ipaddr.js's range of an address ('unicast', 'private', 'loopback'...), undefined when it is not
 * an IP address. `process` unwraps ::ffff:127.0.0.1 so it is judged as 127.0.0.1, not as a
 * harmless-looking 'ipv4Mapped'.
 */
function addressRange(address: string): string | undefined {
  try {
    return ipaddr.process(address).range()
  } catch {
    return undefined
  }
}

/** 'address 10.0.0.5 is private': the words the delivery log and the settings page show. */
function blockedReason(address: string): string {
  const range = addressRange(address)
  const words: Record<string, string> = {
    private: 'private',
    uniqueLocal: 'private (unique local)',
    carrierGradeNat: 'private (carrier-grade NAT)',
    loopback: 'loopback',
    linkLocal: 'link-local',
    unspecified: 'unspecified',
    multicast: 'multicast',
    broadcast: 'broadcast',
  }
  return `address ${address} is ${(range && words[range]) ?? `not public (${range ?? 'unknown'})`}`
}

/** An error the socket reports when its lookup refused the address; its message is the reason. */
class BlockedAddressError extends Error {
  readonly code = 'EBLOCKED'
}

/**
 * The connect-time guard: resolves like the default lookup, then refuses the connection when any
 * address is not public. Refusing on any (not only the one picked) keeps it the same rule as
 * checkWebhookUrl, and a name that mixes public and private addresses is suspicious anyway.
 */
const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
    if (error) return callback(error, '')
    const blocked = addresses.find((entry) => !isPublicAddress(entry.address))
    if (blocked) return callback(new BlockedAddressError(blockedReason(blocked.address)), '')
    // Node asks for every address when it races IPv4 and IPv6 (autoSelectFamily), one otherwise.
    if (options.all) return callback(null, addresses)
    const first = addresses[0]
    if (!first) return callback(Object.assign(new Error('no address'), { code: 'ENOTFOUND' }), '')
    callback(null, first.address, first.family)
  })
}

/**
 * Keep-alive agents, one pair per allowPrivate value: pooled sockets are keyed by host and port
 * only, so a socket opened while private addresses were allowed must never serve a request that
 * forbids them. The lookup sits on the agent (not the request) for that same reason.
 */
const agents = new Map<string, HttpAgent>()

function agentFor(protocol: 'http:' | 'https:', allowPrivate: boolean): HttpAgent {
  const key = `${protocol}${allowPrivate}`
  let agent = agents.get(key)
  if (!agent) {
    // 16 sockets per partner host: deliveries queue up rather than flood one receiver.
    const options = { keepAlive: true, maxSockets: 16, ...(allowPrivate ? {} : { lookup: publicOnlyLookup }) }
    agent = protocol === 'https:' ? new HttpsAgent(options) : new HttpAgent(options)
    agents.set(key, agent)
  }
  return agent
}

/** The parsed URL, or the reason it cannot be used whatever its address resolves to. */
function formatProblem(url: string): { reason: string } | { parsed: URL } {
  if (url.length > maxUrlLength) return { reason: `URL is longer than ${maxUrlLength} characters` }
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return { reason: 'not an absolute URL' }
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return { reason: 'URL must be http(s)' }
  // Credentials in a URL end up in logs and proxies; partners authenticate with the signature.
  if (parsed.username || parsed.password) return { reason: 'URL may not contain credentials (user:pass@)' }
  if (!hostOf(parsed)) return { reason: 'URL has no host' }
  return { parsed }
}

/** The host without IPv6 brackets, as net.connect and dns.lookup want it. */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1')
}

/** The reason an IP-literal host is refused; undefined for a public one or a name. */
function literalProblem(host: string): string | undefined {
  if (addressRange(host) === undefined) return undefined
  return isPublicAddress(host) ? undefined : blockedReason(host)
}

/**
 * Validation on save: a clear reason, or undefined when the URL may be used. Without
 * allowPrivate, the host must be a public address or a name whose every address is public.
 * Sending checks again at connect time: this check only spares the customer a URL that cannot work.
 */
export async function checkWebhookUrl(
  url: string,
  options: { allowPrivate?: boolean },
): Promise<string | undefined> {
  const format = formatProblem(url)
  if ('reason' in format) return format.reason
  if (options.allowPrivate) return undefined
  const host = hostOf(format.parsed)
  if (addressRange(host) !== undefined) return literalProblem(host)
  // RFC 6761: localhost and its subdomains are loopback whatever a resolver says.
  const name = host.toLowerCase().replace(/\.$/, '')
  if (name === 'localhost' || name.endsWith('.localhost')) return `host ${name} is loopback`
  let timer: NodeJS.Timeout | undefined
  const resolved = await Promise.race([
    new Promise<LookupAddress[] | string>((resolve) =>
      dnsLookup(host, { all: true }, (error, addresses) =>
        resolve(error ? `host ${host} does not resolve (${error.code ?? 'error'})` : addresses),
      ),
    ),
    new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve(`host ${host} did not resolve in time`), checkLookupTimeoutMs)
    }),
  ])
  clearTimeout(timer)
  if (typeof resolved === 'string') return resolved
  if (resolved.length === 0) return `host ${host} does not resolve`
  const blocked = resolved.find((entry) => !isPublicAddress(entry.address))
  return blocked ? `host ${host} resolves to ${blockedReason(blocked.address)}` : undefined
}

/** What a request's outcome is before its time is added. */
type Outcome = Omit<WebhookResponse, 'responseTimeMs'>

/** Where to connect, or why the URL cannot be used (its format, or an IP-literal host refused). */
function targetOf(url: string, allowPrivate: boolean): { reason: string } | { url: URL; host: string } {
  const format = formatProblem(url)
  if ('reason' in format) return format
  const host = hostOf(format.parsed)
  // Node skips the lookup for IP literals, so the connect-time guard would never see them.
  const literal = allowPrivate ? undefined : literalProblem(host)
  return literal ? { reason: literal } : { url: format.parsed, host }
}

/**
 * POSTs the body and reads at most maxResponseBytes of the answer. Never throws: every failure
 * (bad URL, blocked address, network error, timeout, non-2xx, redirect) is `ok: false` with a
 * reason. Redirects are not followed: the target would escape the checks and the signature.
 */
export async function sendWebhook(request: WebhookRequest): Promise<WebhookResponse> {
  const started = performance.now()
  const elapsed = () => Math.round(performance.now() - started)
  const target = targetOf(request.url, request.allowPrivate ?? false)
  if ('reason' in target)
    return { ok: false, statusCode: null, responseTimeMs: elapsed(), error: target.reason }
  return post(request, target, elapsed)
}

/** The POST itself, ended by its answer, an error, the timeout or the abort signal, whichever comes first. */
function post(
  request: WebhookRequest,
  target: { url: URL; host: string },
  elapsed: () => number,
): Promise<WebhookResponse> {
  const timeoutMs = request.timeoutMs ?? defaultTimeoutMs
  const maxBytes = Math.max(0, request.maxResponseBytes ?? defaultMaxResponseBytes)
  return new Promise((resolve) => {
    let done = false
    let statusCode: number | null = null
    let req: ClientRequest | undefined
    // One timer for everything (lookup, connect, answer, body): destroying the request stops all.
    const timer = setTimeout(() => {
      finish({ ok: false, statusCode, error: `timeout after ${timeoutMs} ms` })
      req?.destroy()
    }, timeoutMs)
    const abort = () => {
      finish({ ok: false, statusCode, error: 'aborted' })
      req?.destroy()
    }
    request.signal?.addEventListener('abort', abort, { once: true })
    function finish(result: Outcome) {
      if (done) return
      done = true
      clearTimeout(timer)
      request.signal?.removeEventListener('abort', abort)
      resolve({ ...result, responseTimeMs: elapsed() })
    }
    if (request.signal?.aborted) return abort()

    const protocol = target.url.protocol as 'http:' | 'https:'
    try {
      req = (protocol === 'https:' ? httpsRequest : httpRequest)(requestOptions(request, target), (res) => {
        statusCode = res.statusCode ?? null
        readAnswer(res, maxBytes, finish, () => done)
      })
    } catch (error) {
      // Invalid header names or values throw at once.
      return finish({ ok: false, statusCode: null, error: `invalid request (${errorCode(error)})` })
    }
    req.on('error', (error) => {
      if (error instanceof BlockedAddressError) return finish({ ok: false, statusCode, error: error.message })
      finish({ ok: false, statusCode, error: `network error (${errorCode(error)})` })
    })
    req.end(request.body)
  })
}

function requestOptions(request: WebhookRequest, { url, host }: { url: URL; host: string }): RequestOptions {
  return {
    method: 'POST',
    hostname: host,
    port: url.port || undefined,
    path: `${url.pathname}${url.search}`,
    // A fixed length: the exact signed bytes, not a chunked re-framing of them.
    headers: { ...request.headers, 'content-length': String(request.body.length) },
    agent: agentFor(url.protocol as 'http:' | 'https:', request.allowPrivate ?? false),
  }
}

/**
 * Reads at most `maxBytes` of the answer and ends the delivery by it: a 2xx is delivered, anything
 * else (a redirect included) or an answer cut off is not. `finished` says the delivery already
 * ended (timeout, abort): the rest of the answer is not kept.
 */
function readAnswer(
  res: IncomingMessage,
  maxBytes: number,
  finish: (result: Outcome) => void,
  finished: () => boolean,
): void {
  const statusCode = res.statusCode ?? null
  const chunks: Buffer[] = []
  let size = 0
  const complete = () => {
    const responseBody = Buffer.concat(chunks).toString('utf8')
    const code = statusCode ?? 0
    if (code >= 200 && code <= 299) return finish({ ok: true, statusCode, responseBody })
    const error = code >= 300 && code <= 399 ? `redirect (${code}) not followed` : `HTTP ${code}`
    finish({ ok: false, statusCode, error, responseBody })
  }
  const stopReading = () => {
    complete()
    // The socket is dropped rather than drained, so it does not go back to the pool.
    res.destroy()
  }
  // Cut off mid-answer: not a delivery we can vouch for (the receiver dedupes retries by event id).
  res.on('error', (error) => {
    const responseBody = Buffer.concat(chunks).toString('utf8')
    finish({ ok: false, statusCode, error: `network error (${errorCode(error)})`, responseBody })
  })
  res.on('end', complete)
  res.on('data', (chunk: Buffer) => {
    if (finished()) return
    const room = maxBytes - size
    chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk)
    size += Math.min(chunk.length, room)
    // Enough: a receiver that streams megabytes (or forever) must not hold the delivery.
    if (size >= maxBytes) stopReading()
  })
  if (maxBytes === 0) stopReading()
}

/** An error's code (ECONNREFUSED...), never its message: that may name the host or the URL. */
function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code
  if (typeof code === 'string') return code
  return error instanceof Error ? error.name : 'unknown'
}
