// Company by reverse DNS: the PTR name of a client IP, reduced to its registered domain with the
// public suffix list (tldts ships it in the package; nothing is fetched), when the name says
// something about an organization (`vpn.acme.co.uk` -> `acme.co.uk`) and not about an access line
// (`1-2-3-4.dsl.example.net`, `pool-...`, a dynamic-DNS or cloud host name).
//
// Queries go through node:dns's c-ares Resolver (never the libuv thread pool), to DNS_SERVERS or
// the system's servers, with a short timeout. Answers are cached (names and "nothing" alike, with
// a TTL; failures for a shorter while), and the hits of one address share one query. A hit waits
// for a query at most `waitMs` after the query started; the answer still lands in the cache, so
// later hits of that address get it.
import { Resolver } from 'node:dns/promises'
import { createBoundedCache } from '@visitor-id/core/bounded-cache'
import { parse } from 'tldts'
import { parseIPv4, parseIPv6 } from './address.js'

/** What one query found: an organization's domain, a name that says nothing, no name, or no answer. */
export const reverseDnsOutcomes = ['domain', 'skipped', 'not_found', 'failed'] as const
export type ReverseDnsOutcome = (typeof reverseDnsOutcomes)[number]

export interface ReverseDnsOptions {
  /** DNS servers as `ip`, `ip:port` or `[ipv6]:port`; empty or unset: the system's (resolv.conf). */
  servers?: readonly string[]
  /** Timeout of a query's first try (default 500 ms; c-ares waits longer on later tries). */
  timeoutMs?: number
  /** Tries per server (default 2: with the default timeout a dead server fails in about 1.5 s). */
  tries?: number
  /** How long after a query started a hit may still wait for it (default 50 ms; 0: never wait). */
  waitMs?: number
  /** How long an answer (a domain or nothing) is kept (default 1 hour). */
  ttlMs?: number
  /** How long a failed query (timeout, SERVFAIL, refused) is remembered (default 1 minute). */
  failureTtlMs?: number
  /** Bound of the cache (default 100,000 addresses; the oldest entry goes first). */
  maxEntries?: number
  /** Queries in flight at most; past it an address is not looked up until one finishes (default 1,000). */
  maxInFlight?: number
  /** Called once per query with what it found (for metrics). */
  onLookup?: (outcome: ReverseDnsOutcome) => void
}

export interface ReverseDns {
  /**
   * The organization domain named by the address's PTR record ('' when none), if known; else starts
   * (or joins) the query and returns a promise that settles with the domain, or with undefined once
   * the wait budget is spent. Undefined: not known, and not worth waiting for now.
   */
  domainOf(ip: string): string | Promise<string | undefined> | undefined
  /** The servers queried ('system' for the system resolver's). */
  readonly servers: string
  /** Cancels the queries in flight. */
  close(): void
}

/** The PTR query name of an address: `4.3.2.1.in-addr.arpa`, or 32 nibbles + `.ip6.arpa`. */
export function ptrName(ip: string): string | undefined {
  const v4 = parseIPv4(ip)
  if (v4 !== undefined)
    return `${v4 & 255}.${(v4 >>> 8) & 255}.${(v4 >>> 16) & 255}.${v4 >>> 24}.in-addr.arpa`
  const v6 = parseIPv6(ip)
  if (v6 === undefined) return undefined
  return `${[...v6.toString(16).padStart(32, '0')].reverse().join('.')}.ip6.arpa`
}

