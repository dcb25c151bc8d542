// Stripe's error bodies: a handler throws one, the server answers it with its status.

/** Thrown by a handler: answered with Stripe's error body. */
export class StripeServerError extends Error {
  constructor(
    readonly status: number,
    readonly body: { type: string; message: string; code?: string; param?: string },
  ) {
    super(body.message)
  }
}

/** The object of the URL does not exist. */
export const missing = (kind: string, id: string) =>
  new StripeServerError(404, {
    type: 'invalid_request_error',
    code: 'resource_missing',
    param: 'id',
    message: `No such ${kind}: '${id}'`,
  })

/** A parameter names an object that does not exist. */
export const missingParam = (param: string, id: string) =>
  new StripeServerError(400, {
    type: 'invalid_request_error',
    code: 'resource_missing',
    param,
    message: `No such ${param}: '${id}'`,
  })

export const parameterMissing = (param: string) =>
  new StripeServerError(400, {
    type: 'invalid_request_error',
    code: 'parameter_missing',
    param,
    message: `Missing required param: ${param}.`,
  })

/** The object of the URL, or Stripe's 404. */
export function find<T>(map: Map<string, T>, id: string, kind: string): T {
  const found = map.get(id)
  if (!found) throw missing(kind, id)
  return found
}
