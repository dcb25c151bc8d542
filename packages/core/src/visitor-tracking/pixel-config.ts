import { appError } from '../errors.js'
import type { Repositories } from '../repositories.js'
import type { PixelConfigRow } from './rows.js'

/** The organization's pixel config; every organization gets one when it is created. */
export async function getPixelConfig(repos: Repositories, organizationId: string): Promise<PixelConfigRow> {
  const config = await repos.pixelConfigs.get({ organization_id: organizationId })
  if (!config) throw appError('resource_not_found', 'Pixel config not found')
  return config
}

/** The fields of a pixel config an organization may change (already validated and normalised). */
export interface PixelConfigUpdate {
  allowedReferrers?: string[] | undefined
  verifiedDomains?: string[] | undefined
  ipTracking?: boolean | undefined
  respectPrivacySignals?: boolean | undefined
  formCapture?: boolean | undefined
  icpSettings?: Record<string, unknown> | undefined
}

const unique = (values: string[]) => [...new Set(values)]

/**
 * Saves the changed fields; through the read model, ingest in every process sees them at once.
 * @example await updatePixelConfig(repos, org.id, { verifiedDomains: ['example.com'] })
 */
export async function updatePixelConfig(
  repos: Repositories,
  organizationId: string,
  update: PixelConfigUpdate,
): Promise<PixelConfigRow> {
  const current = await getPixelConfig(repos, organizationId)
  const next: PixelConfigRow = {
    ...current,
    ...(update.allowedReferrers ? { allowed_referrers: unique(update.allowedReferrers) } : {}),
    ...(update.verifiedDomains ? { verified_domains: unique(update.verifiedDomains) } : {}),
    ...(update.ipTracking === undefined ? {} : { ip_tracking: update.ipTracking }),
    ...(update.respectPrivacySignals === undefined
      ? {}
      : { respect_privacy_signals: update.respectPrivacySignals }),
    ...(update.formCapture === undefined ? {} : { form_capture: update.formCapture }),
    ...(update.icpSettings ? { icp_settings: JSON.stringify(update.icpSettings) } : {}),
    updated_at: new Date().toISOString(),
  }
  await repos.pixelConfigs.save(next)
  return next
}

/** `icp_settings` as an object; a damaged value reads as empty rather than failing the whole config. */
export function parseIcpSettings(row: PixelConfigRow): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(row.icp_settings)
    return value && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {}
  } catch {
    return {}
  }
}
