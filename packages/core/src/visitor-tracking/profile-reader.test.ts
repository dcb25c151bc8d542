import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newId } from '../ids.js'
import { readPhoneSearch } from '../phone-search/search.js'
import { createPhoneSearchReader } from '../phone-search/search-reader.js'
import { createRepositories } from '../repositories.js'
import { createStore, type QueryParams, type Store } from '../store/client.js'
import { migrate } from '../store/migrate.js'
import { visitorKeysCondition } from '../store/visitor-keys.js'
import { createVisitorProfileReader } from './profile-reader.js'
import { blankContactFields } from './rows.js'
import { getVisitorProfile } from './visitors.js'

// Batched reads on the real embedded store: two organizations that know the same visitor id, read
// in one batch, each get their own rows only.
const tmp = tempDir('vid-profile-reader-')
let store: Store
let counted: Store
const sqls: string[] = []

const orgA = newId()
const orgB = newId()
const shared = newId() // a visitor id both organizations have seen
const onlyA = newId()

const pageView = (organization: string, visitor: string, path: string) => ({
  event_id: newId(),
  organization_id: organization,
  visitor_id: visitor,
  session_id: newId(),
  type: 'pageview',
  timestamp: '2026-03-01T10:00:00.000Z',
  received_at: '2026-03-01T10:00:00.000Z',
  url: `https://shop.test${path}`,
  path,
  title: path,
})

const visitorRow = (organization: string, id: string, email: string) => ({
  ...blankContactFields,
  id,
  organization_id: organization,
  email,
  first_name: email.split('@')[0]!,
  linkedin_url: '',
  company_id: '',
  identified_at: '2026-03-01T10:00:00.000Z',
  first_seen_at: '2026-03-01T10:00:00.000Z',
  last_seen_at: '2026-03-01T10:00:00.000Z',
  created_at: '2026-03-01T10:00:00.000Z',
  updated_at: '2026-03-01T10:00:00.000Z',
})

const search = (organization: string, visitor: string, status: string, phone = '') => ({
  organization_id: organization,
  visitor_id: visitor,
  search_id: `ps_${newId().slice(0, 8)}`,
  status,
  tries: 1,
  provider: 'dataset',
  auto: false,
  phone,
  started_at: '2026-03-01T10:00:00.000Z',
  finished_at: null,
  version: Date.now(),
})

beforeAll(async () => {
  store = createStore({ database: 'default', dataDir: tmp.dir })
  await migrate(store)
  counted = {
    ...store,
    query: <T>(sql: string, params?: QueryParams) => {
      sqls.push(sql)
      return store.query<T>(sql, params)
    },
  }
  await store.insert('page_views', [
    pageView(orgA, shared, '/a-pricing'),
    pageView(orgB, shared, '/b-careers'),
    pageView(orgB, shared, '/b-jobs'),
    pageView(orgA, onlyA, '/a-docs'),
  ])
  const repos = createRepositories(store)
  await repos.visitors.save(visitorRow(orgA, shared, 'ada@a.test'))
  await repos.visitors.save(visitorRow(orgB, shared, 'bob@b.test'))
  await store.insert('phone_searches', [
    search(orgA, shared, 'found', '+4915112345678'),
    search(orgB, shared, 'ongoing'),
  ])
})

afterAll(async () => {
  await store.close()
  tmp.remove()
})

const options = { ipTracking: true }

describe('visitorKeysCondition', () => {
  it("selects each organization's own visitors only, whatever else the batch holds", async () => {
    const { sql, params } = visitorKeysCondition([
      { organizationId: orgB, visitorId: onlyA }, // orgA's visitor, asked for by orgB
      { organizationId: orgA, visitorId: shared.toUpperCase() },
    ])
    const rows = await store.query<{ organization: string; visitor: string }>(
      `SELECT DISTINCT toString(organization_id) AS organization, toString(visitor_id) AS visitor
       FROM sessions PREWHERE ${sql}`,
      params,
    )
    expect(rows).toEqual([{ organization: orgA, visitor: shared }])
  })
})

