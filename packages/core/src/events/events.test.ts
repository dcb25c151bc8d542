// Stored events reach their consumers at least once: marked only after the consumers ran, so a
// queue lost with its process (the in-memory one) is refilled from the store.

import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createMemoryCoordination } from '../coordination/index.js'
import { newId } from '../ids.js'
import { createStore, type Store } from '../store/client.js'
import { migrate } from '../store/migrate.js'
import { storedTime } from '../store/time.js'
import {
  appendEvents,
  dispatchEvents,
  type EventJob,
  eventIdOf,
  eventJobName,
  InFlightEvents,
  markEventsDispatched,
  readEvents,
  startEventProcessing,
  storedEventOf,
} from './events.js'

const tmp = tempDir('vid-events-')
let store: Store

beforeAll(async () => {
  store = createStore({ database: 'default', dataDir: tmp.dir })
  await migrate(store)
})

afterAll(async () => {
  await store?.close()
  tmp.remove()
})

const event = (organizationId: string, visitorId: string) => ({
  event_id: eventIdOf('visitor.identified', organizationId, visitorId),
  type: 'visitor.identified' as const,
  organization_id: organizationId,
  visitor_id: visitorId,
  payload: JSON.stringify({ visitor_id: visitorId }),
  created_at: new Date().toISOString(),
})

describe('events', () => {
  it('ids are UUIDs made from what the event is about: the same in every process, different per visitor', () => {
    const org = newId()
    const [a, b] = [newId(), newId()]
    expect(eventIdOf('visitor.identified', org, a)).toBe(eventIdOf('visitor.identified', org, a))
    expect(eventIdOf('visitor.identified', org, a)).not.toBe(eventIdOf('visitor.identified', org, b))
    expect(eventIdOf('visitor.identified', org, a)).not.toBe(eventIdOf('visitor.phone_revealed', org, a))
    expect(eventIdOf('visitor.identified', org, a)).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    )
  })

  it('storing an event twice keeps one; dispatch queues each once, and leaves the mark to the consumer', async () => {
    const org = newId()
    const [a, b] = [newId(), newId()]
    await appendEvents(store, [event(org, a), event(org, b)])
    await appendEvents(store, [event(org, a)])
    expect(await readEvents(store, { organizationId: org })).toHaveLength(2)
    const coordination = createMemoryCoordination()
    const jobs: EventJob[] = []
    const inFlight = new InFlightEvents()
    try {
      const handled = new Promise<void>((resolve) => {
        coordination.jobs.process<EventJob>(eventJobName, async (job) => {
          jobs.push(job.data)
          if (jobs.filter((j) => j.organizationId === org).length === 2) resolve()
        })
      })
      expect(await dispatchEvents({ store, coordination }, inFlight)).toBeGreaterThanOrEqual(2)
      await handled
      expect(
        jobs
          .filter((j) => j.organizationId === org)
          .map((job) => job.eventId)
          .sort(),
      ).toEqual([event(org, a).event_id, event(org, b).event_id].sort())
      // Each job carries its event's payload and time, so consumers do not read the event again;
      // a job without them (queued by an older version) reads them.
      const jobOfA = jobs.find((job) => job.eventId === event(org, a).event_id)!
      expect(JSON.parse(jobOfA.payload!)).toEqual({ visitor_id: a })
      expect(Date.parse(storedTime(jobOfA.createdAt!))).toBeGreaterThan(Date.now() - 60_000)
      const queryCalls = vi.spyOn(store, 'query')
      expect(await storedEventOf(store, jobOfA)).toEqual({
        payload: jobOfA.payload,
        created_at: jobOfA.createdAt,
      })
      expect(queryCalls).not.toHaveBeenCalled()
      queryCalls.mockRestore()
      expect(await storedEventOf(store, { eventId: event(org, b).event_id })).toMatchObject({
        payload: JSON.stringify({ visitor_id: b }),
      })
      expect(await storedEventOf(store, { eventId: newId() })).toBeUndefined()
      // Not marked: the queue only holds them. A second pass skips them (in flight here)...
      expect((await readEvents(store, { organizationId: org })).map((e) => e.dispatched_at)).toEqual([
        null,
        null,
      ])
      expect(await dispatchEvents({ store, coordination }, inFlight)).toBe(0)
      // ... and once marked they are not read again, and leave the in-flight set.
      await markEventsDispatched(store, [event(org, a).event_id, event(org, b).event_id])
      const stored = await readEvents(store, { organizationId: org })
      expect(stored.every((e) => e.dispatched_at !== null)).toBe(true)
      expect(await dispatchEvents({ store, coordination }, inFlight)).toBe(0)
      expect(inFlight.size).toBe(0)
    } finally {
      await coordination.close()
    }
  })

  it('an event another process stored is queued with its payload read from the store; one marked in the events table stays marked', async () => {
    const org = newId()
    const [fromElsewhere, markedBefore] = [event(org, newId()), event(org, newId())]
    // Written straight to the store, as another process (or this one before a restart) wrote them;
    // the second with the mark events carried before migration 0018.
    await store.insert('events', [
      { ...fromElsewhere, dispatched_at: null, version: 1 },
      { ...markedBefore, dispatched_at: new Date().toISOString(), version: 2 },
    ])
    const coordination = createMemoryCoordination()
    try {
      const jobs: EventJob[] = []
      coordination.jobs.process<EventJob>(eventJobName, async (job) => {
        if (job.data.organizationId === org) jobs.push(job.data)
      })
      const inFlight = new InFlightEvents()
      await dispatchEvents({ store, coordination }, inFlight)
      expect(inFlight.has(fromElsewhere.event_id)).toBe(true)
      expect(inFlight.has(markedBefore.event_id)).toBe(false)
      await vi.waitFor(() => expect(jobs).toHaveLength(1))
      expect(jobs[0]).toMatchObject({ eventId: fromElsewhere.event_id, payload: fromElsewhere.payload })
      const marked = await readEvents(store, { organizationId: org })
      expect(marked.map((e) => [e.event_id, e.dispatched_at !== null])).toEqual(
        expect.arrayContaining([
          [fromElsewhere.event_id, false],
          [markedBefore.event_id, true],
        ]),
      )
    } finally {
      await coordination.close()
    }
  })

  it('an event queued but never consumed (its process died with the queue) is queued again by the next process', async () => {
    const org = newId()
    await appendEvents(store, [event(org, newId())])
    const dying = createMemoryCoordination()
    expect(await dispatchEvents({ store, coordination: dying })).toBeGreaterThanOrEqual(1)
    await dying.close()
    const next = createMemoryCoordination()
    try {
      const seen: string[] = []
      next.jobs.process<EventJob>(eventJobName, async (job) => {
        seen.push(job.data.organizationId)
      })
      expect(await dispatchEvents({ store, coordination: next })).toBeGreaterThanOrEqual(1)
      await vi.waitFor(() => expect(seen).toContain(org))
    } finally {
      await next.close()
    }
  })
})

