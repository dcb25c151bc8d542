import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { organizationRow } from '@visitor-id/testing/rows'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newId } from '../ids.js'
import { createRepositories, type Repositories } from '../repositories.js'
import { createStore, type Store, StoreError } from './client.js'
import { appliedMigrations, isMigrated, MigrationError, migrate, readMigrations } from './migrate.js'

// One embedded engine per process: every test in this file shares one data directory.
const tmp = tempDir('vid-store-')
let store: Store
let repos: Repositories

beforeAll(async () => {
  store = createStore({ database: 'default', dataDir: tmp.dir })
  await migrate(store)
  repos = createRepositories(store)
})

afterAll(async () => {
  await store.close()
  tmp.remove()
})

const organization = organizationRow
const now = () => new Date().toISOString()

describe('migrations', () => {
  it('applies every shipped migration once and records it', async () => {
    const recorded = await appliedMigrations(store)
    expect([...recorded.keys()]).toEqual(readMigrations().map((m) => m.version))
    expect(await isMigrated(store)).toBe(true)
    expect((await migrate(store)).applied).toEqual([])
  })

  it('gives the tables the lists read a few keys of small compressed blocks (0022)', async () => {
    const tables = await store.query<{ name: string; engine_full: string }>(
      `SELECT name, engine_full FROM system.tables
       WHERE database = currentDatabase() AND name IN ('visitor_hours', 'visitors', 'companies')`,
    )
    expect(tables.map((table) => table.name).sort()).toEqual(['companies', 'visitor_hours', 'visitors'])
    for (const table of tables) {
      expect(table.engine_full, table.name).toMatch(/min_compress_block_size = 4096\b/)
      expect(table.engine_full, table.name).toMatch(/max_compress_block_size = 16384\b/)
    }
  })

  it('is safe to run concurrently', async () => {
    const dir = tempDir('vid-mig-')
    writeFileSync(
      path.join(dir.dir, '0001_things.sql'),
      'CREATE TABLE IF NOT EXISTS conc_things (id UInt32) ENGINE = MergeTree ORDER BY id;\n',
    )
    const results = await Promise.all([
      migrate(store, { dir: dir.dir, ledger: 'conc_ledger' }),
      migrate(store, { dir: dir.dir, ledger: 'conc_ledger' }),
    ])
    expect(results.flatMap((r) => r.applied).length).toBeGreaterThanOrEqual(1)
    expect((await appliedMigrations(store, 'conc_ledger')).size).toBe(1)
    dir.remove()
  })

  it('never records a migration that failed part-way, and completes it on the next run', async () => {
    const dir = tempDir('vid-mig-')
    const file = path.join(dir.dir, '0001_half.sql')
    writeFileSync(
      file,
      'CREATE TABLE IF NOT EXISTS half_a (id UInt32) ENGINE = MergeTree ORDER BY id;\nCREATE TABLE half_b (id Nope) ENGINE = MergeTree ORDER BY id;\n',
    )
    await expect(migrate(store, { dir: dir.dir, ledger: 'half_ledger' })).rejects.toBeInstanceOf(StoreError)
    expect((await appliedMigrations(store, 'half_ledger')).size).toBe(0)
    // The file was never applied, so fixing it is allowed; the next run completes it.
    writeFileSync(
      file,
      'CREATE TABLE IF NOT EXISTS half_a (id UInt32) ENGINE = MergeTree ORDER BY id;\nCREATE TABLE IF NOT EXISTS half_b (id UInt32) ENGINE = MergeTree ORDER BY id;\n',
    )
    expect((await migrate(store, { dir: dir.dir, ledger: 'half_ledger' })).applied).toEqual(['0001_half.sql'])
    expect(await store.query('SELECT count() AS n FROM half_b')).toEqual([{ n: 0 }])
    dir.remove()
  })

  it('refuses an applied migration that was edited', async () => {
    const dir = tempDir('vid-mig-')
    const file = path.join(dir.dir, '0001_edit.sql')
    writeFileSync(file, 'CREATE TABLE IF NOT EXISTS edit_a (id UInt32) ENGINE = MergeTree ORDER BY id;\n')
    await migrate(store, { dir: dir.dir, ledger: 'edit_ledger' })
    writeFileSync(file, 'CREATE TABLE IF NOT EXISTS edit_a (id UInt64) ENGINE = MergeTree ORDER BY id;\n')
    await expect(migrate(store, { dir: dir.dir, ledger: 'edit_ledger' })).rejects.toThrow(/was edited/)
    dir.remove()
  })

  it('stops at the level asked for, and applies the rest on the next run', async () => {
    const dir = tempDir('vid-mig-')
    for (const n of [1, 2, 3]) {
      writeFileSync(
        path.join(dir.dir, `000${n}_level.sql`),
        `CREATE TABLE IF NOT EXISTS level_${n} (id UInt32) ENGINE = MergeTree ORDER BY id;\n`,
      )
    }
    expect((await migrate(store, { dir: dir.dir, ledger: 'level_ledger', upTo: 2 })).applied).toEqual([
      '0001_level.sql',
      '0002_level.sql',
    ])
    expect([...(await appliedMigrations(store, 'level_ledger')).keys()]).toEqual([1, 2])
    const tables =
      "SELECT name FROM system.tables WHERE name IN ('level_1', 'level_2', 'level_3') ORDER BY name"
    expect(await store.query(tables)).toEqual([{ name: 'level_1' }, { name: 'level_2' }])
    expect((await migrate(store, { dir: dir.dir, ledger: 'level_ledger' })).applied).toEqual([
      '0003_level.sql',
    ])
    dir.remove()
  })

  it('refuses a store a later release upgraded (no downgrades), before applying anything', async () => {
    const dir = tempDir('vid-mig-')
    const write = (name: string) =>
      writeFileSync(
        path.join(dir.dir, name),
        `CREATE TABLE IF NOT EXISTS ${name.slice(5, -4)} (id UInt32) ENGINE = MergeTree ORDER BY id;\n`,
      )
    write('0001_newer_a.sql')
    write('0002_newer_b.sql')
    write('0003_newer_c.sql')
    await migrate(store, { dir: dir.dir, ledger: 'newer_ledger' })
    // The older release: it has 0001 only, and a 0002 of its own it has not applied yet.
    rmSync(path.join(dir.dir, '0002_newer_b.sql'))
    rmSync(path.join(dir.dir, '0003_newer_c.sql'))
    write('0002_older_b.sql')
    const run = migrate(store, { dir: dir.dir, ledger: 'newer_ledger' })
    await expect(run).rejects.toBeInstanceOf(MigrationError)
    await expect(run).rejects.toThrow(
      'The store was upgraded by a later release: it has migration 0003_newer_c.sql, which this release does ' +
        'not know (its latest is 0002_older_b.sql). Downgrades are not supported',
    )
    expect(await store.query("SELECT name FROM system.tables WHERE name = 'older_b'")).toEqual([])
    dir.remove()
  })

  it('rejects badly named files', () => {
    const dir = tempDir('vid-mig-')
    mkdirSync(dir.dir, { recursive: true })
    writeFileSync(path.join(dir.dir, '1_bad.sql'), 'SELECT 1;')
    expect(() => readMigrations(dir.dir)).toThrow(MigrationError)
    dir.remove()
  })
})

