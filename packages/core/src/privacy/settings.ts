// An organization's privacy settings (migration 0029, `privacy_settings`): how long it keeps raw
// data and full IP addresses (0 takes the server's default), and the countries where it identifies
// companies only. Served from memory like the other small entities: ingest reads them per hit.
import type { Config } from '../config.js'
import { stampColumns } from '../store/columns.js'
import type { EntityDefinition, EntityRepository } from '../store/repository.js'

export interface PrivacySettingsRow {
  organization_id: string
  /** Days of raw data kept; 0: the server's default. */
  retention_days: number
  /** Days a full IP address is kept; 0: the server's default. */
  ip_retention_days: number
  /** 1: hits from `company_only_countries` identify companies, never people, and keep no IP. */
  company_only: number
  /** ISO 3166 alpha-2 codes (upper case); empty: the EEA (`eeaCountries`). */
  company_only_countries: string[]
  created_at: string
  updated_at: string
}

export const privacySettingsTable: EntityDefinition<PrivacySettingsRow> = {
  table: 'privacy_settings',
  key: ['organization_id'],
  columns: {
    organization_id: 'UUID',
    retention_days: 'UInt32',
    ip_retention_days: 'UInt32',
    company_only: 'UInt8',
    company_only_countries: 'Array(String)',
    ...stampColumns,
  },
}

/** What applies to an organization: its own settings, else the server's; `null` days: kept forever. */
export interface EffectivePrivacy {
  retentionDays: number | null
  ipRetentionDays: number | null
  /** Whether each value is the organization's own or the server's default. */
  source: { retentionDays: 'organization' | 'server'; ipRetentionDays: 'organization' | 'server' }
}

/** The limit in days a setting means: the organization's when set, else the server's; 0 is forever. */
function resolve(own: number | undefined, server: number) {
  const days = own ? own : server
  return { days: days === 0 ? null : days, source: own ? ('organization' as const) : ('server' as const) }
}

export function effectivePrivacy(
  row: PrivacySettingsRow | undefined,
  defaults: Config['retention'],
): EffectivePrivacy {
  const retention = resolve(row?.retention_days, defaults.days)
  const ip = resolve(row?.ip_retention_days, defaults.ipDays)
  return {
    retentionDays: retention.days,
    ipRetentionDays: ip.days,
    source: { retentionDays: retention.source, ipRetentionDays: ip.source },
  }
}

/** The organization's effective settings (from memory). */
export async function organizationPrivacy(
  settings: EntityRepository<PrivacySettingsRow>,
  defaults: Config['retention'],
  organizationId: string,
): Promise<EffectivePrivacy> {
  return effectivePrivacy(await settings.get({ organization_id: organizationId }), defaults)
}

/** The oldest instant kept under a limit of `days` (none: everything is kept). */
export const cutoffOf = (days: number | null, now: number) =>
  days === null ? undefined : new Date(now - days * 86_400_000).toISOString()

/**
 * The European Economic Area: the 27 EU member states plus Iceland, Liechtenstein and Norway.
 * Switzerland and the United Kingdom are not in it (name them to include them).
 */
export const eeaCountries: readonly string[] = (
  'AT BE BG HR CY CZ DK EE FI FR DE GR HU IE IT LV LT LU MT NL PL PT RO SK SI ES SE' + ' IS LI NO'
).split(' ')

/** The countries where the organization identifies companies only; none when the mode is off. */
export function companyOnlyCountries(
  row: Pick<PrivacySettingsRow, 'company_only' | 'company_only_countries'> | undefined,
): readonly string[] {
  if (!row?.company_only) return []
  return row.company_only_countries.length > 0 ? row.company_only_countries : eeaCountries
}

const hourMs = 3_600_000

/**
 * From when raw data is whole under a limit of `days` (null: kept forever): the hour after the
 * cutoff, since the pass that deletes older rows runs about hourly. Stable within an hour, so an
 * answer that carries it can be compared and cached.
 */
export const rawDataFrom = (days: number | null, now: number): string | null =>
  days === null ? null : new Date(Math.ceil((now - days * 86_400_000) / hourMs) * hourMs).toISOString()
