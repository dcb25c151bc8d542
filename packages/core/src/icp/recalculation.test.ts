// Recalculation jobs and incremental re-scoring on the real embedded store, with the in-process
// coordination adapters (the Redis ones pass the same contract tests).

import { timeUntil } from '@visitor-id/testing/poll'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMemoryCoordination } from '../coordination/index.js'
import type { Coordination } from '../coordination/ports.js'
import { newId, nextVersion } from '../ids.js'
import { createRepositories, type Repositories } from '../repositories.js'
import { createStore, type QueryParams, type Store } from '../store/client.js'
import { migrate } from '../store/migrate.js'
import { blankContactFields } from '../visitor-tracking/rows.js'
import { createIcpConfig, updateIcpConfig } from './configs.js'
import { rescoreChangedVisitors } from './incremental.js'
import {
  recalculationJobName,
  recalculationStatus,
  requestRecalculation,
  runRecalculation,
} from './recalculation.js'
import type { IcpConfigRow } from './rows.js'
import { icpStats } from './stats.js'

const tmp = tempDir('vid-icp-jobs-')
let store: Store
let repos: Repositories
let coordination: Coordination
const silent = { info() {}, warn() {} }

/** Scoring statements running right now, the most seen at once, and a hook run as one starts. */
const inserts = {
  running: 0,
  most: 0,
  onStart: undefined as ((params?: QueryParams) => Promise<void>) | undefined,
}

beforeAll(async () => {
  const inner = createStore({ database: 'default', dataDir: tmp.dir })
  await migrate(inner)
  store = {
    ...inner,
    async command(sql: string, params?: QueryParams) {
      const scoring = sql.startsWith('INSERT INTO icp_scores')
      if (scoring) {
        inserts.most = Math.max(inserts.most, ++inserts.running)
        await inserts.onStart?.(params)
      }
      try {
        await inner.command(sql, params)
      } finally {
        if (scoring) inserts.running--
      }
    },
  }
  repos = createRepositories(store)
  coordination = createMemoryCoordination()
})

afterAll(async () => {
  await coordination?.close()
  await store?.close()
  tmp.remove()
})

const deps = () => ({ store, repos, coordination, log: silent })

async function pageViews(org: string, visitor: string, country: string, count = 1) {
  const at = Date.now()
  await store.insert(
    'page_views',
    Array.from({ length: count }, (_, i) => ({
      event_id: newId(),
      organization_id: org,
      visitor_id: visitor,
      session_id: newId(),
      type: 'pageview',
      timestamp: new Date(at - i * 1000).toISOString(),
      received_at: new Date(at).toISOString(),
      url: 'https://s.test/',
      path: '/',
      country,
    })),
  )
}

async function scoreOf(config: IcpConfigRow, visitor: string) {
  const [row] = await store.query<{ matched: number; computed_at: string }>(
    `SELECT matched, computed_at FROM icp_scores FINAL
     WHERE organization_id = {org:UUID} AND config_id = {id:String} AND visitor_id = {visitor:UUID}`,
    { org: config.organization_id, id: config.id, visitor },
  )
  return row
}

const germanRules = {
  groups: [{ operator: 'AND', conditions: [{ type: 'country', comparator: 'equals', value: 'DE' }] }],
}

