// Domain events (DESIGN.md, "Identification": Events). An event is stored before anything acts on
// it, under an id made from what it is about, so storing it twice (two processes at once, a replay
// after a crash) keeps one. A dispatcher hands stored events to the job queue and marks them
// dispatched; a crash in between dispatches again under the same job id, and consumers deduplicate
// by event id (at-least-once).
import { createHash } from 'node:crypto'
import { type PeriodicTask, startPeriodicTask } from '../coordination/periodic.js'
import type { Coordination } from '../coordination/ports.js'
import { nextVersion } from '../ids.js'
import type { Store } from '../store/client.js'

export type EventType = 'visitor.identified' | 'visitor.phone_revealed' | 'credits.low' | 'credits.exhausted'

export interface StoredEvent {
  event_id: string
  type: EventType
  organization_id: string
  visitor_id: string | null
  /** The event's payload as JSON (for visitor events: the identification payload). */
  payload: string
  created_at: string
}

/** The job every stored event becomes; its id is the event id. */
export const eventJobName = 'event'

export interface EventJob {
  eventId: string
  type: EventType
  organizationId: string
  /** The visitor a visitor event is about. */
  visitorId?: string | null | undefined
}

/**
 * The id of an event that happens once per subject: a UUID made from the SHA-256 of
 * `type:organization:subject` (version and variant bits set), the same in every process.
 * @example eventIdOf('visitor.identified', organizationId, visitorId)
 */
export function eventIdOf(type: EventType, organizationId: string, subject: string): string {
  const hex = createHash('sha256').update(`${type}:${organizationId}:${subject}`).digest('hex')
  const variant = ((Number.parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16)
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`
}

/** Stores events (one insert); storing an event again keeps one. */
export async function appendEvents(store: Store, events: readonly StoredEvent[]): Promise<void> {
  if (events.length === 0) return
  await store.insert(
    'events',
    events.map((event) => ({ ...event, dispatched_at: null, version: nextVersion() })),
  )
}

/** A stored event's payload, as stored (every version holds the same); undefined when unknown. */
export async function readEventPayload(store: Store, eventId: string): Promise<string | undefined> {
  const [event] = await store.query<{ payload: string }>(
    'SELECT payload FROM events WHERE event_id = {eventId:UUID} LIMIT 1',
    { eventId },
  )
  return event?.payload
}

/** The stored events, oldest first (tests and the admin look at them). */
export async function readEvents(
  store: Store,
  filter: { organizationId: string; type?: EventType },
): Promise<(StoredEvent & { dispatched_at: string | null })[]> {
  return store.query(
    `SELECT event_id, type, organization_id, visitor_id, payload, created_at, dispatched_at
     FROM events FINAL
     WHERE organization_id = {organizationId:UUID} ${filter.type ? 'AND type = {type:String}' : ''}
     ORDER BY created_at, event_id`,
    { organizationId: filter.organizationId, ...(filter.type ? { type: filter.type } : {}) },
  )
}

/**
 * Hands every stored event not yet dispatched to the job queue (job id = event id), then marks it
 * dispatched. Returns how many it dispatched. Safe to run in several processes at once (the job id
 * dedupes pending jobs; consumers dedupe by event id).
 */
export async function dispatchEvents(
  deps: { store: Store; coordination: Coordination },
  limit = 1000,
): Promise<number> {
  const pending = await deps.store.query<StoredEvent>(
    `SELECT event_id, type, organization_id, visitor_id, payload, created_at
     FROM events FINAL WHERE dispatched_at IS NULL ORDER BY created_at LIMIT {limit:UInt32}`,
    { limit },
  )
  if (pending.length === 0) return 0
  for (const event of pending) {
    const job: EventJob = {
      eventId: event.event_id,
      type: event.type,
      organizationId: event.organization_id,
      visitorId: event.visitor_id,
    }
    await deps.coordination.jobs.add(eventJobName, job, {
      jobId: `event:${event.event_id}`,
      attempts: 5,
      backoff: { type: 'exponential', delayMs: 1000 },
    })
  }
  const at = new Date().toISOString()
  await deps.store.insert(
    'events',
    pending.map((event) => ({ ...event, dispatched_at: at, version: nextVersion() })),
  )
  return pending.length
}

export type EventDispatcher = PeriodicTask

/** Dispatches stored events every `intervalMs` in the process that holds the dispatch lock. */
export function startEventDispatcher(
  deps: {
    store: Store
    coordination: Coordination
    log: { warn(object: object, message: string): void }
  },
  intervalMs = 1000,
): EventDispatcher {
  return startPeriodicTask({
    locks: deps.coordination.locks,
    lockName: 'events:dispatch',
    lockTtlMs: Math.max(30_000, intervalMs * 10),
    intervalMs,
    async pass() {
      while ((await dispatchEvents(deps)) === 1000) {}
    },
    onError: (error) => deps.log.warn({ err: error }, 'events: dispatch failed; the next pass retries'),
  })
}
