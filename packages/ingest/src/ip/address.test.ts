import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { normalizeIp, parseIPv6, parseIp, parseRange } from './address.js'
import { createRangeTable } from './range-table.js'

describe('IP parsing', () => {
  it('parses both families and IPv4-mapped IPv6 as IPv4', () => {
    expect(parseIp('8.8.8.8')).toEqual({ family: 4, v4: 0x08080808 })
    expect(parseIp('::ffff:8.8.8.8')).toEqual({ family: 4, v4: 0x08080808 })
    expect(parseIp('2001:4860:4860::8888')).toEqual({ family: 6, v6: 0x2001486048600000n })
    expect(parseIPv6('::1')).toBe(1n)
    expect(parseIPv6('1::')).toBe(1n << 112n)
    for (const bad of ['', '1.2.3', '1.2.3.256', '1.2.3.4.5', 'x', '1:::2', '1:2:3:4:5:6:7:8:9', 'g::1'])
      expect(parseIp(bad)).toBeUndefined()
    expect(normalizeIp('::FFFF:1.2.3.4')).toBe('1.2.3.4')
    expect(normalizeIp('nonsense')).toBe('')
  })

  it('never throws on arbitrary input', () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        parseIp(text)
        parseRange(text)
        normalizeIp(text)
      }),
    )
  })

  it('round-trips every IPv4 address', () => {
    fc.assert(
      fc.property(fc.ipV4(), (ip) => {
        const key = parseIp(ip)
        expect(key?.family).toBe(4)
      }),
    )
  })

  it('parses CIDRs, single addresses and start-end ranges', () => {
    expect(parseRange('10.0.0.0/8')).toEqual({ family: 4, start: 0x0a000000, end: 0x0affffff })
    expect(parseRange('10.1.2.3/8')).toEqual({ family: 4, start: 0x0a000000, end: 0x0affffff })
    expect(parseRange('1.2.3.4')).toEqual({ family: 4, start: 0x01020304, end: 0x01020304 })
    expect(parseRange('1.2.3.4 - 1.2.3.10')).toEqual({ family: 4, start: 0x01020304, end: 0x0102030a })
    expect(parseRange('2001:db8::/32')).toEqual({
      family: 6,
      start: 0x20010db800000000n,
      end: 0x20010db8ffffffffn,
    })
    expect(parseRange('::ffff:10.0.0.0/104')).toEqual({ family: 4, start: 0x0a000000, end: 0x0affffff })
    for (const bad of ['10.0.0.0/33', '10.0.0.0/x', '1.2.3.9-1.2.3.1', '::/129', '10.0.0.0/'])
      expect(parseRange(bad)).toBeUndefined()
  })
})

describe('range table', () => {
  it('returns the most specific range containing an address', () => {
    const table = createRangeTable([
      { range: parseRange('10.0.0.0/8')!, value: 'outer' },
      { range: parseRange('10.1.0.0/16')!, value: 'middle' },
      { range: parseRange('10.1.2.0/24')!, value: 'inner' },
      { range: parseRange('10.2.0.0/16')!, value: 'sibling' },
      { range: parseRange('2001:db8::/32')!, value: 'v6' },
    ])
    const at = (ip: string) => table.get(parseIp(ip)!)
    expect(at('10.1.2.3')).toBe('inner')
    expect(at('10.1.3.3')).toBe('middle')
    expect(at('10.3.0.1')).toBe('outer')
    expect(at('10.2.255.255')).toBe('sibling')
    expect(at('10.255.255.255')).toBe('outer')
    expect(at('11.0.0.0')).toBeUndefined()
    expect(at('9.255.255.255')).toBeUndefined()
    expect(at('2001:db8:1::1')).toBe('v6')
    expect(at('2001:db9::1')).toBeUndefined()
  })

  it('agrees with a linear scan for random nested CIDRs', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.ipV4(), fc.integer({ min: 8, max: 32 })), { maxLength: 40 }),
        fc.array(fc.ipV4(), { minLength: 1, maxLength: 20 }),
        (cidrs, probes) => {
          const ranges = cidrs.map(([ip, bits], value) => ({ range: parseRange(`${ip}/${bits}`)!, value }))
          const table = createRangeTable(ranges)
          for (const probe of probes) {
            const key = parseIp(probe)!
            if (key.family !== 4) continue
            // Linear: the narrowest containing range; among equal ranges, the later one.
            let best: { size: number; value: number } | undefined
            for (const { range, value } of ranges) {
              if (range.family !== 4 || key.v4 < range.start || key.v4 > range.end) continue
              const size = range.end - range.start
              if (!best || size <= best.size) best = { size, value }
            }
            const found = table.get(key)
            if (best === undefined) expect(found).toBeUndefined()
            else {
              expect(found).toBeDefined()
              const foundRange = ranges[found!]!.range
              expect(foundRange.family === 4 && foundRange.end - foundRange.start).toBe(best.size)
            }
          }
        },
      ),
    )
  })
})
