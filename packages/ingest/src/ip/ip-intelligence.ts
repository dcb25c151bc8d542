// Everything ingest learns from a client IP, offline: geo, ISP / ASN, connection type, hosting,
// anonymity and the company. Data is read once at start-up; lookups are in-memory only.
import type { Store } from '@visitor-id/core'
import { createBoundedCache } from '../bounded-cache.js'
import { type IpKey, normalizeIp, parseIp } from './address.js'
import { type AsnDatabase, openAsnDatabase } from './asn-database.js'
import { readCidrLists } from './cidr-lists.js'
import { type CompanyRanges, loadCompanyRanges } from './company-ranges.js'
import {
  type AsnClassificationFile,
  type ConnectionType,
  createAsnClassifier,
  readCuratedClassification,
} from './connection-type.js'
import { type GeoDatabase, openGeoDatabase } from './geo-database.js'
import type { RangeTable } from './range-table.js'

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
  /** Imported company range, else `as<number>` for a business network, else ''. */
  companyId: string
}

export interface IpIntelligence {
  lookup(ip: string): IpInfo
  /** Reloads the imported company ranges. */
  reloadCompanies(): Promise<number>
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
  const [geo, asnData, companies] = await Promise.all([
    off(options.geoMmdbPath) ? undefined : openGeoDatabase(options.geoMmdbPath),
    off(options.asnDataPath) ? undefined : openAsnDatabase(options.asnDataPath),
    options.store ? loadCompanyRanges(options.store) : undefined,
  ])
  const classifier = createAsnClassifier([readCuratedClassification(), ...(options.classification ?? [])])
  const anonymous = readCidrLists(options.anonymousIpLists ?? [])
  const hosting = readCidrLists(options.hostingIpLists ?? [])
  // Visitors send several hits from one address; the answer depends only on the address (and
  // the company ranges, which clear the cache when reloaded).
  let cache = createBoundedCache<IpInfo>(50_000)
  const sources = { geo, asnData, companies, classifier, anonymous, hosting }
  return {
    sources: {
      geo: geo?.source ?? 'off',
      asn: asnData?.source ?? 'off',
      companyRanges: companies?.table.size ?? 0,
      anonymousRanges: anonymous.entries,
      hostingRanges: hosting.entries,
    },
    reloadCompanies: async () => {
      const size = companies ? await companies.reload() : 0
      cache = createBoundedCache<IpInfo>(50_000)
      return size
    },
    lookup: (rawIp) => cache.get(rawIp) ?? cache.set(rawIp, lookup(rawIp, sources)),
  }
}

interface Sources {
  geo: GeoDatabase | undefined
  asnData: AsnDatabase | undefined
  companies: CompanyRanges | undefined
  classifier: ReturnType<typeof createAsnClassifier>
  anonymous: { table: RangeTable<true> }
  hosting: { table: RangeTable<true> }
}

function lookup(rawIp: string, sources: Sources): IpInfo {
  const ip = normalizeIp(rawIp)
  const key: IpKey | undefined = ip ? parseIp(ip) : undefined
  const info = empty(ip)
  if (!key) return info
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
  info.companyId =
    sources.companies?.table.get(key) ??
    (info.connectionType === 'business' && info.asn ? `as${info.asn}` : '')
  return info
}
