// Meta's Graph API failures, turned into what the audience sync does about them. Meta answers a
// failure with `{ error: { message, type, code, error_subcode, error_user_title, error_user_msg,
// is_transient, fbtrace_id } }` ("Handling Errors" of the Graph API, and the Marketing API's error
// reference). The `code` decides, not the HTTP status: Meta answers 400 for most failures, a rate
// limit included.
import { AdsPlatformError } from './ads-platform.js'

export interface MetaErrorBody {
  message?: unknown
  type?: unknown
  code?: unknown
  error_subcode?: unknown
  error_user_title?: unknown
  error_user_msg?: unknown
  is_transient?: unknown
  fbtrace_id?: unknown
}

/**
 * Throttling, by code: 4 (the app's calls), 17 (the user's), 32 (a page's), 341 (the app's limit),
 * 613 (a rate limit, e.g. an ad account's), and the business use case limits 80000-80014 (80003
 * custom audiences, 80004 ads management).
 */
export function isMetaThrottle(code: number): boolean {
  return [4, 17, 32, 341, 613].includes(code) || (code >= 80_000 && code <= 80_014)
}

/** Meta's own passing faults: 1 (an unknown error), 2 (the service is unavailable). */
const isMetaTemporary = (code: number) => code === 1 || code === 2

/** The token is expired, revoked or invalid (190; 102 is the older session error). */
const isMetaTokenRefused = (code: number) => code === 190 || code === 102

/** Permission errors: 10 (the app lacks a permission), 200-299 (the user or the token lacks one). */
const isMetaPermission = (code: number) => code === 10 || (code >= 200 && code <= 299)

/** The ad account has not accepted the Custom Audience terms (2663; 2655 in older versions). */
const isMetaTermsMissing = (code: number) => code === 2663 || code === 2655

/** Meta refused the app's own credentials (code 1 "Error validating client secret", 101 a bad app id). */
const isAppCredentialError = (code: number, message: unknown) =>
  code === 101 || (code === 1 && typeof message === 'string' && /client secret|application/i.test(message))

/** Why Meta refused a token, by its `error_subcode`. */
const tokenReasons: Record<number, string> = {
  458: 'the person removed the app',
  459: 'the Facebook account needs a security check',
  460: 'the password of the Facebook account changed',
  463: 'the token expired',
  464: 'the Facebook account is not confirmed',
  467: 'the token is no longer valid',
  492: 'the session is no longer valid',
}

/**
 * The failure of a Graph API answer. `secrets` (the token, its proof, the app secret) are cut out
 * of Meta's words before they go anywhere: a message is shown and logged.
 */
export function metaFailure(
  status: number,
  body: unknown,
  headers: Headers,
  secrets: readonly string[],
): AdsPlatformError {
  const error = errorOf(body)
  if (!error) {
    const kind = status >= 500 || status === 429 ? 'retry_later' : 'report'
    return new AdsPlatformError(kind, `Meta's Graph API answered ${status} without an error body`, {
      status,
      retryAfterMs: retryAfterMs(headers),
    })
  }
  const code = typeof error.code === 'number' ? error.code : Number(error.code)
  const subcode = typeof error.error_subcode === 'number' ? error.error_subcode : undefined
  const said = metaWords(error, secrets)
  const details = { status, code }
  if (isAppCredentialError(code, error.message)) {
    // Code 1 is also Meta's "unknown error": without this, a wrong secret would be retried forever.
    return new AdsPlatformError(
      'report',
      `Meta refused the app's id or secret: check the Meta app settings (${said})`,
      details,
    )
  }
  if (isMetaThrottle(code) || isMetaTemporary(code) || error.is_transient === true) {
    const why = isMetaThrottle(code) ? 'Meta is throttling the calls' : 'Meta had a passing fault'
    return new AdsPlatformError('retry_later', `${why} (${said}); the sync resumes later`, {
      ...details,
      retryAfterMs: retryAfterMs(headers),
    })
  }
  if (isMetaTokenRefused(code)) {
    const reason = (subcode !== undefined && tokenReasons[subcode]) || 'the token was refused'
    return new AdsPlatformError(
      'reauthorize',
      `Meta refused the connection (${reason}): reconnect the Meta integration (${said})`,
      details,
    )
  }
  return new AdsPlatformError('report', reportWords(code, subcode, said), details)
}

/**
 * Meta's refusal of a login step: the code exchange (`code`) or the long-lived token trade
 * (`trade`) at /oauth/access_token, both answered in the Graph API's error shape, not RFC 6749's.
 * The refusals of the code itself (expired 100/36007, used 100/36009, a redirect URI Meta does not
 * take 191 or 100/36008) say what the person does next, in Meta's words too; the others read as any
 * Graph API failure (a refused token, the app's id or secret, throttling).
 */
