import { mkdirSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import path from 'node:path'
import { Readable } from 'node:stream'
import { finished } from 'node:stream/promises'
import { type ClickHouseClient, type ClickHouseSettings, createClient } from '@clickhouse/client'
import { Session } from 'chdb'
import { createChdbConnection } from 'chdb/connection'
import { bindQueryParams } from './bind-params.js'
import { defaultStoreMemoryLimit, engineMemoryArgs, sessionMemorySettings } from './engine-memory.js'
import { classifyStoreError } from './store-error.js'

export { classifyStoreError, StoreError, type StoreErrorKind } from './store-error.js'

/** Named query parameters; their ClickHouse types are declared in the SQL as `{name:Type}`. */
export type QueryParams = Record<string, unknown>

export interface StoreOptions {
  /** HTTP(S) URL of a ClickHouse server; unset means the embedded engine. */
  url?: string | undefined
  user?: string | undefined
  password?: string | undefined
  database: string
  /** Cluster name: DDL runs ON CLUSTER and tables are Replicated*. */
  cluster?: string | undefined
  /** Where the embedded engine keeps its files (`<dataDir>/clickhouse`). */
  dataDir: string
  /** Embedded engine only: how many sessions of the data directory run queries side by side (default 4). */
  sessions?: number | undefined
  /** Embedded engine only: the sessions of `store.background` (default 2), apart from `sessions`. */
  backgroundSessions?: number | undefined
  /** Embedded engine only: bytes the engine may hold in all, caches included (default 768 MiB). */
  memoryLimit?: number | undefined
  /** Embedded engine only: bytes one statement may hold (default half of `memoryLimit`). */
  queryMemoryLimit?: number | undefined
}

/**
 * The one door to ClickHouse: SQL with typed parameters (`{org:UUID}`), never spliced values.
 * Errors come out as `StoreError`s classified as `unavailable` (retry later) or `query`.
 */
export interface Store {
  readonly kind: 'embedded' | 'server'
  readonly database: string
  readonly cluster: string | undefined
  query<T = Record<string, unknown>>(sql: string, params?: QueryParams): Promise<T[]>
  command(sql: string, params?: QueryParams): Promise<void>
  /**
   * The answer of a query of one String column as text: each row's value as it is, then `\n`
   * (TabSeparatedRaw). For text the engine writes itself (e.g. CSV lines): no JSON and no JS
   * object per row, which for a large answer cost more than the query.
   */
  text(sql: string, params?: QueryParams): Promise<string>
  /**
   * Inserts rows: objects (JSONEachRow), or, with `columns`, arrays in that column order
   * (JSONCompactEachRow: no key names, about a fifth cheaper for wide rows).
   */
  insert(table: string, rows: readonly object[], options?: InsertOptions): Promise<void>
  /**
   * Inserts rows already encoded as JSONCompactEachRow (one JSON array per line, values in
   * `options.columns` order): for rows kept encoded anyway (the ingest spool), no second encoding.
   */
  insertEncoded(
    table: string,
    body: string,
    options: InsertOptions & { columns: readonly string[] },
  ): Promise<void>
  ping(): Promise<boolean>
  close(): Promise<void>
  /**
   * The same store for background work (settling passes, scoring, sweeps): its calls run at a lower
   * engine priority (`priority`, paused while a request's query runs) on fewer threads and, embedded,
   * on sessions of their own, so a request never waits behind a pass. Unset on stand-ins made in
   * tests; `backgroundStore(store)` falls back to the store itself.
   */
  readonly background?: Store
}

/** `store.background` where there is one, else the store itself. */
export function backgroundStore(store: Store): Store {
  return store.background ?? store
}

export interface InsertOptions {
  /** insert_deduplication_token: a retry of the same batch with the same token is a no-op. */
  dedupToken?: string
  /** The column of each array position when rows are arrays. */
  columns?: readonly string[]
}

// 64-bit integers as JSON numbers: every count we read fits in 2^53, and the embedded engine and a
// server then answer in the same shape.
const clickhouseSettings = {
  output_format_json_quote_64bit_integers: 0,
  date_time_output_format: 'iso',
  date_time_input_format: 'best_effort',
} as const

/**
 * Engine priorities: requests run at 1, the highest, and background work at 10, which the engine
 * pauses while a query of a higher priority runs (0, the engine's default, would neither pause nor
 * be paused). Background work also takes fewer threads, so a pass leaves cores to the requests.
 */
const foregroundSettings = { priority: 1 } as const
export const backgroundSettings = {
  priority: 10,
  max_threads: Math.max(1, Math.floor(availableParallelism() / 4)),
} as const

/** Numeric settings as the client's types have them (64-bit integers travel as strings). */
const serverSettings = (settings: Record<string, number>): ClickHouseSettings =>
  Object.fromEntries(Object.entries(settings).map(([name, value]) => [name, String(value)]))

/** Which calls a lease is for: requests, or background work (`store.background`). */
type Lane = 'foreground' | 'background'

/** How one backend turns SQL and parameters into a request of @clickhouse/client. */
interface Backend {
  /**
   * A client to run one call of `lane` on, and what to call when the call is done; embedded, also
   * the session's raw insert (a Buffer handed to the engine as it is, no string copies).
   */
  lease(lane: Lane): Promise<{ client: ClickHouseClient; done(): void; rawInsert?: RawInsert }>
  request(
    sql: string,
    params: QueryParams | undefined,
    lane: Lane,
  ): { query: string; query_params?: QueryParams; clickhouse_settings?: ClickHouseSettings }
  close(): Promise<void>
}

/** A ClickHouse server: parameters travel separately and the server binds them; the lane's settings go with each call. */
function serverBackend(options: StoreOptions): Backend {
  const client = createClient({
    url: options.url,
    username: options.user ?? 'default',
    password: options.password ?? '',
    database: options.database,
    clickhouse_settings: { ...clickhouseSettings, ...serverSettings(foregroundSettings) },
    request_timeout: 30_000,
  })
  return {
    lease: async () => ({ client, done: () => {} }),
    request: (sql, params, lane) => ({
      query: sql,
      query_params: params ?? {},
      ...(lane === 'background' ? { clickhouse_settings: serverSettings(backgroundSettings) } : {}),
    }),
    close: () => client.close(),
  }
}

type ChdbConnection = ReturnType<typeof createChdbConnection>
type RawInsert = ChdbConnection['chdb']['rawInsert']

interface EmbeddedSession {
  client: ClickHouseClient
  rawInsert: RawInsert
  /** Resolves once the session's settings are set (once, not per query). */
  ready: Promise<void>
  running: number
}

/**
 * Engine configuration the embedded engine starts with: `BACKUP ... TO File(path)` and `RESTORE`
 * need `backups.allowed_path`. Any path: the engine runs inside this process, which may write
 * wherever its user may, and only our own SQL names a path (store/backup.ts).
 */
const embeddedEngineArgs = ['--backups.allowed_path=/']

/** The memory bounds of the embedded engine (engine-memory.ts), from the options or their defaults. */
function engineMemory(options: StoreOptions) {
  const memoryLimit = options.memoryLimit ?? defaultStoreMemoryLimit
  return { memoryLimit, queryMemoryLimit: options.queryMemoryLimit ?? Math.floor(memoryLimit / 2) }
}

// chdb re-declares @clickhouse/client-common's Connection type; the shapes are the same.
type ClientConnection = NonNullable<Parameters<typeof createClient>[0]>['connection']

/** `count` sessions of the engine under `dir`, each with `settings` set once; a call goes to the least busy. */
function sessionPool(dir: string, count: number, settings: Record<string, string | number>) {
  const set = Object.entries(settings)
    .map(([name, value]) => `${name} = ${typeof value === 'string' ? `'${value}'` : value}`)
    .join(', ')
  const sessions: EmbeddedSession[] = Array.from({ length: Math.max(1, count) }, () => {
    const connection = createChdbConnection({ path: dir })
    const client = createClient({ connection: connection as unknown as ClientConnection })
    return {
      client,
      rawInsert: (params) => connection.chdb.rawInsert(params),
      ready: client.command({ query: `SET ${set}` }).then(() => {}),
      running: 0,
    }
  })
  // Keep a failed SET from surfacing as an unhandled rejection before the first call awaits it.
  for (const session of sessions) session.ready.catch(() => {})
  let next = 0
  return {
    async lease() {
      let chosen = sessions[next]!
      for (const session of sessions) if (session.running < chosen.running) chosen = session
      next = (next + 1) % sessions.length
      chosen.running += 1
      try {
        await chosen.ready
      } catch (error) {
        chosen.running -= 1
        throw error
      }
      const done = () => {
        chosen.running -= 1
      }
      return { client: chosen.client, done, rawInsert: chosen.rawInsert }
    },
    close: () => Promise.all(sessions.map((session) => session.client.close())),
  }
}

/**
 * The embedded engine: sessions of one data directory, each call on the least busy one of its lane
 * (requests on `sessions`, background work on `backgroundSessions` of its own: a long pass never
 * holds a session a request would queue on). Values are bound as typed literals (bind-params.ts):
 * the engine's own binder serializes every parameterized query of the process, while queries
 * without parameters run side by side. Settings are set once per session; sent with every query
 * they would cost a statement each.
 */
function embeddedBackend(options: StoreOptions): Backend {
  const dir = path.join(options.dataDir, 'clickhouse')
  mkdirSync(dir, { recursive: true })
  // The first connection of a data directory starts its engine with its arguments; the sessions
  // below share that engine. Kept open until they are closed, so the engine keeps them.
  const memory = engineMemory(options)
  const engine = new Session(dir, { connectionArgs: [...embeddedEngineArgs, ...engineMemoryArgs(memory)] })
  const common = { ...clickhouseSettings, log_queries: 0, ...sessionMemorySettings(memory) }
  const pools = {
    foreground: sessionPool(dir, options.sessions ?? 4, { ...common, ...foregroundSettings }),
    background: sessionPool(dir, options.backgroundSessions ?? 2, { ...common, ...backgroundSettings }),
  }
  return {
    lease: (lane) => pools[lane].lease(),
    request: (sql, params) => ({ query: bindQueryParams(sql, params) }),
    close: async () => {
      await Promise.all([pools.foreground.close(), pools.background.close()])
      engine.close()
    },
  }
}

/** The calls of one lane of `backend`, as a Store; `background` is the background lane's. */
function laneStore(
  backend: Backend,
  options: StoreOptions,
  lane: Lane,
  background: () => Store | undefined,
): Store {
  const run = async <T>(
    work: (client: ClickHouseClient, rawInsert?: RawInsert) => Promise<T>,
  ): Promise<T> => {
    try {
      const { client, done, rawInsert } = await backend.lease(lane)
      try {
        return await work(client, rawInsert)
      } finally {
        done()
      }
    } catch (error) {
      throw classifyStoreError(error)
    }
  }
  const request = (sql: string, params?: QueryParams) => backend.request(sql, params, lane)
  return {
    kind: options.url ? 'server' : 'embedded',
    database: options.database,
    cluster: options.cluster,
    get background() {
      return background()
    },
    query: <T>(sql: string, params?: QueryParams) =>
      run(async (client) => {
        const result = await client.query({ ...request(sql, params), format: 'JSONEachRow' })
        return (await result.json()) as T[]
      }),
    text: (sql, params) =>
      run(async (client) => {
        const result = await client.query({ ...request(sql, params), format: 'TabSeparatedRaw' })
        return result.text()
      }),
    command: (sql, params) =>
      run(async (client) => {
        await client.command(request(sql, params))
      }),
    insert: (table, rows, insertOptions) => {
      if (rows.length === 0) return Promise.resolve()
      return run(async (client) => {
        const columns = insertOptions?.columns
        await client.insert({
          table,
          values: rows as object[],
          ...(columns
            ? { format: 'JSONCompactEachRow', columns: columns as [string, ...string[]] }
            : { format: 'JSONEachRow' }),
          // Always set, '' meaning none: the embedded engine keeps a SET for the rest of its session,
          // so a token left over from one insert would silently deduplicate the next ones away.
          clickhouse_settings: {
            ...request('', undefined).clickhouse_settings,
            insert_deduplication_token: insertOptions?.dedupToken ?? '',
          },
        })
      })
    },
    insertEncoded: (table, body, insertOptions) => {
      if (body.length === 0) return Promise.resolve()
      return run(async (client, rawInsert) => {
        // Always set, as in `insert`.
        const settings = { insert_deduplication_token: insertOptions.dedupToken ?? '' }
        if (rawInsert) {
          const columns = [...insertOptions.columns]
          await rawInsert({
            table,
            columns,
            format: 'JSONCompactEachRow',
            values: Buffer.from(body),
            settings,
          })
          return
        }
        const result = await client.exec({
          query: `INSERT INTO ${table} (${insertOptions.columns.join(', ')}) FORMAT JSONCompactEachRow`,
          values: Readable.from([body], { objectMode: false }),
          clickhouse_settings: { ...request('', undefined).clickhouse_settings, ...settings },
        })
        result.stream.resume()
        await finished(result.stream)
      })
    },
    ping: async () => {
      try {
        return await run(async (client) => (await client.ping()).success)
      } catch {
        return false
      }
    },
    close: () => backend.close(),
  }
}

/**
 * Opens the store: the embedded engine under `dataDir` when `url` is unset, else a server.
 * `store.background` is the same store for background work (see `Store.background`).
 * @example const store = createStore({ database: 'default', dataDir: './data' })
 */
export function createStore(options: StoreOptions): Store {
  const backend = options.url ? serverBackend(options) : embeddedBackend(options)
  const background: Store = laneStore(backend, options, 'background', () => background)
  return laneStore(backend, options, 'foreground', () => background)
}