describe('entity repositories', () => {
  it('creates, reads its own write, updates, lists and deletes', async () => {
    const org = organization({ name: 'First' })
    await repos.organizations.save(org)
    expect(await repos.organizations.get({ id: org.id })).toMatchObject({ id: org.id, name: 'First' })

    await repos.organizations.save({ ...org, name: 'Second', max_overages: 12.5 })
    const updated = await repos.organizations.get({ id: org.id })
    expect(updated).toMatchObject({ name: 'Second', max_overages: 12.5 })
    expect(await repos.organizations.count({ id: org.id })).toBe(1)

    await repos.organizations.remove({ id: org.id })
    expect(await repos.organizations.get({ id: org.id })).toBeUndefined()
    expect(await repos.organizations.count({ id: org.id })).toBe(0)
  })

  it('a later save always wins, even in a tight loop', async () => {
    const org = organization()
    for (let i = 0; i < 20; i++) await repos.organizations.save({ ...org, name: `v${i}` })
    expect((await repos.organizations.get({ id: org.id }))?.name).toBe('v19')
  })

  it('filters by several columns, including null, with typed parameters', async () => {
    const agency = organization({ is_agency: true, name: 'Agency' })
    const child = organization({ agency_id: agency.id, name: "O'Brien; DROP TABLE organizations" })
    await repos.organizations.save(agency)
    await repos.organizations.save(child)
    const children = await repos.organizations.find({ agency_id: agency.id })
    expect(children.map((o) => o.name)).toEqual(["O'Brien; DROP TABLE organizations"])
    const roots = await repos.organizations.find({ agency_id: null, is_agency: true })
    expect(roots.some((o) => o.id === agency.id)).toBe(true)
  })

  it('uses composite keys', async () => {
    const organizationId = newId()
    const userId = newId()
    const row = {
      organization_id: organizationId,
      user_id: userId,
      role: 'owner' as const,
      created_at: now(),
      updated_at: now(),
    }
    await repos.memberships.save(row)
    expect(await repos.memberships.get({ organization_id: organizationId, user_id: userId })).toMatchObject({
      role: 'owner',
    })
    await repos.memberships.remove({ organization_id: organizationId, user_id: userId })
    expect(await repos.memberships.find({ organization_id: organizationId })).toEqual([])
  })

  it('refuses unknown columns and incomplete keys', async () => {
    await expect(repos.organizations.find({ nope: 1 } as never)).rejects.toThrow(/Unknown column/)
    await expect(repos.memberships.get({ organization_id: newId() })).rejects.toThrow(/key column user_id/)
  })

  it('keeps arrays and nullable timestamps', async () => {
    const id = `key_${newId()}`
    await repos.apiKeys.save({
      id,
      kind: 'organization',
      organization_id: newId(),
      partner_id: null,
      created_by_user_id: null,
      name: 'k',
      key_hash: 'h'.repeat(64),
      key_prefix: 'bsk_live_abc',
      scopes: ['read', 'write'],
      status: 'active',
      expires_at: '2030-01-01T00:00:00.000Z',
      last_used_at: null,
      created_at: now(),
      updated_at: now(),
    })
    const key = await repos.apiKeys.get({ id })
    expect(key?.scopes).toEqual(['read', 'write'])
    expect(key?.expires_at).toBe('2030-01-01T00:00:00.000Z')
    expect(key?.last_used_at).toBeNull()
  })
})

