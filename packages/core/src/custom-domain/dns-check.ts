// The DNS check of a partner's custom domain (docs/decisions.md, "Partner custom domain"): does the domain
// point to the service? A CNAME to the target does; so, at an apex where a CNAME is not allowed,
// do A/AAAA records equal to the target's (the provider's CNAME flattening, ALIAS or ANAME record
// copies them). The answer is put in words, for the partner: what DNS said instead.
//
// Queries go through node:dns's c-ares Resolver (never the libuv thread pool), to DNS_SERVERS or
// the system's servers.
import { Resolver } from 'node:dns/promises'

/** The lookups a check makes; each settles within `timeoutMs` (an `ETIMEOUT` error past it). */
export interface DnsResolver {
  readonly timeoutMs: number
  resolveCname(name: string): Promise<string[]>
  resolve4(name: string): Promise<string[]>
  resolve6(name: string): Promise<string[]>
}

/**
 * A resolver for domain checks: DNS_SERVERS (`ip`, `ip:port`, `[ipv6]:port`), or the system's when
 * none are given. A lookup takes at most `timeoutMs` in all: c-ares tries a server twice (a lost
 * UDP packet is asked again) within about that time, and a deadline bounds the whole, whatever the
 * number of servers (c-ares asks them one after the other, its backoff doubling each round).
 * @example const resolver = createDnsResolver(config.dnsServers); await checkCname(resolver, 'track.acme.com', 't.service.example')
 */
export function createDnsResolver(servers: readonly string[] = [], timeoutMs = 5000): DnsResolver {
  // Two tries of c-ares take the first timeout and then twice it: a third of the budget each.
  const resolver = new Resolver({ timeout: Math.max(50, Math.floor(timeoutMs / 3)), tries: 2 })
  const chosen = servers.filter(Boolean)
  if (chosen.length > 0) resolver.setServers(chosen)
  const bounded = <T>(lookup: Promise<T>): Promise<T> => {
    let timer: NodeJS.Timeout | undefined
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        reject(Object.assign(new Error(`DNS lookup timed out after ${timeoutMs} ms`), { code: 'ETIMEOUT' }))
      }, timeoutMs)
      timer.unref()
    })
    // A query outliving its deadline settles later unobserved by anyone but the race (no
    // unhandled rejection), and within c-ares's own timeouts.
    return Promise.race([lookup, deadline]).finally(() => clearTimeout(timer))
  }
  return {
    timeoutMs,
    resolveCname: (name) => bounded(resolver.resolveCname(name)),
    resolve4: (name) => bounded(resolver.resolve4(name)),
    resolve6: (name) => bounded(resolver.resolve6(name)),
  }
}

/**
 * The outcome of a check. `answer` says what DNS answered (on success too, for the record kept).
 * `transient`: DNS did not answer conclusively (timeout, SERVFAIL, refused): the check says nothing
 * about the record, so a verified domain is not failed on it.
 */
export interface CnameCheck {
  ok: boolean
  answer: string
  transient?: true
}

/** A host name compared the way DNS does: case-insensitive, with or without the root's dot. */
export const bareHost = (name: string) => name.trim().toLowerCase().replace(/\.$/, '')

const codeOf = (error: unknown) => String((error as NodeJS.ErrnoException)?.code ?? '')

/** The name has no records of the asked type (it may exist): an empty answer, not a failure. */
const noData = (error: unknown) => codeOf(error) === 'ENODATA'

class LookupFailed extends Error {
  constructor(readonly check: CnameCheck) {
    super(check.answer)
  }
}

/** What a failed lookup means, in words. */
function failure(error: unknown, resolver: DnsResolver): CnameCheck {
  const code = codeOf(error)
  if (code === 'ENOTFOUND') return { ok: false, answer: 'the domain does not exist (NXDOMAIN)' }
  if (code === 'ETIMEOUT') {
    return {
      ok: false,
      answer: `the DNS server did not answer within ${resolver.timeoutMs / 1000} s`,
      transient: true,
    }
  }
  const reason = code.replace(/^E/, '') || (error instanceof Error ? error.message : String(error))
  return { ok: false, answer: `the DNS lookup failed (${reason})`, transient: true }
}

/** The records of one type; none (ENODATA) is an empty list, any other failure throws. */
async function records(lookup: Promise<string[]>, resolver: DnsResolver): Promise<string[]> {
  try {
    return await lookup
  } catch (error) {
    if (noData(error)) return []
    throw new LookupFailed(failure(error, resolver))
  }
}

/** The A and AAAA addresses of a name, sorted (an address set, compared as a whole). */
async function addresses(resolver: DnsResolver, name: string): Promise<string[]> {
  const [v4, v6] = await Promise.all([
    records(resolver.resolve4(name), resolver),
    records(resolver.resolve6(name), resolver),
  ])
  return [...new Set([...v4, ...v6.map((address) => address.toLowerCase())])].sort()
}

/**
 * Whether `domain` points to `target`: its CNAME is the target, or (no CNAME) its A/AAAA addresses
 * are exactly the target's, a flattened CNAME. A CNAME to anything else fails even when the
 * addresses happen to match: it is not the record asked for and may change under the partner.
 * @example await checkCname(resolver, 'track.acme.com', 't.service.example') // { ok: true, answer: 'CNAME t.service.example' }
 */
export async function checkCname(resolver: DnsResolver, domain: string, target: string): Promise<CnameCheck> {
  const name = bareHost(domain)
  const expected = bareHost(target)
  try {
    const cnames = (await records(resolver.resolveCname(name), resolver)).map(bareHost)
    if (cnames.includes(expected)) return { ok: true, answer: `CNAME ${expected}` }
    if (cnames.length > 0)
      return { ok: false, answer: `points to ${cnames.join(', ')}, expected ${expected}` }
    // A target that does not exist has no addresses (the domain cannot match them); the NXDOMAIN
    // message would name the partner's domain, which does exist.
    const targetAddresses = addresses(resolver, expected).catch((error: unknown) => {
      if (error instanceof LookupFailed && !error.check.transient) return []
      throw error
    })
    const [own, targets] = await Promise.all([addresses(resolver, name), targetAddresses])
    if (own.length === 0) return { ok: false, answer: 'no CNAME, A or AAAA record found' }
    if (own.join() === targets.join()) {
      return {
        ok: true,
        answer: `A/AAAA ${own.join(', ')} (the addresses of ${expected}: a flattened CNAME)`,
      }
    }
    const theirs = targets.length > 0 ? targets.join(', ') : 'none'
    return {
      ok: false,
      answer: `no CNAME; A/AAAA ${own.join(', ')}, expected a CNAME to ${expected} or its addresses (${theirs})`,
    }
  } catch (error) {
    if (error instanceof LookupFailed) return error.check
    throw error
  }
}
