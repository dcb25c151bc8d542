// The `domain` of an imported company: what people paste (a URL, `www.Acme.com`, `acme.com/about`)
// is reduced to the registrable hostname; anything that is still not a hostname is rejected, so
// "not a domain" never becomes a company's domain.
import { domainToASCII } from 'node:url'

// An LDH label (RFC 1123): 1-63 letters, digits or hyphens, no hyphen at either end.
const label = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/
// A top-level label: letters, or an internationalized one in punycode. Never all digits, so an IP
// address is not a domain.
const topLabel = /^(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/

// A hostname that normalization leaves as it is: lowercase LDH labels, a letters-only top label, no
// leading `www.` and no punycode (which domainToASCII checks). The contacts import normalizes a
// million company domains with this shortcut; the rest take the long way.
const plainHost = /^(?!www\.)(?!.*xn--)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/

/**
 * The hostname in a domain or URL, normalized: lowercase, punycode for international names, no
 * scheme, credentials, port, path, query, fragment, trailing dot or leading `www.`. Undefined when
 * what is left is not a hostname with at least one dot.
 * @example normalizeDomain('https://www.Acme.example/about') // 'acme.example'
 */
export function normalizeDomain(value: string): string | undefined {
  // Already a bare lowercase ASCII hostname, the common case in a file: nothing would change it.
  if (value.length <= 253 && plainHost.test(value)) return value
  let host = value.trim()
  host = host.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '') // scheme
  host = host.replace(/[/?#].*$/s, '') // path, query, fragment
  host = host.replace(/^[^@]*@/, '') // credentials
  host = host.replace(/:\d*$/, '') // port
  host = host.replace(/\.$/, '') // the root's dot
  if (host === '' || /\s/.test(host)) return undefined
  // International names to punycode (lowercased on the way); '' when the name cannot be encoded.
  host = domainToASCII(host.toLowerCase())
  host = host.replace(/^www\./, '')
  if (host.length === 0 || host.length > 253) return undefined
  const labels = host.split('.')
  if (labels.length < 2) return undefined
  if (!labels.every((part) => label.test(part))) return undefined
  return topLabel.test(labels.at(-1)!) ? host : undefined
}
