/** Writes one batch of rows durably; rejects when it could not. */
export type BatchSink<Row> = (rows: Row[]) => Promise<void>

export interface BatchWriterOptions<Row> {
  sink: BatchSink<Row>
  /** A batch is written as soon as it holds this many rows... */
  maxRows: number
  /** ...or this long after its first row arrived. */
  maxMs: number
}

export interface BatchWriter<Row> {
  /** Resolves once these rows are written (rejects if their batch failed). */
  add(rows: readonly Row[]): Promise<void>
  /** Writes whatever is buffered now and waits for every write in flight. */
  flush(): Promise<void>
  /** Flushes, then refuses new rows. */
  close(): Promise<void>
  readonly pending: number
}

interface Pending<Row> {
  rows: Row[]
  waiters: { resolve: () => void; reject: (error: unknown) => void }[]
}

/**
 * Buffers rows and writes them in batches bounded by rows and milliseconds. A caller's promise
 * settles only when its rows' batch is written, so a hit is acknowledged only once durable.
 * @example const writer = createBatchWriter({ sink: (rows) => store.insert('page_views', rows), maxRows: 1000, maxMs: 200 })
 */
export function createBatchWriter<Row>(options: BatchWriterOptions<Row>): BatchWriter<Row> {
  let current: Pending<Row> = { rows: [], waiters: [] }
  let timer: NodeJS.Timeout | undefined
  let closed = false
  const inFlight = new Set<Promise<void>>()

  const writeCurrent = (): Promise<void> => {
    if (timer) clearTimeout(timer)
    timer = undefined
    const batch = current
    current = { rows: [], waiters: [] }
    if (batch.rows.length === 0) return Promise.resolve()
    const write = options.sink(batch.rows).then(
      () => {
        for (const waiter of batch.waiters) waiter.resolve()
      },
      (error: unknown) => {
        for (const waiter of batch.waiters) waiter.reject(error)
      },
    )
    inFlight.add(write)
    void write.finally(() => inFlight.delete(write))
    return write
  }

  return {
    get pending() {
      return current.rows.length
    },
    add(rows) {
      if (closed) return Promise.reject(new Error('The batch writer is closed'))
      if (rows.length === 0) return Promise.resolve()
      return new Promise<void>((resolve, reject) => {
        current.rows.push(...rows)
        current.waiters.push({ resolve, reject })
        if (current.rows.length >= options.maxRows) void writeCurrent()
        else if (!timer) timer = setTimeout(() => void writeCurrent(), options.maxMs)
      })
    },
    async flush() {
      await writeCurrent()
      await Promise.allSettled([...inFlight])
    },
    async close() {
      closed = true
      await this.flush()
    },
  }
}