describe('sessions materialized view', () => {
  it('aggregates page views into sessions, right before any merge', async () => {
    const org = newId()
    const visitor = newId()
    const session = newId()
    const base = { organization_id: org, visitor_id: visitor, session_id: session, utm_source: '' }
    await store.insert('page_views', [
      {
        ...base,
        event_id: newId(),
        type: 'pageview',
        timestamp: '2026-01-01T10:00:00.000Z',
        url: 'https://a.test/?utm_source=x',
        path: '/',
        utm_source: 'x',
        country: 'US',
      },
      {
        ...base,
        event_id: newId(),
        type: 'pageview',
        timestamp: '2026-01-01T10:01:00.000Z',
        url: 'https://a.test/pricing',
        path: '/pricing',
      },
    ])
    await store.insert('page_views', [
      {
        ...base,
        event_id: newId(),
        type: 'engagement',
        timestamp: '2026-01-01T10:03:00.000Z',
        url: 'https://a.test/pricing',
        path: '/pricing',
        engaged_ms: 90_000,
        max_scroll: 80,
      },
    ])
    const rows = await store.query(
      `WITH argMinMerge(first_page_view) AS first
       SELECT session_id, sum(page_view_count) AS views, dateDiff('second', min(started_at), max(ended_at)) AS duration,
        max(max_scroll) AS scroll, first.landing_page AS landing,
        argMaxMerge(exit_page) AS exit, first.utm_source AS utm, first.country AS country
       FROM sessions WHERE organization_id = {org:UUID} GROUP BY session_id`,
      { org },
    )
    expect(rows).toEqual([
      {
        session_id: session,
        views: 2,
        duration: 180,
        scroll: 80,
        landing: 'https://a.test/?utm_source=x',
        exit: '/pricing',
        utm: 'x',
        country: 'US',
      },
    ])
  })

  it("takes a session's first-page-view fields from one page view, even when two share a timestamp", async () => {
    const org = newId()
    const visitor = newId()
    const session = newId()
    const at = '2026-01-01T10:00:00.000Z'
    const view = (url: string, country: string, utm: string) => ({
      organization_id: org,
      visitor_id: visitor,
      session_id: session,
      event_id: newId(),
      type: 'pageview',
      timestamp: at,
      url,
      country,
      utm_source: utm,
    })
    // Separate inserts: separate partial rows, combined by the read.
    await store.insert('page_views', [view('https://a.test/a', 'US', 'a')])
    await store.insert('page_views', [view('https://a.test/b', 'DE', 'b')])
    const [row] = await store.query<{ landing: string; country: string; utm: string }>(
      `WITH argMinMerge(first_page_view) AS first
       SELECT first.landing_page AS landing, first.country AS country, first.utm_source AS utm
       FROM sessions WHERE organization_id = {org:UUID} GROUP BY session_id`,
      { org },
    )
    const pairs = [
      ['https://a.test/a', 'US', 'a'],
      ['https://a.test/b', 'DE', 'b'],
    ]
    expect(pairs).toContainEqual([row?.landing, row?.country, row?.utm])
  })
})

describe('store errors', () => {
  it('classifies engine errors as query errors', async () => {
    const error = await store.query('SELECT * FROM no_such_table').catch((e: unknown) => e)
    expect(error).toBeInstanceOf(StoreError)
    expect((error as StoreError).kind).toBe('query')
  })

  it('classifies a refused connection as unavailable', async () => {
    const remote = createStore({ url: 'http://127.0.0.1:1', database: 'default', dataDir: tmp.dir })
    const error = await remote.query('SELECT 1').catch((e: unknown) => e)
    expect((error as StoreError).kind).toBe('unavailable')
    expect(await remote.ping()).toBe(false)
    await remote.close()
  })
})