// Words of access-network host names: dynamic pools, DSL / cable / fibre lines, dial-up, customer
// premises equipment, carrier-grade NAT, placeholder names. Matched as whole words of the name.
const accessWords = new Set([
  'adsl',
  'bband',
  'broadband',
  'cable',
  'catv',
  'cgn',
  'cgnat',
  'client',
  'clients',
  'cpe',
  'cust',
  'customer',
  'customers',
  'dhcp',
  'dial',
  'dialin',
  'dialup',
  'docsis',
  'dsl',
  'dyn',
  'dynamic',
  'dynip',
  'fios',
  'ftth',
  'fttb',
  'fttc',
  'fttp',
  'fttx',
  'gpon',
  'hfc',
  'hsd',
  'nat',
  'noreverse',
  'pool',
  'ppp',
  'pppoa',
  'pppoe',
  'rdns',
  'res',
  'resi',
  'residential',
  'sdsl',
  'static',
  'staticip',
  'subscriber',
  'subscribers',
  'unassigned',
  'unallocated',
  'unused',
  'vdsl',
  'xdsl',
])
// Long enough to mean the same inside a longer word (`dynamicip`, `dhcp123`, `pppoeuser`). Short
// words only count alone: `pool` in `liverpool` says nothing.
const accessParts = [
  'broadband',
  'customer',
  'dhcp',
  'dynamic',
  'pppoe',
  'residential',
  'subscriber',
  'unassigned',
]

/** True when a host name encodes the address, as access networks name their lines. */
function encodesAddress(local: string, ip: string): boolean {
  // Four numbers in a row (`1-2-3-4`, `203.0.113.7`, `001-002-003-004`): an address, any order.
  if (/(?:^|\D)\d{1,3}[.-]\d{1,3}[.-]\d{1,3}[.-]\d{1,3}(?:\D|$)/.test(local)) return true
  const compact = local.replace(/[.\-_]/g, '')
  const v4 = parseIPv4(ip)
  if (v4 !== undefined) {
    const c = (v4 >>> 8) & 255
    const d = v4 & 255
    // The last two octets side by side, either order (`c-73-0-0-1`, `x-113-7.pool`).
    const numbers = local.split(/\D+/).filter(Boolean).map(Number)
    for (let i = 0; i + 1 < numbers.length; i += 1) {
      if ((numbers[i] === c && numbers[i + 1] === d) || (numbers[i] === d && numbers[i + 1] === c))
        return true
    }
    // The address as 8 hex digits (`p5b0a1c2d.dip0`) or one decimal number.
    return compact.includes(v4.toString(16).padStart(8, '0')) || local.includes(String(v4))
  }
  const v6 = parseIPv6(ip)
  if (v6 === undefined) return false
  const hex = v6.toString(16).padStart(32, '0')
  const interfaceId = hex.slice(16)
  if (/[1-9a-f]/.test(interfaceId) && compact.includes(interfaceId)) return true
  // Four or more hex groups in a row (`2001-db8-0-1-2-3`, `2a02-8108--1`).
  let run = 0
  for (const part of local.split(/[.\-_]/)) {
    run = /^[0-9a-f]{0,4}$/.test(part) && (part === '' || /\d/.test(part)) ? run + 1 : 0
    if (run >= 4) return true
  }
  return false
}

/** True when a host name's words say it is an access line (dynamic, pool, dsl, cable, ...). */
function namesAccessLine(local: string): boolean {
  for (const word of local.split(/[^a-z]+/)) {
    if (word === '') continue
    if (accessWords.has(word)) return true
    for (const part of accessParts) if (word.includes(part)) return true
  }
  return false
}

/**
 * The registered domain of a PTR name, when the name says something about an organization: a
 * real public suffix (ICANN section of the public suffix list), not a suffix of the list's private
 * section (dynamic DNS, cloud and hosting platforms: `*.dyndns.org`, `*.compute.amazonaws.com`),
 * not an address-encoded or access-network name. Undefined otherwise.
 * @example organizationDomain('vpn.acme.co.uk', '203.0.113.7') // 'acme.co.uk'
 * @example organizationDomain('203-0-113-7.dsl.example.net', '203.0.113.7') // undefined
 */
