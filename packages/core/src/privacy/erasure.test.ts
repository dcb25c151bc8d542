// Erasure and access on the real embedded store: a person with rows in every table that can name
// them, next to another person of the same organization. After the erasure a search of every
// column of every table of the store finds none of the erased person's email, hash, name, phone,
// visitor id or contact id; the other person's rows are all there; and the statistics equal those
// of the store before the erased person's rows were written.

import { tablesNaming as tablesWithNeedles } from '@visitor-id/testing/store-search'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { settleFirstHours } from '../analytics/first-hours.js'
import { statisticsTotals } from '../analytics/totals.js'
import { createMemoryCoordination } from '../coordination/index.js'
import type { Coordination } from '../coordination/ports.js'
import { identificationEntryId } from '../credits/ledger.js'
import { emailSha256 } from '../identification/contacts.js'
import { newId } from '../ids.js'
import { createRepositories, type Repositories } from '../repositories.js'
import { createStore, type Store } from '../store/client.js'
import { migrate } from '../store/migrate.js'
import { exportPerson } from './access.js'
import { createErasedVisitors, replacementVisitorId } from './erased-visitors.js'
import { erasePerson } from './erasure.js'
import { findPerson } from './person.js'
import { personalTables, tablesWithoutPersons } from './tables.js'

const tmp = tempDir('vid-privacy-')
let store: Store
let repos: Repositories
let coordination: Coordination
const org = newId()
const day = 86_400_000
const start = Date.now() - 3 * day

interface Someone {
  visitorId: string
  contactId: string
  email: string
  firstName: string
  lastName: string
  phone: string
  ip: string
}

const ada: Someone = {
  visitorId: newId(),
  contactId: 'contact-ada',
  email: 'ada.lovelace@analytical.test',
  firstName: 'Augusta',
  lastName: 'Lovelace',
  phone: '+15550001111',
  ip: '203.0.113.77',
}
const bob: Someone = {
  visitorId: newId(),
  contactId: 'contact-bob',
  email: 'bob.babbage@engines.test',
  firstName: 'Charles',
  lastName: 'Babbage',
  phone: '+15550002222',
  ip: '198.51.100.9',
}
const listId = 'list-privacy'

/** Everything the service writes about someone, straight into the tables (the views do the rest). */
async function writePerson(person: Someone, offsetMs: number) {
  const at = (ms: number) => new Date(start + offsetMs + ms).toISOString()
  const sessions = [newId(), newId()]
  await store.insert(
    'page_views',
    sessions.flatMap((session, s) =>
      [0, 1, 2].map((n) => ({
        event_id: newId(),
        organization_id: org,
        visitor_id: person.visitorId,
        session_id: session,
        type: 'pageview',
        timestamp: at(s * day + n * 60_000),
        received_at: at(s * day + n * 60_000),
        url: `https://shop.test/p${n}`,
        path: `/p${n}`,
        ip: person.ip,
        email: s === 1 && n === 2 ? person.email : '',
        company_id: 'acme',
      })),
    ),
  )
  const hash = emailSha256(person.email)
  await store.insert('contacts', [
    {
      id: person.contactId,
      email: person.email,
      email_sha256: hash,
      first_name: person.firstName,
      last_name: person.lastName,
      phone: person.phone,
      created_at: at(0),
      updated_at: at(0),
      version: 1,
    },
  ])
  await store.insert('visitors', [
    {
      id: person.visitorId,
      organization_id: org,
      contact_id: person.contactId,
      email: person.email,
      first_name: person.firstName,
      last_name: person.lastName,
      phone: person.phone,
      company_id: 'acme',
      identified_at: at(day),
      first_seen_at: at(0),
      last_seen_at: at(day),
      created_at: at(0),
      updated_at: at(day),
      version: 1,
    },
  ])
  const eventId = newId()
  const payload = JSON.stringify({
    event_type: 'visitor.identified',
    email: person.email,
    name: person.lastName,
  })
  await store.insert('events', [
    {
      event_id: eventId,
      type: 'visitor.identified',
      organization_id: org,
      visitor_id: person.visitorId,
      payload,
      created_at: at(day),
      version: 1,
    },
  ])
  await store.insert('event_marks', [{ event_id: eventId, dispatched_at: at(day) }])
  const deliveryId = newId()
  await store.insert('webhook_deliveries', [
    {
      id: deliveryId,
      partner_id: newId(),
      organization_id: org,
      kind: 'identification',
      event_id: eventId,
      event_type: 'visitor.identified',
      body: payload,
      status: 'delivered',
      attempts: 1,
      created_at: at(day),
      updated_at: at(day),
      version: 1,
    },
  ])
  await store.insert('webhook_attempts', [
    { id: newId(), delivery_id: deliveryId, organization_id: org, event_id: eventId, attempted_at: at(day) },
  ])
  await store.insert('integration_flow_runs', [
    { organization_id: org, flow_id: 'flow-1', run_id: newId(), event_id: eventId, started_at: at(day) },
  ])
  await store.insert('phone_searches', [
    {
      organization_id: org,
      visitor_id: person.visitorId,
      search_id: newId(),
      status: 'found',
      phone: person.phone,
      started_at: at(day),
      version: 1,
    },
  ])
  await store.insert('icp_scores', [
    {
      organization_id: org,
      config_id: 'icp-1',
      visitor_id: person.visitorId,
      matched: 1,
      score: 100,
      computed_at: at(day),
      version: 1,
    },
  ])
  await store.insert('list_members', [
    { list_id: listId, snapshot: 's1', email_sha256: hash, contact_id: person.contactId },
  ])
  await store.insert('credit_ledger', [
    {
      organization_id: org,
      entry_id: identificationEntryId(person.visitorId),
      kind: 'charge',
      amount: -1,
      reason: 'identification',
      created_at: at(day),
      version: 1,
    },
  ])
}

