// The in-memory copies behind the read model (read-model.ts): per table, values by key, each served
// until it expires, at most `maxEntries` of them, one load shared by concurrent readers, and every
// copy of a table dropped at once when the table changes.

export interface EntityCopiesOptions {
  /** How long a copy is served without loading it again. */
  ttlMs: number
  /** Copies kept per table; past it, the oldest is dropped. */
  maxEntries: number
  now: () => number
}

/** The copies of every table of one process. */
export interface EntityCopies {
  /** The copy under `key`, else one load shared by concurrent callers and kept unless a change overtook it. */
  read<T>(table: string, key: string, load: () => Promise<T>): Promise<T>
  /** Drops every copy of a table (a change to it, here or in another process). */
  invalidate(table: string): void
  /** Keeps `value` as the table's copy under `key` (the row a write just stored). */
  keep(table: string, key: string, value: unknown): void
  /** Drops every table's copies. */
  clear(): void
}

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

/** How long an expired copy is served while the store fails, before the store is asked again. */
const staleRetryMs = 1000

/** Rows are frozen, arrays inside them too: a caller that changed a shared copy would change it for everyone. */
function freeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) freeze(inner)
    Object.freeze(value)
  }
  return value
}

/** Keeps `value` under `key` until `ttlMs` from now, dropping the oldest copy when the table is full. */
function keep(copies: TableCopies, key: string, value: unknown, options: EntityCopiesOptions): void {
  if (copies.entries.size >= options.maxEntries) copies.entries.delete(copies.entries.keys().next().value!)
  copies.entries.set(key, { value: freeze(value), until: options.now() + options.ttlMs })
}

/** The load's value, kept unless a change overtook it; on failure, a stale copy nothing changed since. */
function loadInto<T>(
  copies: TableCopies,
  key: string,
  load: () => Promise<T>,
  options: EntityCopiesOptions,
): Promise<T> {
  const generation = copies.generation
  return load().then(
    (value) => {
      if (copies.generation === generation) keep(copies, key, value, options)
      return freeze(value)
    },
    (error: unknown) => {
      // The store is down: an expired copy nothing has changed since is better than failing
      // (ingest keeps taking hits on it). It is served for a second, then the store is asked again.
      const stale = copies.entries.get(key)
      if (!stale || copies.generation !== generation) throw error
      stale.until = options.now() + staleRetryMs
      return stale.value as T
    },
  )
}

export function createEntityCopies(options: EntityCopiesOptions): EntityCopies {
  const tables = new Map<string, TableCopies>()

  const copiesOf = (table: string): TableCopies => {
    let copies = tables.get(table)
    if (!copies) {
      copies = { generation: 0, entries: new Map(), pending: new Map() }
      tables.set(table, copies)
    }
    return copies
  }

  return {
    async read<T>(table: string, key: string, load: () => Promise<T>): Promise<T> {
      const copies = copiesOf(table)
      const entry = copies.entries.get(key)
      if (entry && entry.until > options.now()) return entry.value as T
      const pending = copies.pending.get(key)
      if (pending) return pending as Promise<T>
      const promise = loadInto(copies, key, load, options)
      copies.pending.set(key, promise)
      const forget = () => {
        if (copies.pending.get(key) === promise) copies.pending.delete(key)
      }
      promise.then(forget, forget)
      return promise
    },

    invalidate(table) {
      const copies = copiesOf(table)
      copies.generation += 1
      copies.entries.clear()
      copies.pending.clear()
    },

    keep: (table, key, value) => keep(copiesOf(table), key, value, options),

    clear: () => tables.clear(),
  }
}
