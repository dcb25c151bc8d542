import { describe, expect, it } from 'vitest'
import { createBoundedCache } from './bounded-cache.js'

describe('createBoundedCache', () => {
  it('keeps at most its size, the oldest entry going first; take removes what it returns', () => {
    const cache = createBoundedCache<number>(2)
    expect(cache.set('a', 1)).toBe(1)
    cache.set('b', 2)
    cache.set('c', 3)
    expect([cache.get('a'), cache.get('b'), cache.get('c')]).toEqual([undefined, 2, 3])
    expect(cache.take('b')).toBe(2)
    expect(cache.get('b')).toBeUndefined()
    expect(cache.take('b')).toBeUndefined()
    // Room again: a new entry no longer pushes out the one left.
    cache.set('d', 4)
    expect([cache.get('c'), cache.get('d')]).toEqual([3, 4])
  })
})
