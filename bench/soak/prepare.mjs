// The soak benchmark's store, prepared once and kept: the analytics dataset (page views,
// companies, identified visitors, an active ICP config and its scores), contacts for the identify
// hits, first_hours settled, and a sample of visitor ids for the profile reads. A run works on a
// copy, so the store is filled once however often the soak runs.
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { settleFirstHours } from '@visitor-id/core/analytics'
import { fillAnalyticsDataset } from '../analytics/dataset.mjs'
import { bootstrapDataDir } from '../analytics/server.mjs'
import { insertContacts } from '../ingest/traffic.mjs'
import { withStore } from '../webhooks/dataset.mjs'

const readyFile = 'soak-store.json'

/**
 * The store of `dir`, filled when it holds none yet (`pageViews` page views, `contacts` contacts).
 * Returns what the soak needs: the bootstrap keys, the organization, visitor ids, the sizes.
 */
export async function preparedStore(dir, { pageViews, contacts = 100_000, log }) {
  const ready = path.join(dir, readyFile)
  if (existsSync(ready)) {
    const info = JSON.parse(readFileSync(ready, 'utf8'))
    if (info.pageViews !== pageViews) {
      throw new Error(
        `${dir} holds a store of ${info.pageViews} page views, not ${pageViews}: use another --store`,
      )
    }
    return info
  }
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  const started = performance.now()
  log(`preparing ${dir}: ${pageViews} page views`)
  const bootstrap = await bootstrapDataDir(dir)
  const dataset = await fillAnalyticsDataset(dir, {
    organizationId: bootstrap.organizationId,
    pageViews,
    visitors: Math.round(pageViews / 10),
    log,
  })
  const visitorIds = await withStore(dir, async (store) => {
    await insertContacts(store, contacts)
    // Settled now, so the soak's worker starts from a settled store as a live one is.
    await settleFirstHours(store)
    const rows = await store.query(
      `SELECT toString(visitor_id) AS id FROM visitor_hours WHERE organization_id = {organizationId:UUID}
       GROUP BY visitor_id ORDER BY cityHash64(visitor_id) LIMIT 2000`,
      { organizationId: bootstrap.organizationId },
    )
    return rows.map((row) => row.id)
  })
  const info = {
    pageViews,
    contacts,
    organizationId: bootstrap.organizationId,
    icpConfigId: dataset.icpConfigId,
    visitorIds,
    counts: dataset.counts,
    preparedAt: new Date().toISOString(),
    prepareSeconds: Math.round((performance.now() - started) / 1000),
  }
  writeFileSync(ready, `${JSON.stringify(info, null, 2)}\n`)
  log(`prepared ${dir} in ${info.prepareSeconds} s`)
  return info
}

/** A copy of the prepared store for one run (the run writes into it; the kept one stays as it is). */
export function copyStore(from, to) {
  rmSync(to, { recursive: true, force: true })
  cpSync(from, to, { recursive: true })
  // A lock file copied from a store that was open would refuse the server; none is open here.
  rmSync(path.join(to, '.lock'), { force: true })
  return to
}
