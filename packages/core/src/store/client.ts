import { mkdirSync } from 'node:fs'
import path from 'node:path'
import { type ClickHouseClient, ClickHouseError, createClient } from '@clickhouse/client'
import { createChdbConnection } from 'chdb/connection'

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
   * Inserts rows: objects (JSONEachRow), or, with `columns`, arrays in that column order
   * (JSONCompactEachRow: no key names, about a fifth cheaper for wide rows).
   */
  insert(table: string, rows: readonly object[], options?: InsertOptions): Promise<void>
  ping(): Promise<boolean>
  close(): Promise<void>
}

export interface InsertOptions {
  /** insert_deduplication_token: a retry of the same batch with the same token is a no-op. */
  dedupToken?: string
  /** The column of each array position when rows are arrays. */
  columns?: readonly string[]
}

export type StoreErrorKind = 'unavailable' | 'query'

/** A failed store call. `kind: 'unavailable'` means the store could not be reached: try again later. */
export class StoreError extends Error {
  override name = 'StoreError'
  constructor(
    readonly kind: StoreErrorKind,
    message: string,
    readonly clickhouseCode?: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }
}

/** Sorts a thrown error into query errors (our SQL or data) and unavailability (the store's state). */
export function classifyStoreError(error: unknown): StoreError {
  if (error instanceof StoreError) return error
  // The embedded engine throws its own copy of ClickHouseError, so recognise it by shape too.
  if (error instanceof ClickHouseError || (error as Error)?.constructor?.name === 'ClickHouseError') {
    const engineError = error as ClickHouseError
    return new StoreError('query', engineError.message, engineError.type ?? engineError.code, {
      cause: error,
    })
  }
  // Anything that is not the engine's own answer is transport: refused, reset, timed out, closed.
  const err = error as { code?: unknown; message?: unknown }
  const code = typeof err?.code === 'string' ? err.code : undefined
  const message = typeof err?.message === 'string' ? err.message : String(error)
  return new StoreError('unavailable', message, code, { cause: error })
}

// 64-bit integers as JSON numbers: every count we read fits in 2^53, and the embedded engine and a
// server then answer in the same shape.
const clickhouseSettings = {
  output_format_json_quote_64bit_integers: 0,
  date_time_output_format: 'iso',
  date_time_input_format: 'best_effort',
} as const

function createClickHouseClient(options: StoreOptions): ClickHouseClient {
  if (options.url) {
    return createClient({
      url: options.url,
      username: options.user ?? 'default',
      password: options.password ?? '',
      database: options.database,
      clickhouse_settings: clickhouseSettings,
      request_timeout: 30_000,
    })
  }
  const dir = path.join(options.dataDir, 'clickhouse')
  mkdirSync(dir, { recursive: true })
  // chdb re-declares @clickhouse/client-common's Connection type; the shapes are the same.
  type ClientConnection = NonNullable<Parameters<typeof createClient>[0]>['connection']
  return createClient({
    connection: createChdbConnection({ path: dir }) as unknown as ClientConnection,
    clickhouse_settings: clickhouseSettings,
  })
}

/**
 * Opens the store: the embedded engine under `dataDir` when `url` is unset, else a server.
 * @example const store = createStore({ database: 'default', dataDir: './data' })
 */
export function createStore(options: StoreOptions): Store {
  const client = createClickHouseClient(options)
  const run = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work()
    } catch (error) {
      throw classifyStoreError(error)
    }
  }
  return {
    kind: options.url ? 'server' : 'embedded',
    database: options.database,
    cluster: options.cluster,
    query: <T>(sql: string, params?: QueryParams) =>
      run(async () => {
        const result = await client.query({ query: sql, query_params: params ?? {}, format: 'JSONEachRow' })
        return (await result.json()) as T[]
      }),
    command: (sql, params) =>
      run(async () => {
        await client.command({ query: sql, query_params: params ?? {} })
      }),
    insert: (table, rows, insertOptions) =>
      run(async () => {
        if (rows.length === 0) return
        const columns = insertOptions?.columns
        await client.insert({
          table,
          values: rows as object[],
          ...(columns
            ? { format: 'JSONCompactEachRow', columns: columns as [string, ...string[]] }
            : { format: 'JSONEachRow' }),
          // Always set, '' meaning none: the embedded engine keeps a SET for the rest of its session,
          // so a token left over from one insert would silently deduplicate the next ones away.
          clickhouse_settings: { insert_deduplication_token: insertOptions?.dedupToken ?? '' },
        })
      }),
    ping: async () => {
      try {
        const result = await client.ping()
        return result.success
      } catch {
        return false
      }
    },
    close: () => client.close(),
  }
}
