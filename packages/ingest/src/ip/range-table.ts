// Sorted IP ranges with a binary search. Ranges may nest (a company's /24 inside its ISP's /16):
// the most specific range containing an address wins. CIDR blocks never partly overlap, so each
// range's nearest enclosing range ("parent") is found with one sweep, and a lookup walks up from
// the last range starting at or before the address.

import type { IpKey, IpRange } from './address.js'

interface Sorted<K extends number | bigint> {
  starts: K[] | Float64Array | BigUint64Array
  ends: K[] | Float64Array | BigUint64Array
  parents: Int32Array
  values: Uint32Array
}

/** One family's table. `values` index into the owner's value list. */
function buildFamily<K extends number | bigint>(
  entries: { start: K; end: K; value: number }[],
  makeArray: (length: number) => Float64Array | BigUint64Array,
): Sorted<K> {
  entries.sort((a, b) =>
    a.start < b.start ? -1 : a.start > b.start ? 1 : a.end > b.end ? -1 : a.end < b.end ? 1 : 0,
  )
  const starts = makeArray(entries.length)
  const ends = makeArray(entries.length)
  const parents = new Int32Array(entries.length)
  const values = new Uint32Array(entries.length)
  const stack: number[] = []
  entries.forEach((entry, index) => {
    while (stack.length > 0 && ends[stack.at(-1)!]! < entry.start) stack.pop()
    parents[index] = stack.length > 0 ? stack.at(-1)! : -1
    stack.push(index)
    starts[index] = entry.start
    ends[index] = entry.end
    values[index] = entry.value
  })
  return { starts, ends, parents, values }
}

function find<K extends number | bigint>(table: Sorted<K>, key: K): number {
  const { starts, ends, parents } = table
  let low = 0
  let high = starts.length - 1
  let index = -1
  while (low <= high) {
    const middle = (low + high) >>> 1
    if (starts[middle]! <= key) {
      index = middle
      low = middle + 1
    } else high = middle - 1
  }
  // Walk to the nearest enclosing range; bounded, nesting is shallow.
  for (let steps = 0; index >= 0 && ends[index]! < key && steps < 64; steps += 1) index = parents[index]!
  return index >= 0 && ends[index]! >= key ? table.values[index]! : -1
}

/** Ranges of both families mapped to values; lookups return the most specific match. */
export interface RangeTable<V> {
  get(key: IpKey): V | undefined
  readonly size: number
}

/**
 * Builds a lookup table from ranges and their values.
 * @example const table = createRangeTable([{ range: parseRange('10.0.0.0/8')!, value: 'lan' }])
 */
export function createRangeTable<V>(entries: Iterable<{ range: IpRange; value: V }>): RangeTable<V> {
  const values: V[] = []
  const v4: { start: number; end: number; value: number }[] = []
  const v6: { start: bigint; end: bigint; value: number }[] = []
  for (const { range, value } of entries) {
    const index = values.push(value) - 1
    if (range.family === 4) v4.push({ start: range.start, end: range.end, value: index })
    else v6.push({ start: range.start, end: range.end, value: index })
  }
  return fromSorted(
    buildFamily(v4, (n) => new Float64Array(n)),
    buildFamily(v6, (n) => new BigUint64Array(n)),
    values,
  )
}

/** Builds a table from pre-parsed columns (the fast path for large data files). */
export function fromSorted<V>(v4: Sorted<number>, v6: Sorted<bigint>, values: V[]): RangeTable<V> {
  return {
    size: v4.starts.length + v6.starts.length,
    get(key) {
      const index = key.family === 4 ? find(v4, key.v4) : find(v6, key.v6)
      return index >= 0 ? values[index] : undefined
    },
  }
}

/** Column builder for large, already sorted inputs: push rows, then `build`. */
export function createColumns<K extends number | bigint>(
  makeArray: (length: number) => Float64Array | BigUint64Array,
) {
  const rows: { start: K; end: K; value: number }[] = []
  return {
    push(start: K, end: K, value: number) {
      rows.push({ start, end, value })
    },
    build: (): Sorted<K> => buildFamily(rows, makeArray),
  }
}
