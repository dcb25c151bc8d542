// Retention on the real embedded store: each organization's raw rows older than its limit are
// deleted and its IP addresses older than theirs truncated, the server's defaults for the others;
// the hourly counts without visitors stay; a pass with nothing to do changes nothing; on a cluster
// the statements go to each shard's tables.

import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { settleFirstHours } from '../analytics/first-hours.js'
import { newId } from '../ids.js'
import { createRepositories, type Repositories } from '../repositories.js'
import { createStore, type Store } from '../store/client.js'
import { migrate } from '../store/migrate.js'
import { mutationSql } from './mutation.js'
import { applyRetention, retentionStatements } from './retention.js'

const tmp = tempDir('vid-retention-')
let store: Store
let repos: Repositories
const day = 86_400_000
const now = Date.now()
const own = newId() // keeps 10 days, full IPs 2 days
const other = newId() // the server's defaults below: 30 days, full IPs 5 days
const defaults = { days: 30, ipDays: 5, intervalMs: 3_600_000 }

async function visit(organizationId: string, ageDays: number, ip: string) {
  const at = new Date(now - ageDays * day).toISOString()
  const visitor = newId()
  await store.insert('page_views', [
    {
      event_id: newId(),
      organization_id: organizationId,
      visitor_id: visitor,
      session_id: newId(),
      type: 'pageview',
      timestamp: at,
      received_at: at,
      url: `https://shop.test/${ageDays}`,
      path: `/${ageDays}`,
      ip,
      company_id: 'acme',
    },
  ])
  await store.insert('events', [
    {
      event_id: newId(),
      type: 'visitor.identified',
      organization_id: organizationId,
      visitor_id: visitor,
      payload: '{}',
      created_at: at,
      version: 1,
    },
  ])
}

const pageViews = (organizationId: string) =>
  store.query<{ path: string; ip: string }>(
    'SELECT path, ip FROM page_views WHERE organization_id = {organizationId:UUID} ORDER BY timestamp DESC',
    { organizationId },
  )
const count = async (table: string, organizationId: string) =>
  Number(
    (
      await store.query<{ n: number }>(`SELECT count() AS n FROM ${table} WHERE organization_id = {o:UUID}`, {
        o: organizationId,
      })
    )[0]?.n,
  )
const hourlyCounts = () =>
  store.query(
    'SELECT organization_id, kind, sum(rows) AS rows FROM first_hour_counts GROUP BY ALL ORDER BY ALL',
  )

beforeAll(async () => {
  store = createStore({ database: 'default', dataDir: tmp.dir })
  await migrate(store)
  repos = createRepositories(store)
  const at = new Date().toISOString()
  await repos.privacySettings.save({
    organization_id: own,
    retention_days: 10,
    ip_retention_days: 2,
    company_only: 0,
    company_only_countries: [],
    created_at: at,
    updated_at: at,
  })
  await visit(own, 1, '203.0.113.77')
  await visit(own, 5, '2001:db8:1234:5678::1')
  await visit(own, 15, '198.51.100.23')
  await visit(other, 1, '192.0.2.10')
  await visit(other, 10, '192.0.2.11')
  await visit(other, 40, '192.0.2.12')
  await settleFirstHours(store)
})

afterAll(async () => {
  await store?.close()
  tmp.remove()
})

describe('retention', () => {
  it("deletes raw rows past each organization's limit and truncates older IP addresses; hourly counts stay", async () => {
    const countsBefore = await hourlyCounts()
    const result = await applyRetention(store, repos.privacySettings, defaults, now)
    expect(result.truncatedIps).toBe(2)
    expect(result.deleted).toMatchObject({ page_views: 2, events: 2 })
    expect(await pageViews(own)).toEqual([
      { path: '/1', ip: '203.0.113.77' },
      { path: '/5', ip: '2001:db8:1234::' },
    ])
    expect(await pageViews(other)).toEqual([
      { path: '/1', ip: '192.0.2.10' },
      { path: '/10', ip: '192.0.2.0' },
    ])
    for (const table of ['sessions', 'visitor_hours', 'company_hours', 'events']) {
      expect(await count(table, own), table).toBeGreaterThan(0)
    }
    const oldHours = await store.query<{ n: number }>(
      `SELECT count() AS n FROM first_hours WHERE hour < {cutoff:DateTime64(3, 'UTC')} AND organization_id = {own:UUID}`,
      { cutoff: new Date(now - 10 * day).toISOString(), own },
    )
    expect(Number(oldHours[0]?.n)).toBe(0)
    expect(await hourlyCounts()).toEqual(countsBefore)
  })

  it('a pass with nothing past its limits changes nothing', async () => {
    expect(await applyRetention(store, repos.privacySettings, defaults, now)).toEqual({
      deleted: {},
      truncatedIps: 0,
    })
  })

  it('0 days keeps everything', async () => {
    const forever = { days: 0, ipDays: 0, intervalMs: 3_600_000 }
    const result = await applyRetention(store, repos.privacySettings, forever, now + 365 * day)
    // The organization with its own limits still applies them; the others keep everything.
    expect(await pageViews(other)).toHaveLength(2)
    expect(result.deleted.page_views).toBe(2)
  })

  it('on a cluster, each shard applies the statements to its own tables', () => {
    const { deletes, ips } = retentionStatements()
    const params = { rawOrganizations: [], rawCutoffs: [], rawDefault: new Date(now).toISOString() }
    const sql = mutationSql({ database: 'vid', cluster: 'main' }, deletes[0]!.mutation, params)
    expect(sql).toMatch(/^ALTER TABLE page_views_local ON CLUSTER 'main' DELETE WHERE timestamp < transform/)
    expect(sql).toMatch(/SETTINGS mutations_sync = 2$/)
    expect(sql).not.toMatch(/\{\w+:/)
    const ipSql = mutationSql({ database: 'vid', cluster: 'main' }, ips.mutation, {
      ipOrganizations: [],
      ipCutoffs: [],
      ipDefault: new Date(now).toISOString(),
    })
    expect(ipSql).toMatch(/^ALTER TABLE page_views_local ON CLUSTER 'main' UPDATE ip = multiIf/)
    expect(mutationSql({ database: 'vid', cluster: undefined }, deletes[1]!.mutation, params)).toMatch(
      /^ALTER TABLE sessions DELETE WHERE ended_at </,
    )
  })
})
