import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newId } from '../ids.js'
import { createRepositories } from '../repositories.js'
import { createStore, type QueryParams, type Store } from '../store/client.js'
import { migrate } from '../store/migrate.js'
import { blankContactFields } from './rows.js'
import { getVisitorProfile, getVisitorProfiles } from './visitors.js'

// The profile on the real embedded store, through a store that counts the queries it is asked.
const tmp = tempDir('vid-visitors-')
let store: Store
let queries = 0
let counted: Store

const org = newId()
const visitor = newId()
const early = newId()
const late = newId()

const event = (session: string, at: string, overrides: Record<string, unknown> = {}) => ({
  event_id: newId(),
  organization_id: org,
  visitor_id: visitor,
  session_id: session,
  type: 'pageview',
  timestamp: at,
  received_at: at,
  url: `https://shop.test${overrides.path ?? '/'}`,
  path: '/',
  title: 'Shop',
  ip: '203.0.113.9',
  country: 'DE',
  asn: 3320,
  ...overrides,
})

beforeAll(async () => {
  store = createStore({ database: 'default', dataDir: tmp.dir })
  await migrate(store)
  counted = {
    ...store,
    query: <T>(sql: string, params?: QueryParams) => {
      queries += 1
      return store.query<T>(sql, params)
    },
  }
  // Two sessions, inserted in two batches each (so the session rows are merged at read time).
  await store.insert('page_views', [
    event(early, '2026-03-01T10:00:00.900Z', {
      path: '/',
      utm_source: 'news',
      tracking_params: { gclid: 'g1' },
    }),
    event(early, '2026-03-01T10:00:05.000Z', { path: '/pricing', title: 'Pricing' }),
  ])
  await store.insert('page_views', [
    event(early, '2026-03-01T10:00:06.100Z', { type: 'engagement', engaged_ms: 42_000, max_scroll: 80 }),
    event(late, '2026-03-02T08:00:00.000Z', { path: '/docs', title: 'Docs', company_id: 'acme' }),
  ])
  await createRepositories(store).visitors.save({
    ...blankContactFields,
    id: visitor,
    organization_id: org,
    email: 'ada@example.com',
    first_name: 'Ada',
    last_name: '',
    job_title: 'CTO',
    seniority: 'c-level',
    department: 'engineering',
    country: 'FR',
    linkedin_url: '',
    company_id: '',
    identified_at: '2026-03-01T10:00:05.000Z',
    first_seen_at: '2026-03-01T10:00:00.900Z',
    last_seen_at: '2026-03-01T10:00:05.000Z',
    created_at: '2026-03-01T10:00:05.000Z',
    updated_at: '2026-03-01T10:00:05.000Z',
  })
})

afterAll(async () => {
  await store.close()
  tmp.remove()
})