describe('recalculation jobs', () => {
  it('queue (twice: one job), run, report: status queued -> succeeded with counts, a log line per run', async () => {
    const org = newId()
    const [a, b] = [newId(), newId()]
    await pageViews(org, a, 'DE', 3)
    await pageViews(org, b, 'FR')
    const config = await createIcpConfig(repos, coordination.locks, org, 'partner', {
      name: 'Germany',
      rules: germanRules,
    })
    expect((await requestRecalculation(coordination, config)).status).toBe('queued')
    expect((await requestRecalculation(coordination, config)).status).toBe('queued') // adds no second job
    const lines: object[] = []
    let runs = 0
    const finished = new Promise<void>((resolve) => {
      coordination.jobs.process<{ organizationId: string; configId: string }>(
        recalculationJobName,
        async (job) => {
          runs++
          await runRecalculation({ ...deps(), log: { info: (o) => lines.push(o), warn() {} } }, job.data)
          resolve()
        },
      )
    })
    await finished
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(runs).toBe(1)
    const status = await recalculationStatus(coordination, config.id)
    expect(status).toMatchObject({ status: 'succeeded', visitors: 2, matches: 1, error: null })
    expect(Date.parse(status!.finishedAt!)).toBeGreaterThanOrEqual(Date.parse(status!.startedAt!))
    expect(lines).toEqual([expect.objectContaining({ configId: config.id, visitors: 2, matches: 1 })])
    expect((await scoreOf(config, a))?.matched).toBe(1)
    expect(await scoreOf(config, b)).toBeUndefined() // nothing to show: no row, which reads as not matched
  })

  it('two recalculations of one config asked at once run one after the other', async () => {
    const org = newId()
    await pageViews(org, newId(), 'DE')
    const config = await createIcpConfig(repos, coordination.locks, org, 'partner', {
      name: 'Twice',
      rules: germanRules,
    })
    inserts.most = 0
    await Promise.all([
      runRecalculation(deps(), { organizationId: org, configId: config.id }),
      runRecalculation(deps(), { organizationId: org, configId: config.id }),
    ])
    expect(inserts.most).toBe(1)
    expect(await recalculationStatus(coordination, config.id)).toMatchObject({
      status: 'succeeded',
      matches: 1,
    })
  })

  it('asking during a run queues exactly one more run, after it', async () => {
    const org = newId()
    await pageViews(org, newId(), 'DE')
    const config = await createIcpConfig(repos, coordination.locks, org, 'partner', {
      name: 'During',
      rules: germanRules,
    })
    const queue = createMemoryCoordination()
    const local = { ...deps(), coordination: queue }
    let runs = 0
    let asked = false
    inserts.onStart = async () => {
      if (asked) return
      asked = true
      expect((await recalculationStatus(queue, config.id))?.status).toBe('running')
      await requestRecalculation(queue, config) // twice during the run: one follow-up
      await requestRecalculation(queue, config)
    }
    try {
      await requestRecalculation(queue, config)
      queue.jobs.process<{ organizationId: string; configId: string }>(
        recalculationJobName,
        async (job) => {
          runs++
          await runRecalculation(local, job.data)
        },
        { concurrency: 2 },
      )
      await timeUntil(
        async () => runs === 2 && (await recalculationStatus(queue, config.id))?.status === 'succeeded',
        10_000,
      )
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect(runs).toBe(2)
    } finally {
      inserts.onStart = undefined
      await queue.close()
    }
  })

  it('a failing run reports failed with its error', async () => {
    const org = newId()
    const config = await createIcpConfig(repos, coordination.locks, org, 'partner', {
      name: 'Broken',
      rules: germanRules,
    })
    // A row no parser would accept (written behind the service's back) makes the run fail.
    await repos.icpConfigs.save({ ...config, rules: '{"groups": "nope"}' })
    await expect(runRecalculation(deps(), { organizationId: org, configId: config.id })).rejects.toThrow()
    expect(await recalculationStatus(coordination, config.id)).toMatchObject({
      status: 'failed',
      error: expect.any(String),
    })
  })

  it('a changed config is scored anew: visitors who stop matching lose their match', async () => {
    const org = newId()
    const visitor = newId()
    await pageViews(org, visitor, 'DE')
    let config = await createIcpConfig(repos, coordination.locks, org, 'partner', {
      name: 'Moving',
      rules: germanRules,
    })
    await runRecalculation(deps(), { organizationId: org, configId: config.id })
    expect((await scoreOf(config, visitor))?.matched).toBe(1)
    config = await updateIcpConfig(repos, coordination.locks, config, {
      rules: {
        groups: [{ operator: 'AND', conditions: [{ type: 'country', comparator: 'equals', value: 'FR' }] }],
      },
    })
    await runRecalculation(deps(), { organizationId: org, configId: config.id })
    expect((await scoreOf(config, visitor))?.matched).toBe(0)
    const range = { from: new Date(Date.now() - 3600_000).toISOString(), to: new Date().toISOString() }
    expect(await icpStats(store, org, [config], range)).toMatchObject({ visitors: 1, totalMatches: 0 })
  })
})

