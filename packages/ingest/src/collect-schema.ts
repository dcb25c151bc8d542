import { trackingKeyPattern } from '@visitor-id/core/api-keys'
import { wire, wireEvents } from '@visitor-id/pixel'
import { z } from 'zod'

// The schema checks types and hard bounds only; it stays lean because every hit goes through
// it. Cutting strings to their column size and clamping numbers happen when the row is built
// (page-view-row.ts): a long title must not cost the page view.
const text = z.string().max(8192)
const number = z.number().finite()
const uuid = z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i)
const httpUrl = z
  .string()
  .max(4096)
  .refine((value) => /^https?:\/\//i.test(value) && URL.canParse(value), 'Invalid URL (http or https)')

/** One pixel hit on the wire (short keys from the pixel package). */
export const hitSchema = z.object({
  [wire.trackingKey]: z.string().max(64),
  [wire.event]: z.enum(Object.keys(wireEvents) as [keyof typeof wireEvents, ...(keyof typeof wireEvents)[]]),
  [wire.visitorId]: uuid,
  [wire.sessionId]: uuid,
  [wire.url]: httpUrl,
  [wire.referrer]: text.optional(),
  [wire.title]: text.optional(),
  [wire.screenWidth]: number.optional(),
  [wire.screenHeight]: number.optional(),
  [wire.language]: text.optional(),
  [wire.timezone]: text.optional(),
  [wire.clientTime]: number.optional(),
  [wire.engagedMs]: number.optional(),
  [wire.maxScroll]: number.optional(),
  // An email, or the lowercase hex SHA-256 of a normalized one (a site that never sends plain
  // addresses): both identify (docs/decisions.md, "Identification").
  [wire.email]: z
    .string()
    .trim()
    .toLowerCase()
    .max(320)
    .pipe(z.union([z.email(), z.string().regex(/^[0-9a-f]{64}$/)]))
    .optional(),
  [wire.webdriver]: z.union([z.boolean(), z.number()]).optional(),
  // Bits of denied consent (pixel wire.ts); unknown higher bits, from a newer pixel, are kept out
  // of the way rather than refused.
  [wire.consent]: z.number().int().min(0).max(255).optional(),
})

export type Hit = z.infer<typeof hitSchema>

/** A body: one hit or a small batch of them. */
export const hitBatchSchema = z.array(hitSchema).min(1).max(20)

/** Validates a body; an array is a batch. Picking the schema first keeps error paths precise. */
export function parseCollectBody(body: unknown) {
  return Array.isArray(body) ? hitBatchSchema.safeParse(body) : hitSchema.safeParse(body)
}

/** True when a string can be a tracking key at all (checked before any lookup). */
export const isTrackingKeyShape = (key: string) => trackingKeyPattern.test(key)
