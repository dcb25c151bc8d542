// Domain events (docs/decisions.md, "Identification": events). An event is stored before anything acts on
// it, under an id made from what it is about, so storing it twice (two processes at once, a replay
// after a crash) keeps one. A dispatcher hands stored events to the job queue and marks them
// dispatched once its consumers ran; a crash in between dispatches it again under the same job id,
// and consumers deduplicate by event id (at-least-once).
import { createHash } from 'node:crypto'
import { createBoundedCache } from '../bounded-cache.js'
import { startPeriodicTask } from '../coordination/periodic.js'
import type { Coordination } from '../coordination/ports.js'
import { nextVersion } from '../ids.js'
import type { Store } from '../store/client.js'

export type EventType =
  | 'visitor.identified'
  | 'visitor.phone_revealed'
  | 'credits.low'
  | 'credits.exhausted'
  | 'subscription.activated'
  | 'subscription.updated'
  | 'subscription.canceled'
  | 'payment.failed'
  | 'invoice.paid'
  | 'list.refreshed'
  | 'icp.matched'

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
  /**
   * The stored payload and time, read by the dispatcher for every job it queues (one read per pass,
   * not one per consumer). Absent from jobs queued before they were carried: consumers read them.
   */
  payload?: string | undefined
  createdAt?: string | undefined
}

/** An event as its consumers take it: its job (the type any string, for consumers that test it). */
export type ConsumedEvent = Omit<EventJob, 'type'> & { type: string }

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

/**
 * The payloads of the events this process stored lately, until its dispatcher queues them, so the
 * dispatcher reads none of them back: `events` is ordered by event id in 8,192-row granules, and
 * a read of a batch of random ids goes through nearly every stored payload. Events another
 * process stored, or stored before a restart, are read from the store.
 */
const recentPayloads = createBoundedCache<EventPayload>(5_000)

/** What a job carries of its stored event. */
interface EventPayload {
  payload: string
  created_at: string
}

/** Stores events (one insert); storing an event again keeps one. */
export async function appendEvents(store: Store, events: readonly StoredEvent[]): Promise<void> {
  if (events.length === 0) return
  await store.insert(
    'events',
    events.map((event) => ({ ...event, dispatched_at: null, version: nextVersion() })),
  )
  for (const event of events) {
    recentPayloads.set(event.event_id, { payload: event.payload, created_at: event.created_at })
  }
}

/**
 * Stores the events whose ids are not stored yet. For producers that may replay (billing, ICP
 * matches): storing an event again rewrites its payload for nothing, and an event marked before
 * marks had their own table (migration 0018) would lose its mark, so its consumers would run again.
 */
export async function appendNewEvents(store: Store, events: readonly StoredEvent[]): Promise<void> {
  if (events.length === 0) return
  const stored = new Set(
    (
      await store.query<{ id: string }>(
        'SELECT DISTINCT toString(event_id) AS id FROM events WHERE event_id IN {ids:Array(UUID)}',
        { ids: events.map((event) => event.event_id) },
      )
    ).map((row) => row.id),
  )
  await appendEvents(
    store,
    events.filter((event) => !stored.has(event.event_id)),
  )
}

/**
 * A queued event's payload and when it happened: carried by its job, else read (every version of
 * the event holds the same); undefined when the event is unknown.
 */
export async function storedEventOf(
  store: Store,
  job: Pick<EventJob, 'eventId' | 'payload' | 'createdAt'>,
): Promise<EventPayload | undefined> {
  if (job.payload !== undefined && job.createdAt !== undefined) {
    return { payload: job.payload, created_at: job.createdAt }
  }
  return (await readEventPayloads(store, [job.eventId])).get(job.eventId)
}

/** Stored events' payloads and times by id, in one read (every version of an event holds the same). */
async function readEventPayloads(
  store: Store,
  eventIds: readonly string[],
): Promise<Map<string, EventPayload>> {
  if (eventIds.length === 0) return new Map()
  const rows = await store.query<EventPayload & { id: string }>(
    `SELECT toString(event_id) AS id, payload, created_at FROM events
     WHERE event_id IN {ids:Array(UUID)} LIMIT 1 BY event_id`,
    { ids: [...eventIds] },
  )
  return new Map(rows.map(({ id, ...event }) => [id, event]))
}

