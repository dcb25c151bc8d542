import { randomUUID } from 'node:crypto'
import type { PubSub } from '../coordination/ports.js'
import type { EntityDefinition, EntityRepository, FindOptions } from './repository.js'

/**
 * The pubsub channel on which processes announce a changed entity table (message: `<origin> <table>`),
 * so every other process drops its copies of that table at once.
 */
export const entityChangedChannel = 'entities:changed'

export interface ReadModelOptions {
  pubsub: PubSub
  /** How long a copy is served without asking the store: the bound on staleness if a message is lost (default 30 s). */
  ttlMs?: number
  /** Copies kept per table, so lookups of random ids cannot grow memory without limit (default 10,000). */
  maxEntries?: number
  /** A failed announcement is reported here, not thrown: the write is stored and copies expire. */
  onError?: (error: unknown) => void
  now?: () => number
}

/**
 * The process's in-memory copy of the small entities (organizations, memberships, users, partners,
 * keys, configs...): reads by id and by the few lookups routes make are answered from memory; writes
 * go to the store first, then replace the local copy and are announced, so every other process drops
 * its copies of that table. One mechanism for every entity: `cached()` wraps its repository.
 */
export interface ReadModel {
  /** The repository with reads from memory and writes that invalidate everywhere. */
  cached<Row extends object>(
    definition: EntityDefinition<Row>,
    repository: EntityRepository<Row>,
  ): EntityRepository<Row>
  /** Listens for other processes' changes; call once before serving. */
  start(): Promise<void>
  close(): Promise<void>
}

const staleRetryMs = 1000

interface Entry {
  value: unknown
  until: number
}

interface TableCopies {
  /** Bumped by every change, so a load that started before a change is not kept after it. */
  generation: number
  entries: Map<string, Entry>
  /** Loads under way, shared by concurrent readers; a change drops them, so later readers load anew. */
  pending: Map<string, Promise<unknown>>
}

/** Rows are frozen, arrays inside them too: a caller that changed a shared copy would change it for everyone. */
function freeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) freeze(inner)
    Object.freeze(value)
  }
  return value
}

/**
 * Builds the read model of one process.
 * @example const readModel = createReadModel({ pubsub: coordination.pubsub }); await readModel.start()
 */
export function createReadModel(options: ReadModelOptions): ReadModel {
  const ttlMs = options.ttlMs ?? 30_000
  const maxEntries = options.maxEntries ?? 10_000
  const now = options.now ?? Date.now
  const origin = randomUUID()
  const tables = new Map<string, TableCopies>()
  let unsubscribe: (() => Promise<void>) | undefined

  const copiesOf = (table: string): TableCopies => {
    let copies = tables.get(table)
    if (!copies) {
      copies = { generation: 0, entries: new Map(), pending: new Map() }
      tables.set(table, copies)
    }
    return copies
  }

  /** Drops every copy of a table in this process (its own write, or another process's message). */
  const invalidate = (table: string) => {
    const copies = copiesOf(table)
    copies.generation += 1
    copies.entries.clear()
    copies.pending.clear()
  }

  const keep = (copies: TableCopies, key: string, value: unknown) => {
    if (copies.entries.size >= maxEntries) copies.entries.delete(copies.entries.keys().next().value!)
    copies.entries.set(key, { value: freeze(value), until: now() + ttlMs })
  }

  /** The copy under `key`, else one load shared by concurrent callers and kept unless a change overtook it. */
  const read = async <T>(table: string, key: string, load: () => Promise<T>): Promise<T> => {
    const copies = copiesOf(table)
    const entry = copies.entries.get(key)
    if (entry && entry.until > now()) return entry.value as T
    const generation = copies.generation
    const pending = copies.pending.get(key)
    if (pending) return pending as Promise<T>
    const promise = load().then(
      (value) => {
        if (copies.generation === generation) keep(copies, key, value)
        return freeze(value)
      },
      (error: unknown) => {
        // The store is down: an expired copy nothing has changed since is better than failing
        // (ingest keeps taking hits on it). It is served for a second, then the store is asked again.
        const stale = copies.entries.get(key)
        if (!stale || copies.generation !== generation) throw error
        stale.until = now() + staleRetryMs
        return stale.value as T
      },
    )
    copies.pending.set(key, promise)
    const forget = () => {
      if (copies.pending.get(key) === promise) copies.pending.delete(key)
    }
    promise.then(forget, forget)
    return promise
  }

  const announce = (table: string) =>
    options.pubsub.publish(entityChangedChannel, `${origin} ${table}`).catch((error: unknown) => {
      options.onError?.(error)
    })

  return {
    cached<Row extends object>(definition: EntityDefinition<Row>, repository: EntityRepository<Row>) {
      const { table } = definition
      const keyOf = (row: Partial<Row>) =>
        `get:${JSON.stringify(definition.key.map((column) => row[column]))}`
      const changed = async (key: string, row: Row | undefined) => {
        invalidate(table)
        // The local copy is the row just written: a read that follows a write sees it here.
        keep(copiesOf(table), key, row)
        await announce(table)
      }
      const cachedRepository: EntityRepository<Row> = {
        get: (key) => read(table, keyOf(key), () => repository.get(key)),
        find: (filter, findOptions?: FindOptions<Row>) =>
          read(table, `find:${JSON.stringify([filter, findOptions ?? {}])}`, () =>
            repository.find(filter, findOptions),
          ).then((rows) => [...rows]),
        count: (filter) => read(table, `count:${JSON.stringify(filter)}`, () => repository.count(filter)),
        async save(row) {
          const saved = await repository.save(row)
          await changed(keyOf(saved), structuredClone(saved))
          return saved
        },
        async remove(key) {
          await repository.remove(key)
          await changed(keyOf(key), undefined)
        },
      }
      return cachedRepository
    },

    async start() {
      unsubscribe ??= await options.pubsub.subscribe(entityChangedChannel, (message) => {
        const [from, table] = message.split(' ')
        if (from !== origin && table) invalidate(table)
      })
    },

    async close() {
      await unsubscribe?.()
      unsubscribe = undefined
      tables.clear()
    },
  }
}
