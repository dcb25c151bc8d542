// Batches point reads that arrive while an earlier read of the same kind is running into one read
// (bench/api/RESULTS.md, "Decision: concurrent profiles share a read"). Each statement costs the
// embedded engine a fixed overhead and a merge of the granules it touches whatever the number of
// keys, so under concurrency one statement for 16 keys costs far less than 16 statements.
//
// A key joins the waiting batch only: a batch already sent to the store is never joined, so a
// read that starts after a write still sees it. There is one waiting batch of at most `maxBatch`
// keys; when it fills while the reads in flight are at `maxInFlight`, it is sent at once (the
// store's sessions queue it), so nothing here queues without bound.

export interface BatchLoaderOptions<K, V> {
  /**
   * Reads the values of a batch of distinct keys in one go: one value per key, in the keys' order
   * (undefined where a key has none). A rejection reaches every caller of the batch.
   */
  loadMany(keys: readonly K[]): Promise<readonly V[]>
  /** The identity of a key: callers asking for the same key in one batch share its value. */
  keyOf(key: K): string
  /** The most keys one read asks for (default 64). */
  maxBatch?: number
  /** Reads of this loader running at once before new keys wait for one to end (default 1). */
  maxInFlight?: number
}

export interface BatchLoader<K, V> {
  /** The value of one key, read with whichever keys are asked for while earlier reads run. */
  load(key: K): Promise<V>
}

interface Waiter<V> {
  resolve(value: V): void
  reject(error: unknown): void
}

interface Batch<K, V> {
  keys: K[]
  waiters: Map<string, Waiter<V>[]>
  /** Whether the batch is already due to be sent (a microtask is queued). */
  scheduled: boolean
}

/**
 * A DataLoader-style batcher of point reads.
 * @example const loader = createBatchLoader({ keyOf: (id) => id, loadMany: (ids) => readAll(ids) })
 */
export function createBatchLoader<K, V>(options: BatchLoaderOptions<K, V>): BatchLoader<K, V> {
  const maxBatch = Math.max(1, options.maxBatch ?? 64)
  const maxInFlight = Math.max(1, options.maxInFlight ?? 1)
  let inFlight = 0
  let waiting: Batch<K, V> | undefined

  const settle = (batch: Batch<K, V>, values: readonly V[] | undefined, error?: unknown) => {
    batch.keys.forEach((key, i) => {
      for (const waiter of batch.waiters.get(options.keyOf(key)) ?? []) {
        if (values) waiter.resolve(values[i] as V)
        else waiter.reject(error)
      }
    })
  }

  const send = (batch: Batch<K, V>) => {
    if (waiting === batch) waiting = undefined
    inFlight += 1
    // Called synchronously by loadMany's caller: a throw before its promise becomes a rejection.
    Promise.resolve()
      .then(() => options.loadMany(batch.keys))
      .then((values) => {
        if (values.length !== batch.keys.length)
          throw new Error(`batch read answered ${values.length} values for ${batch.keys.length} keys`)
        settle(batch, values)
      })
      .catch((error: unknown) => settle(batch, undefined, error))
      .finally(() => {
        inFlight -= 1
        // The keys that gathered while this read ran go out as the next read.
        if (waiting && !waiting.scheduled) schedule(waiting)
      })
  }

  // One microtask's delay, so the keys asked for in the same tick share the read.
  const schedule = (batch: Batch<K, V>) => {
    batch.scheduled = true
    queueMicrotask(() => {
      if (waiting === batch) send(batch)
    })
  }

  return {
    load(key) {
      return new Promise<V>((resolve, reject) => {
        const id = options.keyOf(key)
        if (!waiting) waiting = { keys: [], waiters: new Map(), scheduled: false }
        const batch = waiting
        const waiters = batch.waiters.get(id)
        if (waiters) waiters.push({ resolve, reject })
        else {
          batch.keys.push(key)
          batch.waiters.set(id, [{ resolve, reject }])
        }
        if (batch.keys.length >= maxBatch) send(batch)
        else if (!batch.scheduled && inFlight < maxInFlight) schedule(batch)
      })
    },
  }
}
