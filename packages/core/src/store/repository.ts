import { nextVersion } from '../ids.js'
import type { QueryParams, Store } from './client.js'

type Scalar = string | number | boolean | null

/**
 * How an entity is stored: its table, the columns that identify a row, and every column's type.
 * Its rows are as stored: snake_case, timestamps as ISO 8601 strings.
 */
export interface EntityDefinition<Row extends object> {
  table: string
  /** The table's ORDER BY: what makes two rows versions of the same entity. */
  key: readonly (keyof Row & string)[]
  /** ClickHouse type of every column, used to type query parameters. */
  columns: { readonly [K in keyof Row & string]: string }
}

export interface FindOptions<Row> {
  limit?: number
  offset?: number
  orderBy?: { column: keyof Row & string; direction?: 'ASC' | 'DESC' }
}

/**
 * Entity rows over ReplacingMergeTree(version, is_deleted): every save writes a new version,
 * every read uses FINAL, so a read right after a write sees it and deleted rows never show.
 */
export interface EntityRepository<Row extends object> {
  /** The live row with this identity, if any. */
  get(key: Partial<Row>): Promise<Row | undefined>
  find(filter: Partial<Row>, options?: FindOptions<Row>): Promise<Row[]>
  count(filter: Partial<Row>): Promise<number>
  /** Creates or replaces the row (a new version). */
  save(row: Row): Promise<Row>
  /** Deletes the row with this identity (a tombstone version). */
  remove(key: Partial<Row>): Promise<void>
}

/** Builds `col = {p0:Type} AND ...` from a filter, checking every column against the definition. */
function whereClause<Row extends object>(
  definition: EntityDefinition<Row>,
  filter: Partial<Row>,
): { sql: string; params: QueryParams } {
  const parts: string[] = []
  const params: QueryParams = {}
  for (const [column, value] of Object.entries(filter) as [string, Scalar | undefined][]) {
    if (value === undefined) continue
    const type = (definition.columns as Record<string, string>)[column]
    if (!type) throw new Error(`Unknown column ${definition.table}.${column}`)
    if (value === null) {
      parts.push(`isNull(${column})`)
      continue
    }
    const name = `p${parts.length}`
    parts.push(`${column} = {${name}:${type.replace(/^Nullable\((.*)\)$/, '$1')}}`)
    params[name] = value
  }
  return { sql: parts.length > 0 ? `WHERE ${parts.join(' AND ')}` : '', params }
}

function keyOf<Row extends object>(definition: EntityDefinition<Row>, key: Partial<Row>): Partial<Row> {
  const picked: Partial<Row> = {}
  for (const column of definition.key) {
    if (key[column] === undefined) throw new Error(`${definition.table}: key column ${column} is required`)
    picked[column] = key[column]
  }
  return picked
}

/**
 * Makes the repository of one entity.
 * @example const organizations = createEntityRepository(store, organizationsTable)
 */
export function createEntityRepository<Row extends object>(
  store: Store,
  definition: EntityDefinition<Row>,
): EntityRepository<Row> {
  const columns = Object.keys(definition.columns).join(', ')
  const find = async (filter: Partial<Row>, options: FindOptions<Row> = {}) => {
    const where = whereClause(definition, filter)
    const order = options.orderBy
      ? `ORDER BY ${String(options.orderBy.column)} ${options.orderBy.direction === 'DESC' ? 'DESC' : 'ASC'}`
      : ''
    if (options.orderBy && !(options.orderBy.column in definition.columns)) {
      throw new Error(`Unknown column ${definition.table}.${String(options.orderBy.column)}`)
    }
    const limit = options.limit === undefined ? '' : `LIMIT ${Math.max(0, Math.trunc(options.limit))}`
    const offset = options.offset ? `OFFSET ${Math.max(0, Math.trunc(options.offset))}` : ''
    return store.query<Row>(
      `SELECT ${columns} FROM ${definition.table} FINAL ${where.sql} ${order} ${limit} ${offset}`,
      where.params,
    )
  }
  return {
    get: async (key) => (await find(keyOf(definition, key), { limit: 1 }))[0],
    find,
    count: async (filter) => {
      const where = whereClause(definition, filter)
      const rows = await store.query<{ n: number }>(
        `SELECT count() AS n FROM ${definition.table} FINAL ${where.sql}`,
        where.params,
      )
      return Number(rows[0]?.n ?? 0)
    },
    save: async (row) => {
      await store.insert(definition.table, [{ ...row, version: nextVersion(), is_deleted: 0 }])
      return row
    },
    remove: async (key) => {
      await store.insert(definition.table, [
        { ...keyOf(definition, key), version: nextVersion(), is_deleted: 1 },
      ])
    },
  }
}
