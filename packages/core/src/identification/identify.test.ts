// Identification on the real embedded store: contacts, company, credits, the visitor.identified
// event, exactly once however often and however concurrently a visitor is identified.

import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { creditBalance, grantCredits } from '../credits/ledger.js'
import { readEvents } from '../events/events.js'
import { newId, sha256Hex } from '../ids.js'
import { createOrganization, createUser } from '../organizations/tenancy.js'
import { createRepositories, type Repositories } from '../repositories.js'
import { createStore, type Store } from '../store/client.js'
import { migrate } from '../store/migrate.js'
import { storedTime } from '../store/time.js'
import { getVisitorProfile } from '../visitor-tracking/visitors.js'
import { createIdentifiedVisitors } from './identified-visitors.js'
import { type IdentifyHit, identifyVisitors } from './identify.js'

const tmp = tempDir('vid-identify-')
let store: Store
let repos: Repositories

beforeAll(async () => {
  store = createStore({ database: 'default', dataDir: tmp.dir })
  await migrate(store)
  repos = createRepositories(store)
  const at = new Date().toISOString()
  await store.insert('companies', [
    {
      id: 'acme',
      name: 'Acme',
      domain: 'acme.test',
      industry: 'SaaS',
      created_at: at,
      updated_at: at,
      version: 1,
    },
    { id: 'globex', name: 'Globex', domain: 'globex.test', created_at: at, updated_at: at, version: 1 },
  ])
  await store.insert('contacts', [
    {
      id: 'c-ada',
      email: 'ada@acme.test',
      personal_email: 'ada@home.test',
      first_name: 'Ada',
      last_name: 'Lovelace',
      job_title: 'CTO',
      phone: '+33 1 23',
      linkedin_url: 'https://linkedin.com/in/ada',
      gender: 'female',
      company_id: 'acme',
      created_at: at,
      updated_at: at,
      version: 1,
    },
    {
      id: 'c-grace',
      email: 'grace@globex.test',
      first_name: 'Grace',
      company_domain: 'globex.test',
      created_at: at,
      updated_at: at,
      version: 1,
    },
  ])
})

afterAll(async () => {
  await store?.close()
  tmp.remove()
})

/** A fresh organization with `credits` credits, and a page view of `visitor` in `session`. */
async function organization(credits: number, maxOverages: number | null = null) {
  const user = await createUser(repos, { email: `${newId()}@owner.test` })
  const { organization } = await createOrganization(repos, { name: 'Shop', ownerUserId: user.id })
  await repos.organizations.save({ ...organization, max_overages: maxOverages })
  if (credits > 0)
    await grantCredits(store, { organizationId: organization.id, amount: credits, reason: 'test' })
  return organization.id
}

async function visit(organizationId: string) {
  const visitorId = newId()
  const sessionId = newId()
  const at = new Date().toISOString()
  await store.insert('page_views', [
    {
      event_id: newId(),
      organization_id: organizationId,
      visitor_id: visitorId,
      session_id: sessionId,
      type: 'pageview',
      timestamp: at,
      received_at: at,
      url: 'https://shop.test/pricing',
      path: '/pricing',
      ip: '203.0.113.9',
      country: 'FR',
      company_id: 'as3215',
    },
  ])
  return { visitorId, sessionId }
}

const hit = (
  organizationId: string,
  v: { visitorId: string; sessionId: string },
  email: string,
): IdentifyHit => ({
  organization_id: organizationId,
  visitor_id: v.visitorId,
  session_id: v.sessionId,
  email,
  timestamp: new Date().toISOString(),
  company_id: 'as3215',
})

const visitorRow = (organizationId: string, id: string) =>
  repos.visitors.get({ organization_id: organizationId, id })