describe('createVisitorProfileReader', () => {
  it('serves concurrent profiles of two organizations with one query, each with its own rows', async () => {
    const reader = createVisitorProfileReader(counted)
    sqls.length = 0
    const [a, b, aOnly, bUnknown] = await Promise.all([
      reader.read(orgA, shared, options),
      reader.read(orgB, shared, options),
      reader.read(orgA, onlyA, options),
      reader.read(orgB, onlyA, options), // orgA's visitor, asked for by orgB
    ])
    expect(sqls).toHaveLength(1)
    expect(sqls[0]).toMatch(/PREWHERE/)
    expect(a?.contact?.email).toBe('ada@a.test')
    expect(a?.pageViews.map((p) => p.url)).toEqual(['https://shop.test/a-pricing'])
    expect(b?.contact?.email).toBe('bob@b.test')
    expect(b?.pageViews.map((p) => p.url).sort()).toEqual([
      'https://shop.test/b-careers',
      'https://shop.test/b-jobs',
    ])
    expect(b?.organizationId).toBe(orgB)
    expect(aOnly?.pageViews.map((p) => p.url)).toEqual(['https://shop.test/a-docs'])
    expect(bUnknown).toBeUndefined()
    // The same profiles as one read each.
    expect(a).toEqual(await getVisitorProfile(store, orgA, shared, options))
    expect(b).toEqual(await getVisitorProfile(store, orgB, shared, options))
    expect(aOnly).toEqual(await getVisitorProfile(store, orgA, onlyA, options))
  })

  it('reads the profiles asked for while a read runs together, at most maxBatch per query', async () => {
    const reader = createVisitorProfileReader(counted, { maxBatch: 4 })
    sqls.length = 0
    const first = reader.read(orgA, shared, options)
    await new Promise((resolve) => setImmediate(resolve))
    const unknown = Array.from({ length: 9 }, () => newId())
    const rest = await Promise.all([
      reader.read(orgB, shared, options),
      ...unknown.map((id) => reader.read(orgA, id, options)),
    ])
    expect((await first)?.contact?.email).toBe('ada@a.test')
    expect(rest[0]?.contact?.email).toBe('bob@b.test')
    expect(rest.slice(1)).toEqual(unknown.map(() => undefined))
    // 1 alone, then 10 keys in batches of 4, 4 and 2.
    expect(sqls).toHaveLength(4)
  })

  it('answers ids that are not UUIDs alone, without failing the others', async () => {
    const reader = createVisitorProfileReader(counted)
    const [bad, good] = await Promise.all([
      reader.read(orgA, 'not-a-uuid', options),
      reader.read(orgA, shared, options),
    ])
    expect(bad).toBeUndefined()
    expect(good?.contact?.email).toBe('ada@a.test')
  })
})

describe('createPhoneSearchReader', () => {
  it('serves concurrent reads of two organizations with one query, each with its own search', async () => {
    const reader = createPhoneSearchReader(counted)
    sqls.length = 0
    const [a, b, aOnly, bad] = await Promise.all([
      reader.read(orgA, shared),
      reader.read(orgB, shared),
      reader.read(orgA, onlyA),
      reader.read(orgA, '------------------------------------'),
    ])
    expect(sqls).toHaveLength(1)
    expect(a).toMatchObject({ organization_id: orgA, status: 'found', phone: '+4915112345678' })
    expect(b).toMatchObject({ organization_id: orgB, status: 'ongoing', phone: '' })
    expect(aOnly).toBeUndefined()
    expect(bad).toBeUndefined()
    expect(a).toEqual(await readPhoneSearch(store, orgA, shared))
    expect(b).toEqual(await readPhoneSearch(store, orgB, shared))
  })
})
