/** Writes one batch of rows durably; rejects when it could not. */
export type BatchSink<Row> = (rows: Row[]) => Promise<void>

export interface BatchWriterOptions<Row> {
  sink: BatchSink<Row>
  /** A batch is written as soon as it holds this many rows... */
  maxRows: number
  /** ...or once its first row is this old and a write slot is free. */
  maxMs: number
  /**
   * Writes that may run at once for batches due by time (default 1). A full batch never waits.
   * While a write runs, the next batch keeps filling: under load batches grow instead of queueing
   * many small inserts, which the store would only serialise (group commit).
   */
  maxInFlight?: number
}

export interface BatchWriter<Row> {
  /** Resolves once these rows are written (rejects if their batch failed). */
  add(rows: readonly Row[]): Promise<void>
  /**
   * Resolves (never rejects) when the batch being filled now is done. Dropped hits wait on it, so
   * their answer takes as long as an accepted hit's and timing tells nothing.
   */
  barrier(): Promise<void>
  /** Writes whatever is buffered now and waits for every write in flight. */
  flush(): Promise<void>
  /** Flushes, then refuses new rows. */
  close(): Promise<void>
  readonly pending: number
}

/**
 * One batch being filled. Every caller of the batch waits on the same promise (made when the first
 * one asks): no closure or waiter object per caller, which under load lived until the write and
 * cost garbage collection.
 */
interface Pending<Row> {
  rows: Row[]
  done: Promise<void> | undefined
  /** `done`, never rejecting (barriers). */
  settled: Promise<void> | undefined
  resolve: () => void
  reject: (error: unknown) => void
}

const nothing = () => {}

function pending<Row>(): Pending<Row> {
  return { rows: [], done: undefined, settled: undefined, resolve: nothing, reject: nothing }
}

/** The batch's shared promise, made on first use. */
function doneOf<Row>(batch: Pending<Row>): Promise<void> {
  batch.done ??= new Promise<void>((resolve, reject) => {
    batch.resolve = resolve
    batch.reject = reject
  })
  return batch.done
}

function settledOf<Row>(batch: Pending<Row>): Promise<void> {
  batch.settled ??= doneOf(batch).catch(nothing)
  return batch.settled
}

/**
 * Buffers rows and writes them in batches bounded by rows and milliseconds. A caller's promise
 * settles only when its rows' batch is written, so a hit is acknowledged only once durable.
 * @example const writer = createBatchWriter({ sink: (rows) => store.insert('page_views', rows), maxRows: 1000, maxMs: 200 })
 */
export function createBatchWriter<Row>(options: BatchWriterOptions<Row>): BatchWriter<Row> {
  const maxInFlight = options.maxInFlight ?? 1
  let current = pending<Row>()
  let timer: NodeJS.Timeout | undefined
  let due = false
  let closed = false
  const inFlight = new Set<Promise<void>>()

  const writeCurrent = (): Promise<void> => {
    if (timer) clearTimeout(timer)
    timer = undefined
    due = false
    const batch = current
    current = pending<Row>()
    if (batch.rows.length === 0) {
      batch.resolve()
      return Promise.resolve()
    }
    const write = options.sink(batch.rows).then(
      () => batch.resolve(),
      (error: unknown) => batch.reject(error),
    )
    inFlight.add(write)
    void write.finally(() => {
      inFlight.delete(write)
      writeIfDue()
    })
    return write
  }

  const writeIfDue = () => {
    if (due && inFlight.size < maxInFlight) void writeCurrent()
  }

  const arm = () => {
    timer ??= setTimeout(() => {
      timer = undefined
      due = true
      writeIfDue()
    }, options.maxMs)
  }

  return {
    get pending() {
      return current.rows.length
    },
    add(rows) {
      if (closed) return Promise.reject(new Error('The batch writer is closed'))
      if (rows.length === 0) return Promise.resolve()
      const batch = current
      for (const row of rows) batch.rows.push(row)
      const done = doneOf(batch)
      if (batch.rows.length >= options.maxRows) void writeCurrent()
      else if (!due) arm()
      return done
    },
    barrier() {
      if (closed) return Promise.resolve()
      const settled = settledOf(current)
      if (!due) arm()
      return settled
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