describe('event processing', () => {
  const log = { warn: vi.fn(), error: vi.fn() }
  const options = { intervalMs: 50, retry: { attempts: 3, delayMs: 10 } }

  it('marks an event once its consumer succeeded, not before; a failing try is retried first', async () => {
    const org = newId()
    const [a, b] = [event(org, newId()), event(org, newId())]
    await appendEvents(store, [a, b])
    const coordination = createMemoryCoordination()
    const tries = new Map<string, number>()
    let release!: () => void
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    const processing = startEventProcessing(
      { store, coordination, log },
      async (job) => {
        if (job.organizationId !== org) return
        tries.set(job.eventId, (tries.get(job.eventId) ?? 0) + 1)
        if (job.eventId === a.event_id && tries.get(job.eventId) === 1) throw new Error('receiver down')
        if (job.eventId === b.event_id) await held
      },
      options,
    )
    try {
      await vi.waitFor(async () => {
        const stored = await readEvents(store, { organizationId: org })
        expect(stored.find((e) => e.event_id === a.event_id)?.dispatched_at).not.toBeNull()
      })
      expect(tries.get(a.event_id)).toBe(2)
      // b's consumer is still running: b stays unmarked, and is not queued a second time.
      expect(
        (await readEvents(store, { organizationId: org })).find((e) => e.event_id === b.event_id)
          ?.dispatched_at,
      ).toBeNull()
      expect(tries.get(b.event_id)).toBe(1)
      release()
      await vi.waitFor(async () => {
        const stored = await readEvents(store, { organizationId: org })
        expect(stored.every((e) => e.dispatched_at !== null)).toBe(true)
      })
      expect(tries.get(b.event_id)).toBe(1)
    } finally {
      release()
      await processing.stop()
      await coordination.close()
    }
  })

  it('gives an event up after its last try (logged, marked) so a poison event stops', async () => {
    const org = newId()
    const poison = event(org, newId())
    await appendEvents(store, [poison])
    const coordination = createMemoryCoordination()
    let tries = 0
    const processing = startEventProcessing(
      { store, coordination, log },
      async (job) => {
        if (job.eventId !== poison.event_id) return
        tries++
        throw new Error('always fails')
      },
      options,
    )
    try {
      await vi.waitFor(async () => {
        expect((await readEvents(store, { organizationId: org }))[0]?.dispatched_at).not.toBeNull()
      })
      expect(tries).toBe(3)
      expect(log.error).toHaveBeenCalledWith(
        expect.objectContaining({ eventId: poison.event_id }),
        'events: consumer gave up',
      )
    } finally {
      await processing.stop()
      await coordination.close()
    }
  })

  it('stop waits for the consumers under way and writes their marks; events not consumed stay unmarked', async () => {
    const org = newId()
    const events = Array.from({ length: 6 }, () => event(org, newId()))
    await appendEvents(store, events)
    const coordination = createMemoryCoordination()
    const consumed: string[] = []
    let started!: () => void
    const first = new Promise<void>((resolve) => {
      started = resolve
    })
    const processing = startEventProcessing(
      { store, coordination, log },
      async (job) => {
        if (job.organizationId !== org) return
        started()
        await new Promise((resolve) => setTimeout(resolve, 200))
        consumed.push(job.eventId)
      },
      { ...options, concurrency: 2 },
    )
    await first
    await processing.stop()
    await coordination.close()
    const marked = (await readEvents(store, { organizationId: org }))
      .filter((e) => e.dispatched_at !== null)
      .map((e) => e.event_id)
    expect(consumed.length).toBeGreaterThanOrEqual(1)
    expect(consumed.length).toBeLessThan(events.length)
    expect(marked.sort()).toEqual([...consumed].sort())
  })
})
