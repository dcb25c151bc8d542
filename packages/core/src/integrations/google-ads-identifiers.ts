// The identifiers Google's Data Manager API takes from us: hashed emails and Google Ads customer ids.
//
// Emails, as Google's "Format user data" guide asks for `emailAddress`: lowercase; leading,
// trailing and intermediate whitespace removed; for the gmail.com and googlemail.com domains every
// dot before the `@` removed and a `+tag` cut off (Gmail ignores both, so `jane.doe+ads@gmail.com`
// and `janedoe@gmail.com` are one mailbox and must hash alike); then SHA-256, hex encoded
// (`encoding: HEX`). Other domains keep their dots and tags. The same rule is written twice: in
// TypeScript for single addresses, and as an engine expression for the sync, which hashes a whole
// list in the store (`googleEmailHashSql`); a property test keeps the two equal.
//
// Customer ids: Google Ads shows them as `123-456-7890`; the API's paths and `accountId` fields take
// the ten digits alone. A person may type either form; the adapter always sends the digits.
import { createHash } from 'node:crypto'

const gmailDomains = new Set(['gmail.com', 'googlemail.com'])

/** The email as Google normalizes it before hashing. */
export function normalizeGoogleEmail(email: string): string {
  const compact = email.toLowerCase().replace(/[ \t\n\r\f\v]+/g, '')
  const at = compact.lastIndexOf('@')
  if (at < 0) return compact
  const domain = compact.slice(at + 1)
  if (!gmailDomains.has(domain)) return compact
  const local = compact.slice(0, at).split('+')[0]!
  return `${local.replaceAll('.', '')}@${domain}`
}

/**
 * The engine expression of `googleEmailHash` for an email column; '' for an empty email.
 * @example googleEmailHashSql('email') // in a SELECT over contacts
 */
export function googleEmailHashSql(column: string): string {
  const compact = `replaceRegexpAll(lowerUTF8(${column}), '[ \\\\t\\\\n\\\\r\\\\f\\\\v]', '')`
  const at = `(length(${compact}) - position(reverse(${compact}), '@') + 1)`
  const local = `substring(${compact}, 1, ${at} - 1)`
  const domain = `substring(${compact}, ${at} + 1)`
  const gmail = `(position(${compact}, '@') > 0 AND ${domain} IN ('gmail.com', 'googlemail.com'))`
  const canonical = `if(${gmail}, concat(replaceAll(splitByChar('+', ${local})[1], '.', ''), '@', ${domain}), ${compact})`
  return `if(${compact} = '', '', lower(hex(SHA256(${canonical}))))`
}

/** SHA-256 hex of the email normalized as Google asks: what an audience member's `emailAddress` holds. */
export function googleEmailHash(email: string): string {
  return createHash('sha256').update(normalizeGoogleEmail(email)).digest('hex')
}

const customerIdPattern = /^(?:\d{10}|\d{3}-\d{3}-\d{4})$/

/** Whether the text is a Google Ads customer id: ten digits, alone or grouped as `123-456-7890`. */
export function isGoogleAdsCustomerId(id: string): boolean {
  return customerIdPattern.test(id.trim())
}

/** The ten digits of a customer id in either form; undefined when it is not one. */
export function googleAdsCustomerId(id: string): string | undefined {
  return isGoogleAdsCustomerId(id) ? id.trim().replaceAll('-', '') : undefined
}
