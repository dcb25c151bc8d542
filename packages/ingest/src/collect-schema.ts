import { wire, wireEvents } from '@visitor-id/pixel'
import { z } from 'zod'

const text = (max: number) => z.string().max(max)
const uuid = z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i)

/** One pixel hit on the wire (short keys from the pixel package). */
export const hitSchema = z.object({
  [wire.trackingKey]: text(64),
  [wire.event]: z.enum(Object.keys(wireEvents) as [keyof typeof wireEvents, ...(keyof typeof wireEvents)[]]),
  [wire.visitorId]: uuid,
  [wire.sessionId]: uuid,
  [wire.url]: z.url({ protocol: /^https?$/ }).max(2048),
  [wire.referrer]: text(2048).optional(),
  [wire.title]: text(512).optional(),
  [wire.screenWidth]: z.number().int().min(0).max(65535).optional(),
  [wire.screenHeight]: z.number().int().min(0).max(65535).optional(),
  [wire.language]: text(35).optional(),
  [wire.timezone]: text(64).optional(),
  [wire.clientTime]: z.number().optional(),
  [wire.engagedMs]: z.number().int().min(0).max(86_400_000).optional(),
  [wire.maxScroll]: z.number().int().min(0).max(100).optional(),
  [wire.email]: text(320).optional(),
})

export type Hit = z.infer<typeof hitSchema>

/** A body: one hit or a small batch of them. */
export const hitBatchSchema = z.array(hitSchema).min(1).max(20)

/** Validates a body; an array is a batch. Picking the schema first keeps error paths precise. */
export function parseCollectBody(body: unknown) {
  return Array.isArray(body) ? hitBatchSchema.safeParse(body) : hitSchema.safeParse(body)
}