/** The stored events, oldest first (tests and the admin look at them). */
export async function readEvents(
  store: Store,
  filter: { organizationId: string; type?: EventType },
): Promise<(StoredEvent & { dispatched_at: string | null })[]> {
  return store.query(
    `SELECT e.event_id AS event_id, e.type AS type, e.organization_id AS organization_id,
       e.visitor_id AS visitor_id, e.payload AS payload, e.created_at AS created_at,
       if(isNull(e.dispatched_at), m.dispatched_at, e.dispatched_at) AS dispatched_at
     FROM (SELECT * FROM events FINAL
       WHERE organization_id = {organizationId:UUID} ${filter.type ? 'AND type = {type:String}' : ''}) AS e
     LEFT JOIN (SELECT event_id, min(dispatched_at) AS dispatched_at FROM event_marks GROUP BY event_id) AS m
       ON m.event_id = e.event_id
     ORDER BY e.created_at, e.event_id
     SETTINGS join_use_nulls = 1`,
    { organizationId: filter.organizationId, ...(filter.type ? { type: filter.type } : {}) },
  )
}

/** How many stored events one dispatch pass reads: the most that wait on the job queue at once. */
const dispatchPage = 1000
/** Tries of an event's job, and the first backoff (doubling); after the last try the event is given up. */
export interface EventRetry {
  attempts: number
  delayMs: number
}
const defaultRetry: EventRetry = { attempts: 5, delayMs: 1000 }

/**
 * Hands stored events not yet dispatched to the job queue (job id = event id), skipping those in
 * `inFlight` (queued by this process, not yet marked). An event is marked dispatched only once its
 * consumers ran (see `startEventProcessing`): an in-memory queue dies with its process, and its
 * events are then queued again by the next process's first pass. Returns how many it queued.
 */
export async function dispatchEvents(
  deps: { store: Store; coordination: Coordination },
  inFlight: InFlightEvents = new InFlightEvents(),
  retry: EventRetry = defaultRetry,
): Promise<number> {
  const pending = await deps.store.query<Omit<StoredEvent, 'payload' | 'created_at'>>(
    `SELECT event_id, type, organization_id, visitor_id
     FROM events FINAL
     WHERE dispatched_at IS NULL AND event_id NOT IN (SELECT event_id FROM event_marks)
     ORDER BY created_at, event_id LIMIT {limit:UInt32}`,
    { limit: dispatchPage },
  )
  inFlight.retainOnly(pending.map((event) => event.event_id))
  const toQueue = pending.filter((event) => !inFlight.has(event.event_id))
  if (toQueue.length === 0) return 0
  // The payloads carried by the jobs, so no consumer reads the event again: those this process
  // stored from memory, the others in one read.
  const stored = new Map<string, EventPayload>()
  for (const { event_id: id } of toQueue) {
    const recent = recentPayloads.take(id)
    if (recent) stored.set(id, recent)
  }
  const unread = toQueue.map((event) => event.event_id).filter((id) => !stored.has(id))
  for (const [id, event] of await readEventPayloads(deps.store, unread)) stored.set(id, event)
  for (const event of toQueue) {
    const { payload, created_at: createdAt } = stored.get(event.event_id) ?? {}
    const job: EventJob = {
      eventId: event.event_id,
      type: event.type,
      organizationId: event.organization_id,
      visitorId: event.visitor_id,
      payload,
      createdAt,
    }
    await deps.coordination.jobs.add(eventJobName, job, {
      jobId: `event:${event.event_id}`,
      attempts: retry.attempts,
      backoff: { type: 'exponential', delayMs: retry.delayMs },
    })
    inFlight.add(event.event_id)
  }
  return toQueue.length
}

/**
 * Events this process queued and has not seen marked yet. One left longer than `requeueAfterMs`
 * (its job lost with another process's memory, or still waiting behind a long queue) is queued
 * again: the job id keeps one while it is pending, consumers deduplicate by event id.
 */
export class InFlightEvents {
  readonly #queuedAt = new Map<string, number>()
  constructor(readonly requeueAfterMs = 5 * 60_000) {}

  has(eventId: string): boolean {
    const at = this.#queuedAt.get(eventId)
    return at !== undefined && Date.now() - at < this.requeueAfterMs
  }

