// ISP / ASN by IP. The default data is @ip-location-db/asn (RouteViews + RIR + DB-IP, CC BY 4.0):
// CSV files of numeric ranges, parsed once at start-up into typed arrays (about 0.4 s, 10 MB).
// A GeoLite2-ASN (or compatible) .mmdb file may be configured instead.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { open as openMmdb } from 'maxmind'
import type { IpKey } from './address.js'
import { createColumns, fromSorted } from './range-table.js'

export interface AsnRecord {
  asn: number
  organization: string
}

export interface AsnDatabase {
  lookup(ip: string, key: IpKey): AsnRecord | undefined
  readonly source: string
}

/** Directory of the bundled @ip-location-db/asn package. */
export function defaultAsnDataDir(): string {
  const require = createRequire(import.meta.url)
  return path.dirname(require.resolve('@ip-location-db/asn/package.json'))
}

/** Splits one CSV line `start,end,asn,organization` (the organization may be quoted). */
function parseLine(line: string): [string, string, string, string] | undefined {
  const first = line.indexOf(',')
  const second = line.indexOf(',', first + 1)
  const third = line.indexOf(',', second + 1)
  if (first < 0 || second < 0 || third < 0) return undefined
  let organization = line.slice(third + 1).trimEnd()
  if (organization.startsWith('"')) organization = organization.slice(1, -1).replaceAll('""', '"')
  return [line.slice(0, first), line.slice(first + 1, second), line.slice(second + 1, third), organization]
}

function loadCsv(file: string, family: 4 | 6, records: AsnRecord[], interned: Map<string, number>) {
  const columns =
    family === 4
      ? createColumns<number>((n) => new Float64Array(n))
      : createColumns<bigint>((n) => new BigUint64Array(n))
  const text = readFileSync(file, 'utf8')
  let position = 0
  while (position < text.length) {
    let end = text.indexOf('\n', position)
    if (end < 0) end = text.length
    const fields = parseLine(text.slice(position, end))
    position = end + 1
    if (!fields) continue
    const [start, last, asn, organization] = fields
    // Records are shared by every range of the same AS, so the table stores small indexes.
    const id = `${asn}\u0000${organization}`
    let index = interned.get(id)
    if (index === undefined) {
      index = records.push({ asn: Number(asn), organization }) - 1
      interned.set(id, index)
    }
    if (family === 4)
      (columns as ReturnType<typeof createColumns<number>>).push(Number(start), Number(last), index)
    // Keys are the upper 64 bits of IPv6 addresses (see address.ts).
    else
      (columns as ReturnType<typeof createColumns<bigint>>).push(
        BigInt(start) >> 64n,
        BigInt(last) >> 64n,
        index,
      )
  }
  return columns.build()
}

/** Loads the ip-location-db ASN CSVs (`asn-ipv4-num.csv`, `asn-ipv6-num.csv`) from a directory. */
function loadCsvDatabase(dir: string): AsnDatabase {
  const records: AsnRecord[] = []
  const interned = new Map<string, number>()
  const v4 = loadCsv(path.join(dir, 'asn-ipv4-num.csv'), 4, records, interned)
  const v6 = loadCsv(path.join(dir, 'asn-ipv6-num.csv'), 6, records, interned)
  const table = fromSorted(v4 as never, v6 as never, records)
  return { source: dir, lookup: (_ip, key) => table.get(key) }
}

interface MmdbAsn {
  autonomous_system_number?: number
  autonomous_system_organization?: string
}

async function loadMmdbDatabase(file: string): Promise<AsnDatabase> {
  const reader = await openMmdb(file, { cache: { max: 20_000 } })
  return {
    source: file,
    lookup(ip) {
      const record = reader.get(ip) as MmdbAsn | null
      if (!record?.autonomous_system_number) return undefined
      return {
        asn: record.autonomous_system_number,
        organization: record.autonomous_system_organization ?? '',
      }
    },
  }
}

/**
 * Opens the ASN data: a `.mmdb` file, a directory with ip-location-db CSVs, or (unset) the
 * bundled package.
 * @example const asn = await openAsnDatabase(); asn.lookup('8.8.8.8', parseIp('8.8.8.8')!)
 */
export async function openAsnDatabase(source?: string): Promise<AsnDatabase> {
  if (source?.endsWith('.mmdb')) return loadMmdbDatabase(source)
  return loadCsvDatabase(source ?? defaultAsnDataDir())
}