export function organizationDomain(hostname: string, ip: string): string | undefined {
  const name = hostname.trim().toLowerCase().replace(/\.$/, '')
  if (name === '' || name.length > 253) return undefined
  const parsed = parse(name, { allowPrivateDomains: true })
  const suffix = parsed.publicSuffix
  if (!parsed.domain || !parsed.isIcann || parsed.isIp || !suffix || suffix.endsWith('arpa')) return undefined
  // The name less its public suffix: `vpn.acme` of `vpn.acme.co.uk`.
  const local = name.slice(0, name.length - suffix.length - 1)
  if (encodesAddress(local, ip) || namesAccessLine(local)) return undefined
  return parsed.domain
}

const notFoundCodes = new Set(['ENOTFOUND', 'ENODATA'])

/**
 * Builds the cached reverse-DNS lookup.
 * @example const dns = createReverseDns({ servers: ['127.0.0.1:5353'] }); await dns.domainOf('203.0.113.7') // 'acme.co.uk'
 */
export function createReverseDns(options: ReverseDnsOptions = {}): ReverseDns {
  const waitMs = options.waitMs ?? 50
  const ttlMs = options.ttlMs ?? 3_600_000
  const failureTtlMs = options.failureTtlMs ?? 60_000
  const maxInFlight = options.maxInFlight ?? 1000
  const resolver = new Resolver({ timeout: options.timeoutMs ?? 500, tries: options.tries ?? 2 })
  const servers = options.servers?.filter(Boolean) ?? []
  if (servers.length > 0) resolver.setServers(servers)
  const cache = createBoundedCache<{ domain: string; expires: number }>(options.maxEntries ?? 100_000)
  const inFlight = new Map<
    string,
    { started: number; answer: Promise<string | undefined>; budget: { spent: boolean } }
  >()

  const query = async (ip: string, name: string): Promise<{ domain: string; ttl: number }> => {
    let outcome: ReverseDnsOutcome
    let result: { domain: string; ttl: number }
    try {
      const names = await resolver.resolvePtr(name)
      const domain = names.map((host) => organizationDomain(host, ip)).find(Boolean) ?? ''
      outcome = domain ? 'domain' : 'skipped'
      result = { domain, ttl: ttlMs }
    } catch (error) {
      const found = notFoundCodes.has((error as NodeJS.ErrnoException).code ?? '')
      outcome = found ? 'not_found' : 'failed'
      result = { domain: '', ttl: found ? ttlMs : failureTtlMs }
    }
    options.onLookup?.(outcome)
    return result
  }

  /** Starts a query; undefined when too many are in flight or the address has no PTR name. */
  const start = (ip: string) => {
    const name = ptrName(ip)
    if (!name || inFlight.size >= maxInFlight) return undefined
    const done = query(ip, name).then(({ domain, ttl }) => {
      cache.set(ip, { domain, expires: Date.now() + ttl })
      inFlight.delete(ip)
      return domain
    })
    // Every hit of the address shares this one promise: the answer, or undefined after waitMs. Once
    // the wait is over, later hits do not wait: `spent` says so, rather than comparing clocks (a
    // timer may fire a millisecond before Date.now() says waitMs have passed).
    const budget = { spent: waitMs <= 0 }
    const answer =
      waitMs > 0
        ? new Promise<string | undefined>((resolve) => {
            const timer = setTimeout(() => {
              budget.spent = true
              resolve(undefined)
            }, waitMs)
            timer.unref()
            void done.then((domain) => {
              clearTimeout(timer)
              resolve(domain)
            })
          })
        : Promise.resolve(undefined)
    const entry = { started: Date.now(), answer, budget }
    inFlight.set(ip, entry)
    return entry
  }

  return {
    servers: servers.length > 0 ? servers.join(',') : 'system',
    domainOf(ip) {
      const cached = cache.get(ip)
      const now = Date.now()
      if (cached && cached.expires > now) return cached.domain
      const running = inFlight.get(ip) ?? start(ip)
      // An expired answer serves while it is asked again; nobody waits for the refresh.
      if (cached) return cached.domain
      if (!running) return undefined
      return !running.budget.spent && now - running.started < waitMs ? running.answer : undefined
    },
    close: () => resolver.cancel(),
  }
}