describe('identifyVisitors', () => {
  it('a contact found by email makes a person: its fields, its company, 1 credit, one event with the payload', async () => {
    const org = await organization(10)
    const v = await visit(org)
    const result = await identifyVisitors({ store, repos }, [hit(org, v, '  Ada@ACME.test ')])
    expect(result).toMatchObject({ persons: 1, firstIdentifications: 1, dropped: 0 })
    const row = await visitorRow(org, v.visitorId)
    expect(row).toMatchObject({
      contact_id: 'c-ada',
      email: 'ada@acme.test',
      personal_email: 'ada@home.test',
      first_name: 'Ada',
      job_title: 'CTO',
      gender: 'female',
      company_id: 'acme',
    })
    // A phone is paid data: the contact's phone stays in the dataset until a search finds it.
    expect(row?.phone).toBe('')
    expect(row?.identified_at).toBeTruthy()
    expect(await creditBalance(store, org)).toBe(9)
    const events = await readEvents(store, { organizationId: org })
    expect(events).toHaveLength(1)
    const payload = JSON.parse(events[0]!.payload)
    expect(payload).toMatchObject({
      event_type: 'visitor.identified',
      organization_id: org,
      session_id: v.sessionId,
      workspace: 'Shop',
      visitor: {
        id: v.visitorId,
        email: 'ada@acme.test',
        first_name: 'Ada',
        gender: 'female',
        married: null,
        phone: '',
      },
      company: { id: 'acme', name: 'Acme', domain: 'acme.test', industry: 'SaaS' },
      session: {
        country: 'FR',
        ip_address: '203.0.113.9',
        is_hosting: false,
        first_visit: true,
        page_view_count: 1,
      },
      page_views: [{ url: 'https://shop.test/pricing' }],
    })
    // The profile shows the contact and the company in full.
    const profile = await getVisitorProfile(store, org, v.visitorId, {
      ipTracking: true,
      companyOf: (id) => repos.companies.get({ id }),
    })
    expect(profile?.contact).toMatchObject({ email: 'ada@acme.test', personalEmail: 'ada@home.test' })
    expect(profile?.contact).not.toHaveProperty('phone')
    expect(profile?.company).toMatchObject({ id: 'acme', name: 'Acme', domain: 'acme.test' })
  })

  it('identified in a later session: the payload has that session and its page views, not a first visit', async () => {
    const org = await organization(10)
    const earlier = await visit(org)
    const later = { visitorId: earlier.visitorId, sessionId: newId() }
    const at = new Date(Date.now() + 60_000).toISOString()
    await store.insert('page_views', [
      {
        event_id: newId(),
        organization_id: org,
        visitor_id: later.visitorId,
        session_id: later.sessionId,
        type: 'pageview',
        timestamp: at,
        received_at: at,
        url: 'https://shop.test/demo',
        path: '/demo',
        country: 'DE',
      },
    ])
    await identifyVisitors({ store, repos }, [{ ...hit(org, later, 'ada@acme.test'), timestamp: at }])
    const [event] = await readEvents(store, { organizationId: org })
    const payload = JSON.parse(event!.payload)
    expect(payload).toMatchObject({
      session_id: later.sessionId,
      session: { country: 'DE', first_visit: false, page_view_count: 1 },
      page_views: [{ url: 'https://shop.test/demo' }],
    })
    expect(payload.page_views).toHaveLength(1)
    // First seen: the earlier session's start (read from the sessions), not this hit.
    const row = await visitorRow(org, later.visitorId)
    expect(Date.parse(storedTime(row!.first_seen_at))).toBeLessThan(Date.parse(at) - 30_000)
  })

  it('charges that cross the credit thresholds store credits.low and credits.exhausted, once per grant', async () => {
    const org = await organization(2)
    const [a, g] = [await visit(org), await visit(org)]
    const result = await identifyVisitors({ store, repos }, [
      hit(org, a, 'ada@acme.test'),
      hit(org, g, 'grace@globex.test'),
    ])
    // The credit events are not identifications: two visitors, two first identifications.
    expect(result).toMatchObject({ persons: 2, firstIdentifications: 2 })
    expect(await creditBalance(store, org)).toBe(0)
    const types = async () =>
      (await readEvents(store, { organizationId: org }))
        .map((event) => event.type)
        .filter((type) => type.startsWith('credits.'))
        .sort()
    expect(await types()).toEqual(['credits.exhausted', 'credits.low'])
    const [low] = await readEvents(store, { organizationId: org, type: 'credits.low' })
    expect(JSON.parse(low!.payload)).toMatchObject({
      event_type: 'credits.low',
      balance: 0,
      organization_id: org,
    })
    // Nothing charged, nothing crossed: no more events.
    await identifyVisitors({ store, repos }, [hit(org, a, 'ada@acme.test')])
    expect(await types()).toEqual(['credits.exhausted', 'credits.low'])
  })

  it('identifying again charges nothing and emits nothing more; the event keeps its id', async () => {
    const org = await organization(10)
    const v = await visit(org)
    await identifyVisitors({ store, repos }, [hit(org, v, 'ada@acme.test')])
    const [first] = await readEvents(store, { organizationId: org })
    await identifyVisitors({ store, repos }, [hit(org, v, 'ada@home.test'), hit(org, v, 'ada@acme.test')])
    expect(await creditBalance(store, org)).toBe(9)
    expect(await readEvents(store, { organizationId: org })).toEqual([first])
  })

  it('finds the contact by the SHA-256 of its personal email, and the company by its domain', async () => {
    const org = await organization(10)
    const [a, g] = [await visit(org), await visit(org)]
    const result = await identifyVisitors({ store, repos }, [
      hit(org, a, sha256Hex('ada@home.test')),
      hit(org, g, 'grace@globex.test'),
    ])
    expect(result.persons).toBe(2)
    expect(await visitorRow(org, a.visitorId)).toMatchObject({ contact_id: 'c-ada', email: 'ada@acme.test' })
    expect(await visitorRow(org, g.visitorId)).toMatchObject({ contact_id: 'c-grace', company_id: 'globex' })
  })

  it('no contact: the visitor is known by its email alone, free; a bad email or a lone hash is dropped', async () => {
    const org = await organization(10)
    const [known, bad, hash] = [await visit(org), await visit(org), await visit(org)]
    const result = await identifyVisitors({ store, repos }, [
      hit(org, known, 'someone@else.test'),
      hit(org, bad, 'not an email'),
      hit(org, bad, `${'x'.repeat(250)}@toolong.test`),
      hit(org, hash, sha256Hex('nobody@nowhere.test')),
    ])
    expect(result).toMatchObject({ persons: 0, firstIdentifications: 1, dropped: 3 })
    expect(await visitorRow(org, known.visitorId)).toMatchObject({
      email: 'someone@else.test',
      contact_id: '',
      company_id: 'as3215',
    })
    expect(await visitorRow(org, bad.visitorId)).toBeUndefined()
    expect(await creditBalance(store, org)).toBe(10)
    expect(await readEvents(store, { organizationId: org })).toHaveLength(1)
  })

  it('beyond maxOverages below zero, visitors are known by email only until credits are added', async () => {
    const org = await organization(1, 1) // one credit, one more of overage
    const visits = [await visit(org), await visit(org), await visit(org)]
    const result = await identifyVisitors(
      { store, repos },
      visits.map((v, i) => hit(org, v, i === 2 ? 'grace@globex.test' : 'ada@acme.test')),
    )
    expect(result.persons).toBe(2)
    expect(await creditBalance(store, org)).toBe(-1)
    expect(await visitorRow(org, visits[2]!.visitorId)).toMatchObject({
      email: 'grace@globex.test',
      contact_id: '',
    })
    await grantCredits(store, { organizationId: org, amount: 5, reason: 'top-up' })
    await identifyVisitors({ store, repos }, [hit(org, visits[2]!, 'grace@globex.test')])
    expect(await visitorRow(org, visits[2]!.visitorId)).toMatchObject({
      contact_id: 'c-grace',
      first_name: 'Grace',
    })
    expect(await creditBalance(store, org)).toBe(3)
  })

  it('identifying one visitor many times at once charges one credit and stores one event', async () => {
    const org = await organization(10)
    const v = await visit(org)
    await Promise.all(
      Array.from({ length: 6 }, () => identifyVisitors({ store, repos }, [hit(org, v, 'ada@acme.test')])),
    )
    expect(await creditBalance(store, org)).toBe(9)
    expect(await readEvents(store, { organizationId: org })).toHaveLength(1)
  })

  it('a crash before the visitor row is written: the replay stores the same event, not a second one', async () => {
    const org = await organization(10)
    const v = await visit(org)
    const crashing: Store = {
      ...store,
      insert: async (table, rows, options) => {
        if (table === 'visitors') throw new Error('crash')
        return store.insert(table, rows, options)
      },
    }
    await expect(
      identifyVisitors({ store: crashing, repos }, [hit(org, v, 'ada@acme.test')]),
    ).rejects.toThrow('crash')
    const [stored] = await readEvents(store, { organizationId: org })
    expect(stored).toBeDefined()
    expect(await visitorRow(org, v.visitorId)).toBeUndefined()
    await identifyVisitors({ store, repos }, [hit(org, v, 'ada@acme.test')])
    expect((await visitorRow(org, v.visitorId))?.identified_at).toBeTruthy()
    const events = await readEvents(store, { organizationId: org })
    expect(events.map((event) => event.event_id)).toEqual([stored!.event_id])
    expect(await creditBalance(store, org)).toBe(9)
  })

  it('with the identified-visitors cache, hits that would change nothing skip the store', async () => {
    const org = await organization(10)
    const person = await visit(org)
    const byEmail = await visit(org)
    let now = Date.now()
    const identified = createIdentifiedVisitors({ ttlMs: 60_000, now: () => now })
    const calls: string[] = []
    const counting: Store = {
      ...store,
      query: (sql, params) => {
        calls.push(sql)
        return store.query(sql, params)
      },
      insert: (table, rows, options) => {
        calls.push(`insert ${table}`)
        return store.insert(table, rows, options)
      },
    }
    const deps = { store: counting, repos, identified }
    await identifyVisitors(deps, [hit(org, person, 'ada@acme.test'), hit(org, byEmail, 'nobody@else.test')])
    expect(calls.length).toBeGreaterThan(0)

    // The same visitors again (a person by any email, the other by the same email): no store call.
    calls.length = 0
    const again = await identifyVisitors(deps, [
      hit(org, person, 'ada@home.test'),
      hit(org, byEmail, ' Nobody@Else.test'),
    ])
    expect(again).toMatchObject({ persons: 0, firstIdentifications: 0, dropped: 0 })
    expect(calls).toEqual([])

    // A new email for the visitor known by email alone goes to the store, and is written.
    await identifyVisitors(deps, [hit(org, byEmail, 'grace@globex.test')])
    expect(calls).toContain('insert visitors')
    expect(await visitorRow(org, byEmail.visitorId)).toMatchObject({ contact_id: 'c-grace' })

    // Once an entry is older than ttlMs, the store is asked again.
    calls.length = 0
    now += 60_001
    await identifyVisitors(deps, [hit(org, person, 'ada@acme.test')])
    expect(calls.length).toBeGreaterThan(0)
    expect(await creditBalance(store, org)).toBe(8)
    expect(await readEvents(store, { organizationId: org })).toHaveLength(2)
  })
  it('after forgetUnmatched (a contacts import), a visitor known by email alone finds its new contact', async () => {
    const org = await organization(10)
    const person = await visit(org)
    const byEmail = await visit(org)
    const email = `${newId()}@initech.test`
    const identified = createIdentifiedVisitors({ ttlMs: 600_000 })
    const calls: string[] = []
    const counting: Store = {
      ...store,
      query: (sql, params) => {
        calls.push(sql)
        return store.query(sql, params)
      },
    }
    const deps = { store: counting, repos, identified }
    await identifyVisitors(deps, [hit(org, person, 'ada@acme.test'), hit(org, byEmail, email)])
    expect((await visitorRow(org, byEmail.visitorId))?.contact_id).toBeFalsy()

    // The contact arrives (as an import writes it): the cached visitor does not look for it...
    const at = new Date().toISOString()
    await store.insert('contacts', [
      { id: 'c-peter', email, first_name: 'Peter', created_at: at, updated_at: at, version: 1 },
    ])
    await identifyVisitors(deps, [hit(org, byEmail, email)])
    expect((await visitorRow(org, byEmail.visitorId))?.contact_id).toBeFalsy()

    // ...until the import is announced: then it does, while a person stays settled (no store call).
    identified.forgetUnmatched()
    calls.length = 0
    await identifyVisitors(deps, [hit(org, person, 'ada@acme.test')])
    expect(calls).toEqual([])
    await identifyVisitors(deps, [hit(org, byEmail, email)])
    expect(await visitorRow(org, byEmail.visitorId)).toMatchObject({ contact_id: 'c-peter' })
  })
})
