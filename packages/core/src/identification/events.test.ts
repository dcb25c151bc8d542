// Stored events reach the job queue once each, and a crash between the two dispatches again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createCoordination } from '../coordination/index.js'
import { newId } from '../ids.js'
import { createStore, type Store } from '../store/client.js'
import { migrate } from '../store/migrate.js'
import { tempDir } from '../testing/temp-dir.js'
import { appendEvents, dispatchEvents, type EventJob, eventIdOf, eventJobName, readEvents } from './events.js'

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
  payload: '{}',
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

  it('storing an event twice keeps one; dispatch hands each to the queue once and marks it', async () => {
    const org = newId()
    const [a, b] = [newId(), newId()]
    await appendEvents(store, [event(org, a), event(org, b)])
    await appendEvents(store, [event(org, a)])
    expect(await readEvents(store, { organizationId: org })).toHaveLength(2)
    const coordination = createCoordination()
    const jobs: EventJob[] = []
    try {
      const handled = new Promise<void>((resolve) => {
        coordination.jobs.process<EventJob>(eventJobName, async (job) => {
          jobs.push(job.data)
          if (jobs.length === 2) resolve()
        })
      })
      expect(await dispatchEvents({ store, coordination })).toBeGreaterThanOrEqual(2)
      await handled
      expect(jobs.map((job) => job.eventId).sort()).toEqual(
        [event(org, a).event_id, event(org, b).event_id].sort(),
      )
      const stored = await readEvents(store, { organizationId: org })
      expect(stored.every((e) => e.dispatched_at !== null)).toBe(true)
      expect(await dispatchEvents({ store, coordination })).toBe(0)
    } finally {
      await coordination.close()
    }
  })

  it('an event stored but never dispatched (a crash) is dispatched by the next pass', async () => {
    const org = newId()
    await appendEvents(store, [event(org, newId())])
    const coordination = createCoordination()
    try {
      expect(await dispatchEvents({ store, coordination })).toBeGreaterThanOrEqual(1)
      expect((await readEvents(store, { organizationId: org }))[0]?.dispatched_at).not.toBeNull()
    } finally {
      await coordination.close()
    }
  })
})
