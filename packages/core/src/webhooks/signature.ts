import { createHmac } from 'node:crypto'
import { safeEqual } from '../ids.js'

// How a webhook delivery proves it comes from us (docs/decisions.md, "Partner webhooks"). Two schemes,
// both HMAC-SHA256 keyed with the UTF-8 bytes of the partner's secret:
// - `X-Service-Signature`: lowercase hex over the raw body, what the API spec promises;
// - Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64>` over
//   `id.timestamp.body`), for receivers that want replay protection or use a Standard Webhooks
//   library. That spec keys the HMAC with the base64-decoded part of a `whsec_...` secret; our
//   partners configure a plain string, so such a library must be given `whsec_` + base64(secret).

/** What every delivery says about itself, so a receiver's logs and firewalls can tell us apart. */
const userAgent = 'visitor-id-webhooks/1'

/**
 * The headers of one delivery attempt. `timestamp` in Unix seconds (default now).
 *
 * Each attempt is signed afresh (a retry hours later carries a fresh timestamp, so a receiver's
 * replay window still accepts it) while the event id stays the same (so it can deduplicate).
 * Without a secret there is nothing to sign with: no signature headers at all, rather than an
 * HMAC with an empty key that anyone could forge.
 *
 * @example
 * const body = Buffer.from(JSON.stringify(payload))
 * await fetch(url, { method: 'POST', body, headers: webhookHeaders({ body, secret, eventId, eventType }) })
 */
export function webhookHeaders(input: {
  body: Buffer
  secret: string
  eventId: string
  eventType: string
  timestamp?: number
}): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': userAgent,
    'x-service-event-id': input.eventId,
    'x-service-event-type': input.eventType,
  }
  if (input.secret === '') return headers
  // Standard Webhooks timestamps are integer seconds; a fraction would make the receiver sign
  // a different string from ours.
  const timestamp = Math.floor(input.timestamp ?? Date.now() / 1000)
  headers['x-service-signature'] = serviceSignature(input.body, input.secret)
  headers['webhook-id'] = input.eventId
  headers['webhook-timestamp'] = String(timestamp)
  headers['webhook-signature'] = standardSignature(input.eventId, timestamp, input.body, input.secret)
  return headers
}

/**
 * hex HMAC-SHA256 of the raw body (X-Service-Signature).
 *
 * @example serviceSignature('{"a":1}', 'secret') // 64 lowercase hex characters
 */
export function serviceSignature(body: Buffer | string, secret: string): string {
  return createHmac('sha256', secret).update(body).digest('hex')
}

/**
 * Constant-time check of X-Service-Signature (what a receiver does; used by our tests and docs).
 *
 * @example verifyServiceSignature(rawBody, secret, req.headers['x-service-signature'] ?? '')
 */
export function verifyServiceSignature(body: Buffer | string, secret: string, signature: string): boolean {
  // Hex is case-insensitive and header values may carry stray spaces; neither changes the digest.
  return safeEqual(serviceSignature(body, secret), signature.trim().toLowerCase())
}

/** `v1,` + base64 HMAC-SHA256 of `id.timestamp.body` (the Standard Webhooks signed content). */
function standardSignature(id: string, timestamp: number, body: Buffer, secret: string): string {
  // The body goes in as bytes, exactly as sent: re-encoding it as a string could change them.
  const digest = createHmac('sha256', secret).update(`${id}.${timestamp}.`).update(body).digest('base64')
  return `v1,${digest}`
}