describe('getVisitorProfile', () => {
  it('reads the visitor row, its sessions and its page views in one query', async () => {
    queries = 0
    const profile = await getVisitorProfile(counted, org, visitor, { ipTracking: true })
    expect(queries).toBe(1)
    expect(profile).toMatchObject({
      id: visitor,
      organizationId: org,
      contact: {
        email: 'ada@example.com',
        firstName: 'Ada',
        lastName: null,
        jobTitle: 'CTO',
        linkedinUrl: null,
      },
      company: { id: 'acme' },
    })
    expect(profile?.sessions.map((s) => s.id)).toEqual([late, early])
    expect(profile?.pageViews.map((p) => p.url)).toEqual([
      'https://shop.test/docs',
      'https://shop.test/pricing',
      'https://shop.test/',
    ])
    const first = profile!.sessions[1]!
    expect(first).toMatchObject({
      landingPage: 'https://shop.test/',
      entryPage: '/',
      exitPage: '/pricing',
      utmSource: 'news',
      trackingParams: { gclid: 'g1' },
      country: 'DE',
      asn: 'AS3320',
      ipAddress: '203.0.113.9',
      pageViewCount: 2,
      maxScrollPercent: 80,
      // The engaged 42 s are longer than the 6 s (dateDiff counts second boundaries) between events.
      sessionDurationSeconds: 42,
    })
    expect(Date.parse(profile!.lastSeenAt)).toBe(Date.parse('2026-03-02T08:00:00.000Z'))
  })

  it('shows the latest version of the visitor row, and none once it is deleted', async () => {
    const repos = createRepositories(store)
    const row = (await repos.visitors.get({ organization_id: org, id: visitor }))!
    await repos.visitors.save({ ...row, first_name: 'Augusta', updated_at: new Date().toISOString() })
    expect((await getVisitorProfile(counted, org, visitor, { ipTracking: true }))?.contact).toMatchObject({
      email: 'ada@example.com',
      firstName: 'Augusta',
    })
    await repos.visitors.remove({ organization_id: org, id: visitor })
    const profile = await getVisitorProfile(counted, org, visitor, { ipTracking: true })
    expect(profile?.contact).toBeNull()
    expect(profile?.sessions).toHaveLength(2)
    await repos.visitors.save(row)
  })

  it('keeps the newest page views across sessions within the limits', async () => {
    const profile = await getVisitorProfile(counted, org, visitor, {
      ipTracking: true,
      sessionLimit: 1,
      pageViewLimit: 5,
    })
    expect(profile?.sessions.map((s) => s.id)).toEqual([late])
    expect(profile?.pageViews.map((p) => p.url)).toEqual(['https://shop.test/docs'])
    const limited = await getVisitorProfile(counted, org, visitor, { ipTracking: true, pageViewLimit: 2 })
    expect(limited?.pageViews.map((p) => p.url)).toEqual([
      'https://shop.test/docs',
      'https://shop.test/pricing',
    ])
  })

  it('leaves out the IP where the organization keeps none, and knows no other tenant', async () => {
    const profile = await getVisitorProfile(counted, org, visitor, { ipTracking: false })
    expect(profile?.sessions.every((s) => !('ipAddress' in s))).toBe(true)
    expect(await getVisitorProfile(counted, newId(), visitor, { ipTracking: true })).toBeUndefined()
    expect(await getVisitorProfile(counted, org, 'not-a-uuid', { ipTracking: true })).toBeUndefined()
  })
})

describe('getVisitorProfiles', () => {
  it('reads each visitor as getVisitorProfile does, from rows spread over several parts', async () => {
    // A second visitor of the organization, its session written in three inserts (three parts).
    const other = newId()
    const session = newId()
    for (const [at, path] of [
      ['2026-03-03T09:00:00.000Z', '/a'],
      ['2026-03-03T09:05:00.000Z', '/b'],
      ['2026-03-03T09:07:00.000Z', '/c'],
    ] as const) {
      await store.insert('page_views', [{ ...event(session, at, { path }), visitor_id: other }])
    }
    const options = { ipTracking: true }
    const profiles = await getVisitorProfiles(counted, org, [visitor, other, newId()], options)
    expect([...profiles.keys()].sort()).toEqual([visitor, other].sort())
    for (const id of [visitor, other]) {
      expect(profiles.get(id)).toEqual(await getVisitorProfile(store, org, id, options))
    }
    expect(profiles.get(other)?.pageViews.map((p) => p.url)).toEqual([
      'https://shop.test/c',
      'https://shop.test/b',
      'https://shop.test/a',
    ])
    // Only the sessions asked for, with the identity row.
    const oneSession = await getVisitorProfiles(counted, org, [visitor], { ...options, sessionIds: [early] })
    expect(oneSession.get(visitor)?.sessions.map((s) => s.id)).toEqual([early])
    expect(oneSession.get(visitor)?.contact).toMatchObject({ email: 'ada@example.com' })
    expect(oneSession.get(visitor)?.sessions[0]).toEqual(
      (await getVisitorProfile(store, org, visitor, options))?.sessions.find((s) => s.id === early),
    )
    expect((await getVisitorProfiles(counted, newId(), [visitor], options)).size).toBe(0)
  })
})
