// The Graph API's error bodies, `{ error: { message, type, code, error_subcode, fbtrace_id } }`: a
// handler throws a GraphError, the server answers it with its status. The words are Meta's where
// they are known from its documentation and answers; the parameter errors of this fake say what is
// wrong in Meta's `(#100) ...` form, Meta not documenting their exact words.
import type { InjectedFailure } from './state.js'

export interface GraphErrorBody {
  message: string
  type: string
  code: number
  error_subcode?: number
  error_user_title?: string
  error_user_msg?: string
  is_transient?: boolean
}

/** Thrown by a handler: answered with Meta's error body. */
export class GraphError extends Error {
  constructor(
    readonly status: number,
    readonly body: GraphErrorBody,
    readonly headers: Record<string, string> = {},
  ) {
    super(body.message)
  }
}

const oauth = (code: number, message: string, subcode?: number, status = 400) =>
  new GraphError(status, {
    message,
    type: 'OAuthException',
    code,
    ...(subcode ? { error_subcode: subcode } : {}),
  })

/** A path the pinned version does not serve, a wrong version included. */
export const unknownPath = (rest: string) => oauth(2500, `Unknown path components: ${rest}`)

export const tokenRequired = () => oauth(104, 'An access token is required to request this resource.')

/** Meta's 190 carries a `WWW-Authenticate` header besides its body. */
function tokenRefused(message: string, subcode?: number): GraphError {
  const error = oauth(190, message, subcode)
  return new GraphError(error.status, error.body, {
    'www-authenticate': `OAuth "Facebook Platform" "invalid_token" "${message.replace(/"/g, "'")}"`,
  })
}

export const unparsableToken = () => tokenRefused('Invalid OAuth access token - Cannot parse access token')

export const expiredToken = (expiredAt: number, now: number) =>
  tokenRefused(
    `Error validating access token: Session has expired on ${new Date(expiredAt).toUTCString()}. ` +
      `The current time is ${new Date(now).toUTCString()}.`,
    463,
  )

export const revokedToken = (appId: string) =>
  tokenRefused(`Error validating access token: The user has not authorized application ${appId}.`, 458)

export const proofMissing = () =>
  new GraphError(400, {
    message: 'API calls from the server require an appsecret_proof argument',
    type: 'GraphMethodException',
    code: 100,
  })

export const proofInvalid = () =>
  new GraphError(400, {
    message: 'Invalid appsecret_proof provided in the API argument',
    type: 'GraphMethodException',
    code: 100,
  })

export const invalidParameter = (message: string) => oauth(100, `(#100) ${message}`)

export const missingPermission = (permission: string) =>
  new GraphError(403, {
    message: `(#200) Requires ${permission} permission to manage the object`,
    type: 'OAuthException',
    code: 200,
  })

/** An object that does not exist, is out of the token's reach, or has no such edge. */
export const unsupported = (method: string, id: string) =>
  new GraphError(400, {
    message:
      `Unsupported ${method.toLowerCase()} request. Object with ID '${id}' does not exist, cannot be loaded ` +
      'due to missing permissions, or does not support this operation. Please read the Graph API documentation ' +
      'at https://developers.facebook.com/docs/graph-api',
    type: 'GraphMethodException',
    code: 100,
    error_subcode: 33,
  })

export const termsNotAccepted = (accountId: string) =>
  oauth(
    2663,
    `Terms of service has not been accepted. To accept, go to https://www.facebook.com/customaudiences/app/tos/?act=${accountId}`,
  )

/** The code exchange's refusals of the app's credentials. */
export const invalidAppId = () => oauth(101, 'Error validating application. Invalid application ID.')
export const invalidClientSecret = () => oauth(1, 'Error validating client secret.')

export const codeRefused = (subcode: number | undefined, message: string) => oauth(100, message, subcode)

/** Meta's words for the failures tests ask for by code. */
const knownFailures: Record<
  number,
  { message: string; type?: string; status?: number; transient?: boolean }
> = {
  1: { message: 'An unknown error has occurred.', status: 500, transient: true },
  2: {
    message: 'An unexpected error has occurred. Please retry your request later.',
    status: 503,
    transient: true,
  },
  4: { message: '(#4) Application request limit reached', transient: true },
  17: { message: '(#17) User request limit reached', transient: true },
  32: { message: '(#32) Page request limit reached', transient: true },
  341: { message: '(#341) Application limit reached', transient: true },
  613: { message: '(#613) Calls to this api have exceeded the rate limit.', transient: true },
  80003: {
    message: '(#80003) There have been too many calls to this ad-account. Wait a bit and try again.',
    transient: true,
  },
  80004: {
    message: '(#80004) There have been too many calls to this ad-account. Wait a bit and try again.',
    transient: true,
  },
  190: {
    message:
      'Error validating access token: The session has been invalidated because the user changed their password.',
  },
  200: { message: '(#200) Permissions error', status: 403 },
  294: {
    message: '(#294) Managing advertisements requires the extended permission ads_management',
    status: 403,
  },
  2650: { message: '(#2650) Failed to update the custom audience' },
  2663: { message: 'Terms of service has not been accepted.' },
}

/** The error of an injected failure: Meta's words for its code unless the test gave its own. */
export function injectedError(failure: InjectedFailure): GraphError {
  const known = knownFailures[failure.code]
  return new GraphError(
    failure.status ?? known?.status ?? 400,
    {
      message: failure.message ?? known?.message ?? `(#${failure.code}) An error`,
      type: failure.type ?? known?.type ?? 'OAuthException',
      code: failure.code,
      ...(failure.subcode !== undefined ? { error_subcode: failure.subcode } : {}),
      ...(failure.userTitle ? { error_user_title: failure.userTitle } : {}),
      ...(failure.userMessage ? { error_user_msg: failure.userMessage } : {}),
      ...((failure.isTransient ?? known?.transient) !== undefined
        ? { is_transient: failure.isTransient ?? known?.transient }
        : {}),
    },
    failure.headers,
  )
}
