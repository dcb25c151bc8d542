// Origin check: an organization's hits must come from its own sites. With neither allowed
// referrers nor verified domains configured, every origin is accepted (a fresh install works
// before anything is configured); otherwise the page's host, and the Origin (else Referer)
// header when the browser sent one, must match one of them.
import type { PixelConfigRow } from '@visitor-id/core/visitor-tracking'

/** The host of a domain or URL entry: `example.com`, `*.example.com`, `https://app.example.com/x`. */
function entryHost(entry: string): string | undefined {
  const value = entry.trim().toLowerCase().replace(/^\*\./, '')
  try {
    const host = /^[a-z][a-z0-9+.-]*:\/\//.test(value) ? new URL(value).hostname : value.split(/[/:]/)[0]
    return host ? host.replace(/\.$/, '') : undefined
  } catch {
    return undefined
  }
}

/** A rule covers its host and every subdomain of it. */
const matches = (host: string, rule: string) => host === rule || host.endsWith(`.${rule}`)

function hostOf(value: string | undefined): string | undefined {
  if (!value || value === 'null') return undefined
  try {
    return new URL(value).hostname.toLowerCase()
  } catch {
    return undefined
  }
}

/**
 * True when a hit for `pageUrl` (with these request headers) may be stored for this config.
 * Verified domains and allowed referrers both cover their subdomains.
 */
export function isAllowedOrigin(
  config: Pick<PixelConfigRow, 'allowed_referrers' | 'verified_domains'>,
  pageHost: string,
  originHeader: string | undefined,
  refererHeader: string | undefined,
): boolean {
  const rules = [...config.verified_domains, ...config.allowed_referrers]
    .map(entryHost)
    .filter((rule) => rule !== undefined)
  if (rules.length === 0) return true
  const allowed = (host: string) => rules.some((rule) => matches(host, rule))
  if (!allowed(pageHost.toLowerCase())) return false
  const requestHost = hostOf(originHeader) ?? hostOf(refererHeader)
  return requestHost === undefined || allowed(requestHost)
}
