// Hits from the <noscript> image. Without JavaScript there is no cookie of ours and no id in
// storage, so the visitor id is derived from what the request says (IP, user agent, key) and
// the day; it changes daily and cannot be reversed to the IP.
import { createHash } from 'node:crypto'
import { wire } from '@visitor-id/pixel'
import { type Hit, hitSchema } from './collect-schema.js'
import type { HitRequest } from './pipeline/index.js'

/** A UUID-shaped id from a digest. */
function digestId(...parts: string[]): string {
  const hex = createHash('sha256').update(parts.join('\u0000')).digest('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`
}

/** The page-view hit of a noscript request, or undefined when it lacks a key or a page URL. */
export function noscriptHit(trackingKey: unknown, request: HitRequest): Hit | undefined {
  if (typeof trackingKey !== 'string' || !request.referer) return undefined
  const day = new Date(request.receivedAt).toISOString().slice(0, 10)
  const visitor = digestId('noscript', trackingKey, request.ip, request.userAgent, day)
  const parsed = hitSchema.safeParse({
    [wire.trackingKey]: trackingKey,
    [wire.event]: 'pv',
    [wire.visitorId]: visitor,
    [wire.sessionId]: digestId('session', visitor),
    [wire.url]: request.referer,
  })
  return parsed.success ? parsed.data : undefined
}
