// Statements that may be refused for memory, run again in smaller slices. A pass over many
// visitors (ICP scoring, settling first hours) is one statement per slice of its visitors; when
// the engine refuses one for memory (MEMORY_LIMIT_EXCEEDED, code 241: the statement's own limit or
// the engine's total), that slice is split in two and each half runs on its own, down to
// `maxSlices`. A slice is `cityHash64(id) % count = index`: its halves are `% 2count` = index and
// index + count, so every visitor stays in exactly one slice whatever the splits.
import { StoreError } from './store-error.js'

/** One slice of the visitors: those whose `cityHash64(id) % count` is `index`. */
export interface Slice {
  count: number
  index: number
}

/** True when the engine refused a statement for memory (its own limit or the engine's total). */
export function isMemoryRefusal(error: unknown): boolean {
  if (!(error instanceof StoreError) || error.kind !== 'query') return false
  return error.clickhouseCode === 'MEMORY_LIMIT_EXCEEDED' || error.clickhouseCode === '241'
}

/** The slice as SQL over the id column `column`, with the parameters `sliceCount` and `sliceIndex`. */
export const sliceCondition = (column: string) =>
  `cityHash64(${column}) % {sliceCount:UInt64} = {sliceIndex:UInt64}`

/** The parameters of `sliceCondition`. */
export const sliceParams = (slice: Slice) => ({ sliceCount: slice.count, sliceIndex: slice.index })

export interface SlicedOptions {
  /** Slices to start with (default 1: the whole at once). */
  slices?: number
  /** No slice is split past this count: a refusal then fails the run (default 1024). */
  maxSlices?: number
  /** Told of every split, e.g. to log it. */
  onSplit?: (refused: Slice, error: StoreError) => void
}

/**
 * Runs `run` for every slice, in order; a slice refused for memory runs again as its two halves.
 * Returns the slices that ran to the end. Other errors fail the run at once.
 * @example await runInSlices((slice) => store.command(`... WHERE ${sliceCondition('visitor_id')}`, sliceParams(slice)))
 */
export async function runInSlices(
  run: (slice: Slice) => Promise<void>,
  options: SlicedOptions = {},
): Promise<Slice[]> {
  const first = Math.max(1, options.slices ?? 1)
  const maxSlices = Math.max(first, options.maxSlices ?? 1024)
  const todo: Slice[] = Array.from({ length: first }, (_, index) => ({ count: first, index }))
  const done: Slice[] = []
  while (todo.length > 0) {
    const slice = todo.shift()!
    try {
      await run(slice)
      done.push(slice)
    } catch (error) {
      if (!isMemoryRefusal(error) || slice.count * 2 > maxSlices) throw error
      options.onSplit?.(slice, error as StoreError)
      const count = slice.count * 2
      todo.unshift({ count, index: slice.index }, { count, index: slice.index + slice.count })
    }
  }
  return done
}

/**
 * An `onSplit` that logs each split as a warning with `context`: a steady stream of them means
 * STORE_MEMORY_LIMIT is too small for the data (README.md, Operations, "Memory").
 */
export const warnOnSplit =
  (log: { warn(object: object, message: string): void }, message: string, context: object = {}) =>
  (slice: Slice, error: StoreError) =>
    log.warn({ ...context, slice: `${slice.index}/${slice.count}`, reason: error.message }, message)
