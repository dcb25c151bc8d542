// The `http` adapter of the phone provider port: a generic phone-enrichment API, described by
// configuration (URL template, credential header, where the phone is in the JSON answer) rather
// than by code, so an operator can plug in a vendor without a release. Reasons never carry the
// URL (it may hold an API key), the credential or the answer's body (it may echo either).
import { type PhoneLookup, type PhoneOutcome, type PhoneProvider, toE164 } from './provider.js'

export interface HttpPhoneProviderOptions {
  /** Request URL template; placeholders {linkedinUrl} {email} {firstName} {lastName} {searchId} {callbackUrl} are replaced URL-encoded. */
  url: string
  /** Default GET; POST sends a JSON body {linkedinUrl, email, firstName, lastName, searchId, callbackUrl?}. */
  method?: 'GET' | 'POST'
  /** One header carrying the credential, e.g. { name: 'Authorization', value: 'Bearer x' }. */
  authHeader?: { name: string; value: string } | undefined
  /** Dot/bracket path of the phone in the JSON answer, e.g. 'data.phones[0].number' or 'phone'. An array at the path: its first valid number. */
  phonePath: string
  /**
   * - 'sync' (default): the answer carries the phone;
   * - 'callback': a 2xx answer means pending; the provider POSTs the result later to callbackUrl
   *   (`parseCallback` reads it with phonePath);
   * - 'poll': a 2xx answer without a phone means pending; `poll()` calls pollUrl (same
   *   placeholders) until it has one.
   */
  mode?: 'sync' | 'callback' | 'poll'
  pollUrl?: string
  /** Country for numbers without a country code (ISO alpha-2). */
  defaultCountry?: string
  /** Per request (connection, answer and body), default 10 s. */
  timeoutMs?: number
  /** For tests only; the global fetch otherwise. */
  fetch?: typeof fetch
}

/**
 * The provider. Answers map as follows:
 * - 2xx with a valid phone at `phonePath` -> `found` (E.164);
 * - 2xx without one -> `not_found` in sync mode, `pending` in callback and poll modes; a value
 *   that is not a valid number counts as no phone: the provider did answer, and asking again
 *   returns the same value, so a retry would only spend its quota;
 * - a JSON body `{ "status": "not_found" }` -> `not_found` in every mode, so an asynchronous
 *   provider that knows at once is not waited on;
 * - 404 -> `not_found`; 402, 408, 429, 5xx, network errors, timeouts -> `retry` (with
 *   `Retry-After`); other statuses, redirects included -> `error` (a configuration problem).
 * @throws Error when the options cannot work (not an http(s) URL, poll mode without pollUrl).
 */
export function createHttpPhoneProvider(options: HttpPhoneProviderOptions): PhoneProvider {
  const mode = options.mode ?? 'sync'
  checkOptions(options, mode)
  const settings: RequestSettings = {
    method: options.method ?? 'GET',
    timeoutMs: options.timeoutMs ?? 10_000,
    fetch: options.fetch ?? fetch,
    authHeader: options.authHeader,
    phonePath: options.phonePath,
    defaultCountry: options.defaultCountry,
  }
  const provider: PhoneProvider = {
    name: 'http',
    lookup(request) {
      if (mode === 'callback' && !request.callbackUrl) {
        // The provider would have nowhere to post its answer: waiting for it would be in vain.
        return Promise.resolve({ status: 'error', reason: 'callback mode needs a callback URL' })
      }
      return ask(settings, options.url, request, mode === 'sync' ? 'not_found' : 'pending')
    },
  }
  if (mode === 'poll') {
    const pollUrl = options.pollUrl!
    provider.poll = (request) => ask(settings, pollUrl, request, 'pending')
  }
  if (mode === 'callback') provider.parseCallback = (body) => readOutcome(settings, body, 'not_found')
  return provider
}

/** The options every request reads, with their defaults. */
interface RequestSettings {
  method: 'GET' | 'POST'
  timeoutMs: number
  fetch: typeof fetch
  authHeader: { name: string; value: string } | undefined
  phonePath: string
  defaultCountry: string | undefined
}

/** What a 2xx answer without a phone means: `not_found` when the answer had to carry it. */
type NoPhone = 'not_found' | 'pending'

/** @throws Error when the options cannot work (not an http(s) URL, poll mode without pollUrl, no phonePath). */
function checkOptions(options: HttpPhoneProviderOptions, mode: HttpPhoneProviderOptions['mode']): void {
  checkUrl(options.url, 'url')
  if (mode === 'poll') {
    if (!options.pollUrl) throw new Error('http phone provider: poll mode needs pollUrl')
    checkUrl(options.pollUrl, 'pollUrl')
  }
  if (!options.phonePath.trim()) throw new Error('http phone provider: phonePath is empty')
}

/** Sends one request and maps its answer. */
async function ask(
  settings: RequestSettings,
  template: string,
  request: PhoneLookup,
  noPhone: NoPhone,
): Promise<PhoneOutcome> {
  let answer: Answer
  try {
    answer = await fetchAnswer(settings, template, request)
  } catch (error) {
    return { status: 'retry', reason: failureReason(error, settings.timeoutMs) }
  }
  return answerOutcome(settings, answer, noPhone)
}

