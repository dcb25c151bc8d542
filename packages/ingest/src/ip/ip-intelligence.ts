// Everything ingest learns from a client IP: geo, ISP / ASN, connection type, hosting, anonymity
// and the company. Data is read once at start-up and looked up in memory; the one exception is the
// company by reverse DNS (reverse-dns.ts), a cached PTR query that a hit waits for only briefly.
import { createBoundedCache } from '@visitor-id/core/bounded-cache'
import type { Store } from '@visitor-id/core/store'
import { type IpKey, normalizeIp, parseIp } from './address.js'
import { type AsnDatabase, openAsnDatabase } from './asn-database.js'
import { readCidrLists } from './cidr-lists.js'
import { dnsCompanyId, loadCompanyDomains } from './company-domains.js'
import { type CompanyRanges, loadCompanyRanges } from './company-ranges.js'
import {
  type AsnClassificationFile,
  type ConnectionType,
  createAsnClassifier,
  readCuratedClassification,
} from './connection-type.js'
import { type GeoDatabase, openGeoDatabase } from './geo-database.js'
import type { RangeTable } from './range-table.js'
import { createReverseDns, type ReverseDns, type ReverseDnsOptions } from './reverse-dns.js'

export interface IpInfo {
  /** The address as stored ('' when the client IP is not a valid address). */
  ip: string
  country: string
  region: string
  city: string
  isp: string
  asn: number
  connectionType: ConnectionType | ''
  isHosting: boolean
  isAnonymous: boolean
  /**
   * Imported company range, else (`resolve` only) the company of the reverse DNS name, else
   * `as<number>` for a business network, else ''.
   */
  companyId: string
}

export interface IpIntelligence {
  /** Everything known offline, at once (the company without reverse DNS). */
  lookup(ip: string): IpInfo
  /**
   * `lookup` with the company by reverse DNS: the info itself when nothing is to be asked, else a
   * promise that settles within the reverse DNS wait budget (see reverse-dns.ts).
   */
  resolve(ip: string): IpInfo | Promise<IpInfo>
  /** Reloads the imported company ranges and company domains (one reload at a time, in order). */
  reloadCompanies(): Promise<number>
  /** Cancels reverse DNS queries in flight. */
  close(): void
  /** What was loaded, for the start-up log. */
  readonly sources: Record<string, string | number>
}

export interface IpIntelligenceOptions {
  /** Store with the company_ip_ranges table; without it no company ranges are used. */
  store?: Store
  /** A City .mmdb; unset: the bundled DB-IP Lite City; 'off': no geo. */
  geoMmdbPath?: string | undefined
  /** An ASN .mmdb or directory of ip-location-db CSVs; unset: bundled; 'off': none. */
  asnDataPath?: string | undefined
  /** Extra classification files merged over the curated one. */
  classification?: AsnClassificationFile[]
  anonymousIpLists?: readonly string[]
  hostingIpLists?: readonly string[]
  /** Company by reverse DNS (needs `store` for imported company domains); unset or false: off. */
  reverseDns?: ReverseDnsOptions | false | undefined
}

// Reverse DNS is asked only where a network's PTR names can name the visitor's organization:
// networks a company or institution runs itself, and networks the ASN data does not know. Access
// (isp, mobile) networks' names name the ISP or the line, hosting networks' the cloud or a server.
const ptrConnectionTypes: ReadonlySet<string> = new Set(['business', 'education', 'government', ''])

/** Addresses that never have a public PTR record: private, loopback, link-local, CGNAT, multicast. */
function isPublicAddress(key: IpKey): boolean {
  if (key.family === 4) {
    const a = Math.floor(key.v4 / 2 ** 24)
    const b = Math.floor(key.v4 / 2 ** 16) & 255
    if (a === 0 || a === 10 || a === 127 || a >= 224) return false
    if (a === 100 && b >= 64 && b < 128) return false
    if ((a === 169 && b === 254) || (a === 172 && b >= 16 && b < 32) || (a === 192 && b === 168)) return false
    return true
  }
  const top = Number(key.v6 >> 48n)
  // ::/16 (unspecified, loopback, mapped), fc00::/7 unique local, fe80::/10 link-local, ff00::/8 multicast.
  return top !== 0 && (top & 0xfe00) !== 0xfc00 && (top & 0xffc0) !== 0xfe80 && (top & 0xff00) !== 0xff00
}

/** A cached lookup: the offline info, whether reverse DNS may name its company, the last DNS company. */
interface Entry {
  info: IpInfo
  ptr: boolean
  dnsDomain?: string
  dnsInfo?: IpInfo
}

const empty = (ip: string): IpInfo => ({
  ip,
  country: '',
  region: '',
  city: '',
  isp: '',
  asn: 0,
  connectionType: '',
  isHosting: false,
  isAnonymous: false,
  companyId: '',
})

