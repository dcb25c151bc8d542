// Campaign data from the page URL: the five UTM parameters get their own columns; ad click ids
// (gclid, fbclid, msclkid, ...) and the less common utm_* go to trackingParams.

export const utmColumns = ['utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content'] as const

export type UtmColumn = (typeof utmColumns)[number]

/** Click ids of ad platforms and email tools that are worth keeping with the session. */
export const clickIdParams = new Set([
  'gclid',
  'gbraid',
  'wbraid',
  'gclsrc',
  'dclid',
  'gad_source',
  'fbclid',
  'msclkid',
  'li_fat_id',
  'ttclid',
  'twclid',
  'yclid',
  'epik',
  'rdt_cid',
  'sccid',
  'irclid',
  'obclid',
  'tblci',
  'mc_cid',
  'mc_eid',
  '_hsenc',
  '_hsmi',
  'igshid',
  's_kwcid',
  'ef_id',
  'qclid',
  'wickedid',
  'cjevent',
])

export interface CampaignInfo {
  utm: Record<UtmColumn, string>
  trackingParams: Record<string, string>
}

const maxValue = 512
const maxParams = 20

/** UTM columns and tracking params of a page URL. */
export function campaignParams(url: URL): CampaignInfo {
  const utm = { utm_source: '', utm_medium: '', utm_campaign: '', utm_term: '', utm_content: '' }
  const trackingParams: Record<string, string> = {}
  let kept = 0
  if (!url.search) return { utm, trackingParams }
  for (const [rawName, value] of url.searchParams) {
    const name = rawName.toLowerCase()
    if ((utmColumns as readonly string[]).includes(name)) {
      utm[name as UtmColumn] ||= value.slice(0, maxValue)
    } else if (
      (clickIdParams.has(name) || name.startsWith('utm_')) &&
      kept < maxParams &&
      !(name in trackingParams)
    ) {
      trackingParams[name] = value.slice(0, maxValue)
      kept += 1
    }
  }
  return { utm, trackingParams }
}