describe('incremental re-scoring', () => {
  it('scores visitors with new activity or a new identification, and only those', async () => {
    const org = newId()
    const [moving, newcomer, identified, untouched] = [newId(), newId(), newId(), newId()]
    await pageViews(org, moving, 'FR')
    await pageViews(org, untouched, 'FR')
    const config = await createIcpConfig(repos, coordination.locks, org, 'partner', {
      name: 'Germans and CTOs',
      rules: {
        groups: [
          { operator: 'OR', conditions: [{ type: 'country', comparator: 'equals', value: 'DE' }] },
          { operator: 'AND', conditions: [{ type: 'job_title', comparator: 'contains', value: 'cto' }] },
        ],
      },
    })
    await runRecalculation(deps(), { organizationId: org, configId: config.id })
    // Catch up on everything written so far; no overlap, so the next pass reads only what follows.
    await rescoreChangedVisitors(deps(), { overlapMs: 0 })
    await new Promise((resolve) => setTimeout(resolve, 5))
    expect(await scoreOf(config, moving)).toBeUndefined()
    // A stale row the pass must leave alone: only a full recalculation would correct it.
    await store.insert('icp_scores', [
      {
        organization_id: org,
        config_id: config.id,
        visitor_id: untouched,
        matched: 1,
        persona: 0,
        score: 100,
        computed_at: new Date().toISOString(),
        version: 1,
      },
    ])

    await pageViews(org, moving, 'DE') // the latest page view's country counts
    await pageViews(org, newcomer, 'DE')
    const at = new Date().toISOString()
    await repos.visitors.save({
      ...blankContactFields,
      id: identified,
      organization_id: org,
      email: 'ada@acme.test',
      first_name: 'Ada',
      last_name: '',
      job_title: 'CTO',
      seniority: '',
      department: '',
      country: '',
      linkedin_url: '',
      company_id: '',
      identified_at: at,
      first_seen_at: at,
      last_seen_at: at,
      created_at: at,
      updated_at: at,
    })
    expect(await rescoreChangedVisitors(deps(), { overlapMs: 0 })).toBe(1)
    expect((await scoreOf(config, moving))?.matched).toBe(1)
    expect((await scoreOf(config, newcomer))?.matched).toBe(1)
    expect((await scoreOf(config, identified))?.matched).toBe(1)
    expect((await scoreOf(config, untouched))?.matched).toBe(1) // not re-scored
    await runRecalculation(deps(), { organizationId: org, configId: config.id })
    expect((await scoreOf(config, untouched))?.matched).toBe(0) // the full run corrects it
  })

  it('goes on from the last pass after a start: the watermark is in the store', async () => {
    const org = newId()
    const visitor = newId()
    await pageViews(org, visitor, 'FR')
    const config = await createIcpConfig(repos, coordination.locks, org, 'partner', {
      name: 'Restarted',
      rules: germanRules,
    })
    await runRecalculation(deps(), { organizationId: org, configId: config.id })
    await rescoreChangedVisitors(deps(), { overlapMs: 0 })
    await new Promise((resolve) => setTimeout(resolve, 5))
    // A stale row a pass over the visitor would correct.
    await store.insert('icp_scores', [
      {
        organization_id: org,
        config_id: config.id,
        visitor_id: visitor,
        matched: 1,
        persona: 0,
        score: 100,
        computed_at: new Date().toISOString(),
        version: nextVersion(),
      },
    ])
    // A new process: nothing in its coordination, the last pass on record in the store.
    const restarted = createMemoryCoordination()
    try {
      await rescoreChangedVisitors({ store, repos, coordination: restarted, log: silent }, { overlapMs: 0 })
    } finally {
      await restarted.close()
    }
    expect((await scoreOf(config, visitor))?.matched).toBe(1) // not read again
  })

  it('a pass and a recalculation of a changed config take turns: the pass never undoes the new results', async () => {
    const org = newId()
    const visitor = newId()
    await pageViews(org, visitor, 'DE')
    let config = await createIcpConfig(repos, coordination.locks, org, 'partner', {
      name: 'French first',
      rules: {
        groups: [{ operator: 'AND', conditions: [{ type: 'country', comparator: 'equals', value: 'FR' }] }],
      },
    })
    await runRecalculation(deps(), { organizationId: org, configId: config.id })
    await rescoreChangedVisitors(deps(), { overlapMs: 0 })
    await new Promise((resolve) => setTimeout(resolve, 5))
    await pageViews(org, visitor, 'DE') // the visitor changed: the next pass scores them
    // The pass's scoring statement waits once it has started, with the config as it was.
    let resume = () => {}
    const paused = new Promise<void>((started) => {
      inserts.onStart = async (params) => {
        if (params?.configId !== config.id) return
        inserts.onStart = undefined
        started()
        await new Promise<void>((resolve) => {
          resume = resolve
        })
      }
    })
    const pass = rescoreChangedVisitors(deps(), { overlapMs: 0 })
    await paused
    // Meanwhile the config changes and its recalculation is asked for.
    config = await updateIcpConfig(repos, coordination.locks, config, { rules: germanRules })
    const recalculation = runRecalculation(deps(), { organizationId: org, configId: config.id })
    const sleep = new Promise((resolve) => setTimeout(resolve, 1000))
    expect(await Promise.race([recalculation.then(() => 'ran'), sleep.then(() => 'waits')])).toBe('waits')
    resume()
    await pass
    await recalculation
    expect((await scoreOf(config, visitor))?.matched).toBe(1)
  })

  it('a worker pass scores within its interval, without a recalculation', async () => {
    const org = newId()
    const config = await createIcpConfig(repos, coordination.locks, org, 'partner', {
      name: 'Live',
      rules: germanRules,
    })
    await runRecalculation(deps(), { organizationId: org, configId: config.id })
    const { startIncrementalScoring } = await import('./incremental.js')
    const scoring = startIncrementalScoring(deps(), 100)
    try {
      const visitor = newId()
      await pageViews(org, visitor, 'DE')
      const ms = await timeUntil(async () => (await scoreOf(config, visitor))?.matched === 1, 10_000)
      expect(ms).toBeLessThan(10_000)
    } finally {
      await scoring.stop()
    }
  })
})