/**
 * Loads the IP data sets and returns the lookup.
 * @example const intel = await createIpIntelligence({}); intel.lookup('8.8.8.8') // { country: 'US', asn: 15169, connectionType: 'hosting', ... }
 */
export async function createIpIntelligence(options: IpIntelligenceOptions = {}): Promise<IpIntelligence> {
  const off = (value: string | undefined) => value === 'off'
  const reverseOptions = options.reverseDns || undefined
  const [geo, asnData, companies, domains] = await Promise.all([
    off(options.geoMmdbPath) ? undefined : openGeoDatabase(options.geoMmdbPath),
    off(options.asnDataPath) ? undefined : openAsnDatabase(options.asnDataPath),
    options.store ? loadCompanyRanges(options.store) : undefined,
    options.store && reverseOptions ? loadCompanyDomains(options.store) : undefined,
  ])
  const reverse: ReverseDns | undefined = reverseOptions ? createReverseDns(reverseOptions) : undefined
  const classifier = createAsnClassifier([readCuratedClassification(), ...(options.classification ?? [])])
  const anonymous = readCidrLists(options.anonymousIpLists ?? [])
  const hosting = readCidrLists(options.hostingIpLists ?? [])
  // Visitors send several hits from one address; the answer depends only on the address (and
  // the company ranges and domains, which clear the cache when reloaded).
  let cache = createBoundedCache<Entry>(50_000)
  let reloading: Promise<number> = Promise.resolve(0)
  const sources = { geo, asnData, companies, classifier, anonymous, hosting, ptr: reverse !== undefined }
  const entryOf = (rawIp: string) => cache.get(rawIp) ?? cache.set(rawIp, lookup(rawIp, sources))
  /** The info with the company a reverse DNS domain names ('' names none: the offline info). */
  const withDomain = (entry: Entry, domain: string): IpInfo => {
    if (!domain) return entry.info
    if (entry.dnsDomain !== domain || !entry.dnsInfo) {
      entry.dnsDomain = domain
      entry.dnsInfo = { ...entry.info, companyId: domains?.get(domain) ?? dnsCompanyId(domain) }
    }
    return entry.dnsInfo
  }
  return {
    sources: {
      geo: geo?.source ?? 'off',
      asn: asnData?.source ?? 'off',
      companyRanges: companies?.table.size ?? 0,
      anonymousRanges: anonymous.entries,
      hostingRanges: hosting.entries,
      reverseDns: reverse?.servers ?? 'off',
      companyDomains: domains?.size ?? 0,
    },
    reloadCompanies() {
      // One reload at a time, in the order asked: a periodic reload that started before an import
      // finished must not replace, when it ends, the tables the import's reload just read.
      const reload = async () => {
        const [size] = await Promise.all([companies ? companies.reload() : 0, domains?.reload()])
        cache = createBoundedCache<Entry>(50_000)
        return size
      }
      const next = reloading.then(reload, reload)
      reloading = next.catch(() => 0)
      return next
    },
    lookup: (rawIp) => entryOf(rawIp).info,
    resolve(rawIp) {
      const entry = entryOf(rawIp)
      if (!entry.ptr || !reverse) return entry.info
      const domain = reverse.domainOf(entry.info.ip)
      if (domain === undefined) return entry.info
      if (typeof domain === 'string') return withDomain(entry, domain)
      return domain.then((found) => (found === undefined ? entry.info : withDomain(entry, found)))
    },
    close: () => reverse?.close(),
  }
}

interface Sources {
  geo: GeoDatabase | undefined
  asnData: AsnDatabase | undefined
  companies: CompanyRanges | undefined
  classifier: ReturnType<typeof createAsnClassifier>
  anonymous: { table: RangeTable<true> }
  hosting: { table: RangeTable<true> }
  /** Reverse DNS is on. */
  ptr: boolean
}

function lookup(rawIp: string, sources: Sources): Entry {
  const ip = normalizeIp(rawIp)
  const key: IpKey | undefined = ip ? parseIp(ip) : undefined
  const info = empty(ip)
  if (!key) return { info, ptr: false }
  const place = sources.geo?.lookup(ip, key)
  if (place) Object.assign(info, place)
  const network = sources.asnData?.lookup(ip, key)
  if (network) {
    info.asn = network.asn
    info.isp = network.organization
    Object.assign(info, sources.classifier.classify(network.asn, network.organization))
  }
  if (sources.hosting.table.get(key)) {
    info.connectionType = 'hosting'
    info.isHosting = true
  }
  if (sources.anonymous.table.get(key)) info.isAnonymous = true
  const ranged = sources.companies?.table.get(key)
  info.companyId = ranged ?? (info.connectionType === 'business' && info.asn ? `as${info.asn}` : '')
  // A VPN exit's name is the VPN's, not the visitor's organization.
  const ptr =
    sources.ptr &&
    ranged === undefined &&
    !info.isAnonymous &&
    ptrConnectionTypes.has(info.connectionType) &&
    isPublicAddress(key)
  return { info, ptr }
}