const range = () => ({ from: new Date(start - day).toISOString(), to: new Date().toISOString() })
const totals = () => statisticsTotals(store, { organizationId: org, range: range(), configs: [] })

const tablesNaming = (needles: string[]) => tablesWithNeedles(store, needles)

const needlesOf = (person: Someone) => [
  person.email,
  emailSha256(person.email),
  person.lastName,
  person.phone,
  person.visitorId,
  person.contactId,
  person.ip,
]

let totalsWithoutAda: Awaited<ReturnType<typeof totals>>

beforeAll(async () => {
  store = createStore({ database: 'default', dataDir: tmp.dir })
  await migrate(store)
  coordination = createMemoryCoordination()
  repos = createRepositories(store)
  const at = new Date().toISOString()
  await repos.lists.save({
    id: listId,
    organization_id: org,
    name: 'Prospects',
    filter: '{}',
    created_at: at,
    updated_at: at,
  } as Parameters<Repositories['lists']['save']>[0])
  await writePerson(bob, 0)
  await settleFirstHours(store)
  totalsWithoutAda = await totals()
  await writePerson(ada, 3_600_000)
  await settleFirstHours(store)
})

afterAll(async () => {
  await coordination?.close()
  await store?.close()
  tmp.remove()
})

describe('the table list', () => {
  it('names every table of the store: as holding persons, or as not, with why', async () => {
    const tables = await store.query<{ name: string }>(
      `SELECT name FROM system.tables WHERE database = currentDatabase() AND engine NOT LIKE '%View'`,
    )
    const listed = new Set([...personalTables.map((t) => t.table), ...Object.keys(tablesWithoutPersons)])
    expect(tables.map((t) => t.name).filter((name) => !listed.has(name))).toEqual([])
  })
})

