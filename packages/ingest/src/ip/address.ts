// IP addresses as numbers for range lookups: IPv4 as a 32-bit number, IPv6 as the top 64 bits
// (the network part: ranges in every data set we read are /64 or wider).

/** A parsed address: `v4` holds 0..2^32-1, `v6` the address's upper 64 bits. */
export type IpKey = { family: 4; v4: number } | { family: 6; v6: bigint }

const mask64 = (1n << 64n) - 1n

/** Parses dotted IPv4; undefined when it is not one. A hand-written loop: it runs for every hit. */
export function parseIPv4(text: string): number | undefined {
  if (text.length < 7 || text.length > 15) return undefined
  let value = 0
  let octet = 0
  let digits = 0
  let dots = 0
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i)
    if (code === 46) {
      if (digits === 0 || dots === 3) return undefined
      value = value * 256 + octet
      octet = 0
      digits = 0
      dots += 1
    } else if (code >= 48 && code <= 57 && digits < 3) {
      octet = octet * 10 + (code - 48)
      digits += 1
      if (octet > 255) return undefined
    } else return undefined
  }
  if (dots !== 3 || digits === 0) return undefined
  return value * 256 + octet
}

/** Parses IPv6 (with `::` and an optional dotted IPv4 tail) into its 128-bit value. */
export function parseIPv6(text: string): bigint | undefined {
  if (!text.includes(':') || text.length > 45) return undefined
  let address = text.replace(/%.*$/, '')
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(address)
  if (dotted) {
    const v4 = parseIPv4(dotted[1]!)
    if (v4 === undefined) return undefined
    address = `${address.slice(0, dotted.index)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`
  }
  const halves = address.split('::')
  if (halves.length > 2) return undefined
  const head = halves[0] ? halves[0].split(':') : []
  const tail = halves.length === 2 && halves[1] ? halves[1].split(':') : []
  const missing = 8 - head.length - tail.length
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...tail]
  let value = 0n
  for (const group of groups) {
    if (!/^[0-9a-f]{1,4}$/i.test(group)) return undefined
    value = (value << 16n) | BigInt(`0x${group}`)
  }
  return value
}

/** Parses either family; IPv4-mapped IPv6 (`::ffff:1.2.3.4`) counts as IPv4. */
export function parseIp(text: string): IpKey | undefined {
  const v4 = parseIPv4(text)
  if (v4 !== undefined) return { family: 4, v4 }
  const v6 = parseIPv6(text)
  if (v6 === undefined) return undefined
  if (v6 >> 32n === 0xffffn) return { family: 4, v4: Number(v6 & 0xffffffffn) }
  return { family: 6, v6: (v6 >> 64n) & mask64 }
}

/** The address in its usual text form (IPv4-mapped IPv6 shown as IPv4), or '' when invalid. */
export function normalizeIp(text: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(text)
  if (mapped) return mapped[1]!
  return parseIp(text) ? text.toLowerCase() : ''
}

/** An inclusive range of one family, e.g. from a CIDR (`10.0.0.0/8`) or `start-end`. */
export type IpRange = { family: 4; start: number; end: number } | { family: 6; start: bigint; end: bigint }

/** Parses `a.b.c.d/nn`, `x:y::/nn`, a single address, or `start-end`; undefined when invalid. */
export function parseRange(text: string): IpRange | undefined {
  const trimmed = text.trim()
  const dash = trimmed.indexOf('-')
  if (dash > 0) {
    const start = parseIp(trimmed.slice(0, dash).trim())
    const end = parseIp(trimmed.slice(dash + 1).trim())
    if (!start || !end || start.family !== end.family) return undefined
    if (start.family === 4 && end.family === 4) {
      return start.v4 <= end.v4 ? { family: 4, start: start.v4, end: end.v4 } : undefined
    }
    if (start.family === 6 && end.family === 6) {
      return start.v6 <= end.v6 ? { family: 6, start: start.v6, end: end.v6 } : undefined
    }
    return undefined
  }
  const parts = trimmed.split('/')
  if (parts.length > 2) return undefined
  const [address, prefixText] = parts
  const key = parseIp(address ?? '')
  if (!key) return undefined
  const isMapped = key.family === 4 && (address ?? '').includes(':')
  const maxBits = key.family === 4 ? 32 : 128
  let prefix = prefixText === undefined ? maxBits : Number(prefixText)
  if (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) return undefined
  // An IPv4-mapped IPv6 CIDR (::ffff:0:0/96 and longer) is an IPv4 CIDR.
  if (isMapped) prefix -= 96
  if (prefix < 0 || prefix > maxBits) return undefined
  if (key.family === 4) {
    const size = 2 ** (32 - prefix)
    const start = Math.floor(key.v4 / size) * size
    return { family: 4, start, end: start + size - 1 }
  }
  // Our IPv6 keys are the upper 64 bits: prefixes longer than /64 round to their /64.
  const bits = BigInt(Math.max(0, 64 - prefix))
  const start = (key.v6 >> bits) << bits
  return { family: 6, start, end: start | ((1n << bits) - 1n) }
}