export function metaLoginFailure(
  step: 'code' | 'trade',
  status: number,
  body: unknown,
  secrets: readonly string[],
  headers: Headers = new Headers(),
): AdsPlatformError {
  const error = errorOf(body)
  const code = Number(error?.code)
  const subcode = Number(error?.error_subcode)
  const advice = error ? loginAdvice(step, code, subcode) : undefined
  if (!error || !advice) return metaFailure(status, body, headers, secrets)
  return new AdsPlatformError('report', `${advice} (${metaWords(error, secrets)})`, { status, code })
}

function loginAdvice(step: 'code' | 'trade', code: number, subcode: number): string | undefined {
  if (code === 191 || (code === 100 && subcode === 36008)) {
    return (
      "Meta refused this server's redirect URI: the Meta app's Valid OAuth Redirect URIs must list " +
      'PUBLIC_URL/integrations/callback/<type> exactly, and PUBLIC_URL be the address browsers use'
    )
  }
  if (step !== 'code' || code !== 100) return undefined
  if (subcode === 36007) {
    return 'The Meta authorization code expired before this server could use it: start the installation again'
  }
  if (subcode === 36009) {
    return (
      'This Meta authorization code was already used (the page was reloaded or opened twice): start ' +
      'the installation again'
    )
  }
  return 'Meta refused the authorization code: start the installation again'
}

/** What a person reads about a failure that is neither throttling nor a refused token. */
function reportWords(code: number, subcode: number | undefined, said: string): string {
  if (isMetaTermsMissing(code)) {
    return (
      "The ad account has not accepted Meta's Custom Audience terms: an admin of the ad account accepts " +
      `them in Meta Ads Manager (Audiences), then the sync runs again (${said})`
    )
  }
  if (isMetaPermission(code)) {
    return (
      'Meta refused for lack of permission: the person who connected needs the ads_management ' +
      `permission and a role on the ad account that lets them manage its audiences (${said})`
    )
  }
  if (code === 2650) {
    return `Meta could not update the custom audience (it may have been deleted or restricted) (${said})`
  }
  if (code === 100 && subcode === 33) {
    return `Meta does not let the connected person reach this ad account or audience (${said})`
  }
  if (code === 2500) {
    return `Meta does not know this request: check the Graph API version setting (${said})`
  }
  return `Meta refused the request (${said})`
}

/** Meta's own words: the person-facing ones when Meta gives them, its code and trace id. */
function metaWords(error: MetaErrorBody, secrets: readonly string[]): string {
  const title = typeof error.error_user_title === 'string' ? error.error_user_title : ''
  const userMessage = typeof error.error_user_msg === 'string' ? error.error_user_msg : ''
  const message = typeof error.message === 'string' ? error.message : 'no message'
  const words = userMessage ? `${title ? `${title}: ` : ''}${userMessage}` : message
  const subcode = error.error_subcode === undefined ? '' : `/${String(error.error_subcode)}`
  const trace = typeof error.fbtrace_id === 'string' ? `, trace ${error.fbtrace_id}` : ''
  return redact(`Meta: ${words.slice(0, 400)} [code ${String(error.code)}${subcode}${trace}]`, secrets)
}

function redact(text: string, secrets: readonly string[]): string {
  return secrets
    .filter((s) => s.length >= 8)
    .reduce((out, secret) => out.split(secret).join('[redacted]'), text)
}

function errorOf(body: unknown): MetaErrorBody | undefined {
  if (typeof body !== 'object' || body === null || !('error' in body)) return undefined
  const error = (body as { error: unknown }).error
  return typeof error === 'object' && error !== null ? (error as MetaErrorBody) : undefined
}

/**
 * How long Meta asks to wait, from its usage headers: `X-Business-Use-Case-Usage` gives
 * `estimated_time_to_regain_access` in minutes per business and use case, `X-Ad-Account-Usage`
 * gives `reset_time_duration` in seconds; a plain `Retry-After` in seconds is read too. The longest
 * wins; undefined when none says (the sync then backs off on its own).
 */
export function retryAfterMs(headers: Headers): number | undefined {
  const waits: number[] = []
  const business = parseJson(headers.get('x-business-use-case-usage'))
  if (business && typeof business === 'object') {
    for (const uses of Object.values(business)) {
      for (const use of Array.isArray(uses) ? uses : []) {
        const minutes = Number(
          (use as { estimated_time_to_regain_access?: unknown }).estimated_time_to_regain_access,
        )
        if (minutes > 0) waits.push(minutes * 60_000)
      }
    }
  }
  const account = parseJson(headers.get('x-ad-account-usage')) as
    | { reset_time_duration?: unknown }
    | undefined
  const resetSeconds = Number(account?.reset_time_duration)
  if (resetSeconds > 0) waits.push(resetSeconds * 1000)
  const retryAfter = Number(headers.get('retry-after'))
  if (retryAfter > 0) waits.push(retryAfter * 1000)
  return waits.length > 0 ? Math.max(...waits) : undefined
}

function parseJson(text: string | null): unknown {
  if (!text) return undefined
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}