  add(eventId: string): void {
    this.#queuedAt.set(eventId, Date.now())
  }

  /** Forgets every event not among the ones still waiting (marked since, by any process). */
  retainOnly(waiting: readonly string[]): void {
    const keep = new Set(waiting)
    for (const eventId of this.#queuedAt.keys()) if (!keep.has(eventId)) this.#queuedAt.delete(eventId)
  }

  get size(): number {
    return this.#queuedAt.size
  }
}

/** Marks events dispatched: one row each in `event_marks` (one insert, nothing read). */
export async function markEventsDispatched(store: Store, eventIds: readonly string[]): Promise<void> {
  if (eventIds.length === 0) return
  const at = new Date().toISOString()
  await store.insert(
    'event_marks',
    eventIds.map((eventId) => ({ event_id: eventId, dispatched_at: at })),
  )
}

export interface EventProcessing {
  /** Stops dispatching, lets the consumers under way finish, and writes their marks. */
  stop(): Promise<void>
}

export interface EventProcessingOptions {
  /** How often stored events are dispatched (and consumers' marks written). */
  intervalMs?: number
  /** Events consumed at once by this process. */
  concurrency?: number
  requeueAfterMs?: number
  retry?: EventRetry
}

/**
 * Runs stored events through `consume` (webhooks, emails, enrichment): the dispatcher, in the
 * process that holds its lock, queues them; this process's consumer runs them `concurrency` at a
 * time and marks each one dispatched once `consume` succeeded, or failed for the last time (logged:
 * a poison event must not come back forever). Marks are written in batches every `intervalMs` and
 * at stop. At least once: a crash before the mark runs `consume` again for that event.
 */
export function startEventProcessing(
  deps: {
    store: Store
    coordination: Coordination
    log: { warn(object: object, message: string): void; error(object: object, message: string): void }
  },
  consume: (job: EventJob) => Promise<void>,
  options: EventProcessingOptions = {},
): EventProcessing {
  const intervalMs = options.intervalMs ?? 1000
  const inFlight = new InFlightEvents(options.requeueAfterMs)
  const retry = options.retry ?? defaultRetry
  const consumed = new Set<string>()
  const running = new Set<Promise<void>>()
  let stopping = false

  const writeMarks = async () => {
    if (consumed.size === 0) return
    const eventIds = [...consumed]
    await markEventsDispatched(deps.store, eventIds)
    for (const eventId of eventIds) consumed.delete(eventId)
  }
  const onError = (message: string) => (error: unknown) => deps.log.warn({ err: error }, message)

  deps.coordination.jobs.process<EventJob>(
    eventJobName,
    async (job) => {
      // A job that starts while stopping goes back (memory: to the store, unmarked; Redis: to the queue).
      if (stopping) throw new Error('events: stopping')
      const run = consume(job.data)
      const settled = run.then(
        () => {},
        () => {},
      )
      running.add(settled)
      try {
        await run
        consumed.add(job.data.eventId)
      } catch (error) {
        if (job.attempt >= retry.attempts) {
          deps.log.error(
            { err: error, eventId: job.data.eventId, type: job.data.type },
            'events: consumer gave up',
          )
          consumed.add(job.data.eventId)
        }
        throw error
      } finally {
        running.delete(settled)
      }
    },
    { concurrency: options.concurrency ?? 4 },
  )
  const dispatcher = startPeriodicTask({
    locks: deps.coordination.locks,
    lockName: 'events:dispatch',
    lockTtlMs: Math.max(30_000, intervalMs * 10),
    intervalMs,
    async pass() {
      // Marks first, so the events consumed here since the last pass are not queued again.
      await writeMarks()
      await dispatchEvents(deps, inFlight, retry)
    },
    onError: onError('events: dispatch failed; the next pass retries'),
  })
  // Consumers run in every worker; their marks are written by their own process.
  const marks = setInterval(() => {
    writeMarks().catch(onError('events: writing marks failed; the next pass retries'))
  }, intervalMs)
  marks.unref()
  return {
    async stop() {
      stopping = true
      await dispatcher.stop()
      clearInterval(marks)
      while (running.size > 0) await Promise.allSettled([...running])
      await writeMarks()
    },
  }
}
