// An exact cache of statistics answers: an answer is reused only while the data it was computed
// from is unchanged, and identical requests that arrive together share one computation.
//
// "Unchanged" is read from the engine, not announced by writers: the data version is the set of
// active parts of every table a statistics answer reads (`system.parts`). Any insert (a page view
// batch and the rollups its views write, an identification, a profile, a score, a config, a
// filtered-hit count, a settling pass), any mutation and any merge adds or replaces a part, so the
// version changes with every write whatever the code path that wrote it; no write path can forget
// to invalidate. It is one statement of about a millisecond (bench/analytics/RESULTS.md, "Why the
// code is as it is"), against 50-150 ms for an answer at 10 M page views.
//
// Exact: the version is read before the answer's statements, so an answer holds at least the data
// of its version; a write after the read makes a new version for the next request. Every
// organization's answers go stale together (the parts are not per organization): under ingest the
// cache mostly shares answers among identical requests of the same second.
import { createHash } from 'node:crypto'
import type { Store } from '../store/client.js'
import { effectiveRange, type StatisticsQuery } from './scope.js'

/** Every table a statistics answer (companies, visitors, totals, filtered hits) reads. */
export const answerTables = [
  'first_hours',
  'first_hour_counts',
  'company_hours',
  'visitor_hours',
  'visitors',
  'companies',
  'icp_scores',
  'icp_configs',
  'dropped_hits',
] as const

export type CacheOutcome = 'hit' | 'shared' | 'miss' | 'off'

export interface AnswerCacheStats {
  hit: number
  shared: number
  miss: number
  off: number
}

export interface AnswerCache {
  /**
   * The answer of `key` (the request, everything that decides its answer), from the cache when
   * the data is unchanged since it was computed, else from `compute` (shared with identical
   * requests under way). `outcome` says which.
   */
  get<T>(key: string, compute: () => Promise<T>): Promise<{ value: T; outcome: CacheOutcome }>
  stats(): AnswerCacheStats
}

export interface AnswerCacheOptions {
  /**
   * The rows the kept answers hold at most (a list's rows, 1 for a totals answer), the oldest
   * answer going first; 0 turns the cache off.
   */
  maxRows: number
}

/** The data version: which parts of the answer tables are active (changes with every write). */
export async function dataVersion(store: Store): Promise<string> {
  const [row] = await store.query<{ parts: number; names: string }>(
    `SELECT count() AS parts, toString(groupBitXor(cityHash64(table, name))) AS names
    FROM system.parts
    WHERE database = currentDatabase() AND active AND table IN {tables:Array(String)}`,
    { tables: [...answerTables] },
  )
  return `${row?.parts}:${row?.names}`
}

/**
 * The answer cache of a store. Off (every request computed) when `maxRows` is 0, and on a cluster,
 * whose parts are spread over its nodes (a node's `system.parts` is not the version).
 */
export function createAnswerCache(store: Store, options: AnswerCacheOptions): AnswerCache {
  const stats: AnswerCacheStats = { hit: 0, shared: 0, miss: 0, off: 0 }
  const on = options.maxRows > 0 && store.cluster === undefined
  const answers = createWeightedFifo<{ version: string; value: unknown }>(options.maxRows)
  /** Computations under way, by version and key. */
  const running = new Map<string, Promise<unknown>>()
  return {
    stats: () => ({ ...stats }),
    async get<T>(key: string, compute: () => Promise<T>) {
      if (!on) {
        stats.off++
        return { value: await compute(), outcome: 'off' as const }
      }
      const version = await dataVersion(store)
      const kept = answers.get(key)
      if (kept?.version === version) {
        stats.hit++
        return { value: kept.value as T, outcome: 'hit' as const }
      }
      const flight = `${version}\n${key}`
      const under = running.get(flight)
      if (under) {
        stats.shared++
        return { value: (await under) as T, outcome: 'shared' as const }
      }
      stats.miss++
      const computing = compute()
      running.set(flight, computing)
      try {
        const value = await computing
        // Kept under the version read before computing: a write since makes it a miss, never stale.
        answers.set(key, { version, value }, rowsOf(value))
        return { value, outcome: 'miss' as const }
      } finally {
        running.delete(flight)
      }
    },
  }
}

/** An answer's weight: the rows of a list, 1 for anything else. */
const rowsOf = (value: unknown) => {
  const rows = (value as { rows?: unknown } | undefined)?.rows
  return Array.isArray(rows) ? Math.max(1, rows.length) : 1
}

/** A map that holds at most `maxWeight` (first in, first out); an entry heavier than that is not kept. */
function createWeightedFifo<V>(maxWeight: number) {
  const map = new Map<string, { value: V; weight: number }>()
  let total = 0
  const remove = (key: string) => {
    total -= map.get(key)?.weight ?? 0
    map.delete(key)
  }
  return {
    get: (key: string) => map.get(key)?.value,
    set(key: string, value: V, weight: number) {
      remove(key)
      if (weight > maxWeight) return
      while (total + weight > maxWeight) remove(map.keys().next().value!)
      map.set(key, { value, weight })
      total += weight
    },
  }
}

/**
 * The key of a statistics answer: everything that decides it (the endpoint, the organization, the
 * range as counted, the audience, the page, the sort, the company, and the organization's ICP
 * configs as the request read them from memory), hashed. Two requests with the same key and the
 * same data version get the same answer.
 */
export function answerKey(endpoint: string, query: StatisticsQuery): string {
  const { range, configs, ...rest } = query
  const described = JSON.stringify({ endpoint, ...rest, range: effectiveRange(range), configs })
  return createHash('sha256').update(described).digest('base64url')
}