describe('access and erasure', () => {
  it('finds the person from any key: email, hash or visitor id', async () => {
    for (const key of [
      { email: ` ${ada.email.toUpperCase()} ` },
      { emailSha256: emailSha256(ada.email).toUpperCase() },
      { visitorId: ada.visitorId },
    ]) {
      const { personKeySchema } = await import('./person.js')
      const person = await findPerson(store, org, personKeySchema.parse(key))
      expect(person).toMatchObject({
        visitorIds: [ada.visitorId],
        emails: [ada.email],
        contactIds: [ada.contactId],
      })
      expect(person.eventIds).toHaveLength(1)
    }
  })

  it('exports every record that names the person, and none of the other', async () => {
    const exported = await exportPerson({ store, repos }, org, { email: ada.email })
    expect(exported.found).toEqual({
      visitorIds: [ada.visitorId],
      emails: [ada.email],
      contactIds: [ada.contactId],
    })
    const rows = (table: string) => (exported.tables[table] as { rows: Record<string, unknown>[] }).rows
    expect(rows('page_views')).toHaveLength(6)
    expect(rows('visitors')).toMatchObject([{ email: ada.email, last_name: ada.lastName, phone: ada.phone }])
    expect(rows('contacts')).toMatchObject([{ id: ada.contactId }])
    for (const table of [
      'events',
      'webhook_deliveries',
      'integration_flow_runs',
      'phone_searches',
      'icp_scores',
      'list_members',
      'credit_ledger',
    ]) {
      expect(rows(table), table).toHaveLength(1)
    }
    // Rollup rows: the two sessions, in as many rows as the views wrote before the engine merges them.
    expect((exported.tables.sessions as { count: number }).count).toBeGreaterThanOrEqual(2)
    expect(JSON.stringify(exported)).not.toContain(bob.email)
    expect(JSON.stringify(exported)).not.toContain(bob.visitorId)
  })

  it('erases the person from every table: a search of the whole store finds nothing; the other person stays; the statistics add up', async () => {
    const bobBefore = await tablesNaming(needlesOf(bob))
    expect(Object.keys(await tablesNaming(needlesOf(ada))).length).toBeGreaterThan(15)
    const erasedVisitors = createErasedVisitors(store)
    const result = await erasePerson(
      { store, repos, locks: coordination.locks, erasedVisitors },
      org,
      { email: ada.email },
      'user:test',
    )
    expect(result).toMatchObject({ keyKind: 'email', visitors: 1, contacts: 1 })
    expect(result.rows).toMatchObject({
      page_views: 6,
      visitors: 1,
      contacts: 1,
      events: 1,
      webhook_deliveries: 1,
    })
    expect(Object.keys(result.kept)).toEqual(['credit_ledger'])
    // Only the billing entry keeps the visitor id (and nothing else of the person).
    expect(await tablesNaming(needlesOf(ada))).toEqual({ credit_ledger: 1 })
    expect(await tablesNaming(needlesOf(ada).filter((n) => n !== ada.visitorId))).toEqual({})
    expect(await tablesNaming(needlesOf(bob))).toEqual(bobBefore)
    // The hourly counts lost the person's hours: the figures are those from before they came.
    expect(await totals()).toEqual(totalsWithoutAda)
    await settleFirstHours(store)
    expect(await totals()).toEqual(totalsWithoutAda)
    // The erasure is recorded, without the key.
    const [record] = await store.query<Record<string, unknown>>('SELECT * FROM erasures')
    expect(record).toMatchObject({
      organization_id: org,
      key_kind: 'email',
      requested_by: 'user:test',
      visitors: 1,
    })
    // The browser's next hit is a new visitor.
    expect(erasedVisitors.has(org, ada.visitorId)).toBe(true)
    // A process that starts later reads them from the store.
    const elsewhere = createErasedVisitors(store)
    await elsewhere.start()
    expect(elsewhere.has(org, ada.visitorId)).toBe(true)
    expect(elsewhere.has(org, bob.visitorId)).toBe(false)
    expect(elsewhere.has(newId(), ada.visitorId)).toBe(false)
    const replacement = elsewhere.visitorIdFor(org, ada.visitorId)
    expect(replacement).toBe(replacementVisitorId(ada.visitorId))
    expect(replacement).not.toBe(ada.visitorId)
    expect(replacement).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(elsewhere.visitorIdFor(org, bob.visitorId)).toBe(bob.visitorId)
    await elsewhere.stop()
  })

  it('erasing someone unknown erases nothing and says so', async () => {
    const result = await erasePerson(
      { store, repos, locks: coordination.locks },
      org,
      { email: 'nobody@nowhere.test' },
      'cli',
    )
    expect(result).toMatchObject({ visitors: 0, contacts: 0, rows: {}, kept: {} })
  })
})
