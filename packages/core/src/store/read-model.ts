import { randomUUID } from 'node:crypto'
import type { PubSub } from '../coordination/ports.js'
import { createEntityCopies, type EntityCopies } from './entity-copies.js'
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

/**
 * The repository with reads answered from `copies`, and writes that store, keep the written row as
 * this process's copy and announce the change.
 */
function cachedRepository<Row extends object>(
  definition: EntityDefinition<Row>,
  repository: EntityRepository<Row>,
  copies: EntityCopies,
  announce: (table: string) => Promise<void>,
): EntityRepository<Row> {
  const { table } = definition
  const keyOf = (row: Partial<Row>) => `get:${JSON.stringify(definition.key.map((column) => row[column]))}`
  const changed = async (key: string, row: Row | undefined) => {
    copies.invalidate(table)
    // The local copy is the row just written: a read that follows a write sees it here.
    copies.keep(table, key, row)
    await announce(table)
  }
  return {
    get: (key) => copies.read(table, keyOf(key), () => repository.get(key)),
    find: (filter, findOptions?: FindOptions<Row>) =>
      copies
        .read(table, `find:${JSON.stringify([filter, findOptions ?? {}])}`, () =>
          repository.find(filter, findOptions),
        )
        .then((rows) => [...rows]),
    count: (filter) => copies.read(table, `count:${JSON.stringify(filter)}`, () => repository.count(filter)),
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
}

/**
 * Builds the read model of one process.
 * @example const readModel = createReadModel({ pubsub: coordination.pubsub }); await readModel.start()
 */
export function createReadModel(options: ReadModelOptions): ReadModel {
  const copies = createEntityCopies({
    ttlMs: options.ttlMs ?? 30_000,
    maxEntries: options.maxEntries ?? 10_000,
    now: options.now ?? Date.now,
  })
  const origin = randomUUID()
  let unsubscribe: (() => Promise<void>) | undefined

  const announce = (table: string) =>
    options.pubsub.publish(entityChangedChannel, `${origin} ${table}`).catch((error: unknown) => {
      options.onError?.(error)
    })

  return {
    cached: (definition, repository) => cachedRepository(definition, repository, copies, announce),

    async start() {
      unsubscribe ??= await options.pubsub.subscribe(entityChangedChannel, (message) => {
        const [from, table] = message.split(' ')
        if (from !== origin && table) copies.invalidate(table)
      })
    },

    async close() {
      await unsubscribe?.()
      unsubscribe = undefined
      copies.clear()
    },
  }
}
