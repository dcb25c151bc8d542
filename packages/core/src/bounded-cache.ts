/**
 * A bounded cache on a Map: when full, the oldest entry goes (first in, first out). User agents,
 * bot verdicts, referrers and IP lookups repeat a lot, and computing one costs microseconds to
 * tens of microseconds. Reads do not reorder entries (a true LRU's delete-and-set on every hit
 * cost more than it saved): a hot key that ages out is simply computed again.
 * @example const cache = createBoundedCache<string>(5000); cache.get(key) ?? cache.set(key, compute(key))
 */
export function createBoundedCache<V>(maxEntries: number) {
  const map = new Map<string, V>()
  return {
    get: (key: string): V | undefined => map.get(key),
    set(key: string, value: V): V {
      if (map.size >= maxEntries) map.delete(map.keys().next().value!)
      map.set(key, value)
      return value
    },
    /** Removes the entry and returns what it held (a value taken once). */
    take(key: string): V | undefined {
      const value = map.get(key)
      map.delete(key)
      return value
    },
  }
}
