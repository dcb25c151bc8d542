// The dashboard's only way to the server: the public /api/v1 with the keys of the session.
// Keys live in sessionStorage (gone when the tab closes), never in a URL.

/** The keys a signed-in session holds. */
export interface Session {
  apiKey: string
  organizationId: string
  partnerKey?: string
}

const storageKey = 'visitor-id.session'

/** The session of this tab, if signed in. */
export function loadSession(): Session | undefined {
  try {
    const raw = sessionStorage.getItem(storageKey)
    return raw ? (JSON.parse(raw) as Session) : undefined
  } catch {
    return undefined
  }
}

export function saveSession(session: Session | undefined): void {
  if (session) sessionStorage.setItem(storageKey, JSON.stringify(session))
  else sessionStorage.removeItem(storageKey)
}

/** An error answer of the API, with a message a person can read. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message)
    this.name = 'ApiError'
  }
}

interface ErrorBody {
  code?: string
  message?: string
  details?: { issues?: { path?: string; message?: string }[] }
}

/** Turns the API's error body into one readable sentence: the message, then each issue. */
export function describeError(status: number, body: ErrorBody | undefined): ApiError {
  const issues = body?.details?.issues ?? []
  const parts = issues
    .slice(0, 5)
    .map((issue) => (issue.path ? `${issue.path}: ${issue.message}` : issue.message))
  const base =
    body?.message ??
    (status === 401
      ? 'The key was refused: it may be revoked or mistyped'
      : status === 403
        ? 'This key lacks the scope for that'
        : `The server answered ${status}`)
  let message = parts.length ? `${base}: ${parts.join('; ')}` : base
  // A key revoked or expired while signed in: say what to do about it.
  if (status === 401) message += '. Sign out, then sign in with a valid key.'
  return new ApiError(status, body?.code ?? `http_${status}`, message)
}

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  query?: Record<string, string | number | boolean | undefined>
  body?: unknown
  /** Send the partner key (X-Partner-API-Key) instead of the organization key. */
  partner?: boolean
  signal?: AbortSignal
}

/** `/api/v1` + path + query string, undefined values left out. */
export function apiUrl(path: string, query: RequestOptions['query'] = {}): string {
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, String(value))
  const search = params.toString()
  return `/api/v1${path}${search ? `?${search}` : ''}`
}

function headers(session: Session, options: RequestOptions): Record<string, string> {
  const result: Record<string, string> = {}
  if (options.partner) result['x-partner-api-key'] = session.partnerKey ?? ''
  else result['x-api-key'] = session.apiKey
  if (options.body !== undefined) result['content-type'] = 'application/json'
  return result
}

async function send(session: Session, path: string, options: RequestOptions): Promise<Response> {
  let response: Response
  try {
    response = await fetch(apiUrl(path, options.query), {
      method: options.method ?? 'GET',
      headers: headers(session, options),
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: options.signal,
    })
  } catch (error) {
    if ((error as Error).name === 'AbortError') throw error
    throw new ApiError(0, 'network', 'The server could not be reached: check your connection')
  }
  if (!response.ok) {
    const body = (await response.json().catch(() => undefined)) as ErrorBody | undefined
    throw describeError(response.status, body)
  }
  return response
}

/**
 * Calls the API and returns its JSON (undefined for an empty answer).
 * @example const totals = await request<Totals>(session, `/companies/statistic/${org}/total`, { query })
 */
export async function request<T>(session: Session, path: string, options: RequestOptions = {}): Promise<T> {
  const response = await send(session, path, options)
  const text = await response.text()
  return (text ? JSON.parse(text) : undefined) as T
}

/** Downloads a CSV answer as a file (the key travels in a header, so a plain link cannot). */
export async function download(
  session: Session,
  path: string,
  query: RequestOptions['query'],
  fileName: string,
): Promise<void> {
  const response = await send(session, path, { query })
  const blob = await response.blob()
  const url = URL.createObjectURL(blob)
  const link = document.createElement('a')
  link.href = url
  link.download = fileName
  document.body.append(link)
  link.click()
  link.remove()
  setTimeout(() => URL.revokeObjectURL(url), 10_000)
}