interface Answer {
  status: number
  retryAfter: string | null
  text: string
}

async function fetchAnswer(
  settings: RequestSettings,
  template: string,
  request: PhoneLookup,
): Promise<Answer> {
  const headers: Record<string, string> = { accept: 'application/json' }
  if (settings.authHeader) headers[settings.authHeader.name] = settings.authHeader.value
  let body: string | undefined
  if (settings.method === 'POST') {
    headers['content-type'] = 'application/json'
    const { linkedinUrl, email, firstName, lastName, searchId, callbackUrl } = request
    body = JSON.stringify({ linkedinUrl, email, firstName, lastName, searchId, callbackUrl })
  }
  // A plain call: a fetch may refuse another `this` (the browsers' does).
  const send = settings.fetch
  const response = await send(fillTemplate(template, request), {
    method: settings.method,
    headers,
    body,
    // Not followed: a redirect to another host would carry a custom credential header along.
    redirect: 'manual',
    signal: AbortSignal.timeout(settings.timeoutMs),
  })
  const status = response.status
  const retryAfter = response.headers.get('retry-after')
  // Read even when unused, so the connection is released (and the timeout covers the body).
  return { status, retryAfter, text: await response.text() }
}

/** The outcome an answer's status, then its JSON body, say. */
function answerOutcome(settings: RequestSettings, answer: Answer, noPhone: NoPhone): PhoneOutcome {
  const { status } = answer
  if (status === 404) return { status: 'not_found' }
  if (status === 402 || status === 408 || status === 429 || status >= 500) {
    return { status: 'retry', reason: `HTTP ${status}`, retryAfterMs: retryAfterMs(answer.retryAfter) }
  }
  if (status < 200 || status > 299) {
    return { status: 'error', reason: `HTTP ${status} (check the provider's URL and credential)` }
  }
  let json: unknown
  try {
    json = answer.text.trim() ? JSON.parse(answer.text) : undefined
  } catch {
    // An acknowledgement need not be JSON; an answer that must carry the phone must.
    return noPhone === 'pending' ? { status: 'pending' } : { status: 'error', reason: 'answer is not JSON' }
  }
  return readOutcome(settings, json, noPhone)
}

/** The outcome a JSON answer or callback carries. */
function readOutcome(settings: RequestSettings, json: unknown, noPhone: NoPhone): PhoneOutcome {
  const phone = firstPhone(valueAt(json, settings.phonePath), settings.defaultCountry)
  if (phone) return { status: 'found', phone }
  if (isRecord(json) && json.status === 'not_found') return { status: 'not_found' }
  return { status: noPhone }
}

const placeholderNames = ['linkedinUrl', 'email', 'firstName', 'lastName', 'searchId', 'callbackUrl'] as const

/** The template with each placeholder replaced by the request's value, URL-encoded (empty when unset). */
function fillTemplate(template: string, request: PhoneLookup): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) =>
    (placeholderNames as readonly string[]).includes(name)
      ? encodeURIComponent(request[name as (typeof placeholderNames)[number]] ?? '')
      : whole,
  )
}

function checkUrl(template: string, option: string): void {
  let protocol: string | undefined
  try {
    protocol = new URL(template).protocol
  } catch {}
  // The URL itself stays out of the message: it may hold an API key.
  if (protocol !== 'http:' && protocol !== 'https:') {
    throw new Error(`http phone provider: ${option} must be an http(s) URL`)
  }
}

/**
 * The value at a dot/bracket path ('data.phones[0].number'), undefined when a step is missing.
 * Own properties only, so a path like 'constructor' finds nothing.
 */
function valueAt(root: unknown, path: string): unknown {
  let value = root
  for (const key of path.match(/[^.[\]]+/g) ?? []) {
    if (Array.isArray(value)) {
      value = /^\d+$/.test(key) ? value[Number(key)] : undefined
    } else if (isRecord(value) && Object.hasOwn(value, key)) {
      value = value[key]
    } else {
      return undefined
    }
  }
  return value
}

/** The phone a value holds in E.164: a string or number, or the first valid one of an array. */
function firstPhone(value: unknown, defaultCountry: string | undefined): string | undefined {
  for (const item of Array.isArray(value) ? value : [value]) {
    if (typeof item !== 'string' && typeof item !== 'number') continue
    const phone = toE164(String(item), defaultCountry)
    if (phone) return phone
  }
  return undefined
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** `Retry-After` in milliseconds: delay-seconds or an HTTP date; undefined when absent or unreadable. */
function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  const text = header?.trim()
  if (!text) return undefined
  if (/^\d+$/.test(text)) return Number(text) * 1000
  const at = Date.parse(text)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}

/** Why a request failed without an answer: the error's name or code, never its message (it may name the URL). */
function failureReason(error: unknown, timeoutMs: number): string {
  const name = error instanceof Error ? error.name : 'unknown'
  if (name === 'TimeoutError') return `timeout after ${timeoutMs} ms`
  // fetch rejects with TypeError('fetch failed') whose cause names the network error (ECONNREFUSED, ...).
  const cause = error instanceof Error ? (error.cause as { code?: unknown } | undefined) : undefined
  return `network error (${typeof cause?.code === 'string' ? cause.code : name})`
}
