// A partner's custom domain (docs/decisions.md, "Partner custom domain"): a hostname of the partner's,
// pointed at the service by a CNAME, from which ingest serves the pixel and the collect endpoints
// for the partner's organizations (and Caddy gets it a certificate on demand). One domain per
// partner; setting another one starts unverified again. A domain is served only once a DNS check
// found its record (dns-check.ts), and verified domains are checked again daily: one whose record
// disappeared is failed, and stops being served.
import { isIP } from 'node:net'
import { domainToASCII } from 'node:url'
import { appError } from '../errors.js'
import { nextVersion } from '../ids.js'
import type { Store } from '../store/client.js'
import { bareHost, type CnameCheck, checkCname, type DnsResolver } from './dns-check.js'

/** pending: not checked conclusively yet; verified; failed: the last conclusive check found no record. */
export type DomainStatus = 'pending' | 'verified' | 'failed'

export interface PartnerDomainRow {
  partner_id: string
  domain: string
  /** What the CNAME must point to (CUSTOM_DOMAIN_TARGET when the domain was set). */
  cname_target: string
  status: DomainStatus
  /** When the domain last became verified (kept once failed, to say the record disappeared). */
  verified_at: string | null
  checked_at: string | null
  /** What DNS answered at the last check, in words. */
  last_answer: string
  created_at: string
  updated_at: string
  /** The row's version, as a decimal string (UInt64). */
  version: string
}

/** The spec's resource: `PUT /partner/domain` and the verification read. */
export interface DomainResource {
  domain: string
  verified: boolean
  /** The record to create, as a zone-file line: `track.example.com. CNAME t.service.example.` */
  verificationRecord: string
  cnameTarget: string
  dnsRecords: { type: 'CNAME'; name: string; value: string; status?: DomainStatus }[]
  instructions: string
}

export interface VerifyResult {
  success: boolean
  verified: boolean
  /** On failure: what DNS answered instead. */
  message?: string
}

const now = () => new Date().toISOString()

const invalid = (message: string) =>
  appError('invalid_request', `domain: ${message}`, { issues: [{ path: 'domain', message }] })

// RFC 1123 labels: letters, digits and hyphens, 1 to 63 of them, no hyphen at either end.
const labelPattern = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/

/**
 * The domain as stored: lowercase, without the root's trailing dot, an internationalized name in
 * its ASCII (punycode) form. Throws a 400 naming `domain` when it is not a hostname the service
 * could serve: an IP address, a URL, a single label, a bad label, a numeric TLD, longer than 253
 * characters, or the service's own host (`ownHost`: the host of PUBLIC_URL, and any other the
 * caller names; subdomains of it are the partner's business and allowed).
 * @example normalizeDomain('Track.Acme.com.', { ownHost: 'app.service.example' }) // 'track.acme.com'
 */
export function normalizeDomain(
  input: string,
  options: { ownHost?: string | readonly string[] | undefined } = {},
): string {
  let name = String(input ?? '')
    .trim()
    .toLowerCase()
  if (name === '') throw invalid('is required')
  // Far past any hostname: refused before any work on it.
  if (name.length > 1024) throw invalid('must be at most 253 characters')
  if (isIP(name.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '')) !== 0) {
    throw invalid('must be a hostname, not an IP address')
  }
  if (/[/:?#@\s]/.test(name)) throw invalid('must be a hostname alone, without scheme, port or path')
  if (/[^\p{ASCII}]/u.test(name)) {
    const ascii = domainToASCII(name)
    if (ascii === '') throw invalid('is not a valid internationalized domain name')
    name = ascii
  }
  name = name.replace(/\.$/, '')
  if (name.length > 253) throw invalid('must be at most 253 characters')
  const labels = name.split('.')
  if (labels.length < 2) throw invalid('must be a full hostname, such as track.example.com')
  const bad = labels.find((label) => !labelPattern.test(label))
  if (bad !== undefined) {
    throw invalid(
      bad === ''
        ? 'has an empty label (two dots in a row, or a leading dot)'
        : `label "${bad}" is not valid: letters, digits and hyphens, 1 to 63 characters, not starting or ending with a hyphen`,
    )
  }
  if (!/^[a-z]/.test(labels.at(-1)!)) throw invalid('must end with a top-level domain starting with a letter')
  const own = [options.ownHost ?? []].flat().map(bareHost).filter(Boolean)
  if (own.includes(name)) throw invalid("is the service's own host")
  return name
}

const selectColumns = `toString(partner_id) AS partner, domain, cname_target, status, verified_at, checked_at,
  last_answer, created_at, updated_at, version`

type StoredRow = Omit<PartnerDomainRow, 'partner_id' | 'version'> & {
  partner: string
  version: number | string
}

const fromStore = ({ partner, version, ...row }: StoredRow): PartnerDomainRow => ({
  ...row,
  partner_id: partner,
  version: String(version),
})

/** The partner's domain, as stored (none: undefined). */
export async function readPartnerDomain(
  store: Store,
  partnerId: string,
): Promise<PartnerDomainRow | undefined> {
  const [row] = await store.query<StoredRow>(
    `SELECT ${selectColumns} FROM partner_domains FINAL WHERE partner_id = {partnerId:UUID} AND is_deleted = 0`,
    { partnerId },
  )
  return row && fromStore(row)
}

async function writeRow(store: Store, row: PartnerDomainRow): Promise<void> {
  await store.insert('partner_domains', [{ ...row, is_deleted: 0 }])
}

/** Whether a partner other than this one serves the domain (it is verified there). */
async function verifiedElsewhere(store: Store, domain: string, partnerId: string): Promise<boolean> {
  const [row] = await store.query<{ n: number }>(
    `SELECT count() AS n FROM partner_domains FINAL
     WHERE domain = {domain:String} AND status = 'verified' AND partner_id != {partnerId:UUID} AND is_deleted = 0`,
    { domain, partnerId },
  )
  return Number(row?.n ?? 0) > 0
}

/**
 * Sets the partner's domain (from `normalizeDomain`), to be pointed at `cnameTarget`. Another
 * domain, or another target, replaces the row and starts at pending; the same domain and target
 * again change nothing (a verified domain stays verified). A domain another partner has verified
 * is refused (409): both CNAMEs would point to the same target, so the second partner's check
 * would pass on the first one's record.
 * @example const row = await setPartnerDomain(store, partnerId, 'track.acme.com', 't.service.example')
 */
export async function setPartnerDomain(
  store: Store,
  partnerId: string,
  domain: string,
  cnameTarget: string,
): Promise<PartnerDomainRow> {
  const target = bareHost(cnameTarget)
  if (!target) throw new Error('No CNAME target for custom domains (CUSTOM_DOMAIN_TARGET or PUBLIC_URL)')
  // The target checked against itself would pass (its addresses are its own).
  if (bareHost(domain) === target) throw invalid("is the service's own host")
  if (await verifiedElsewhere(store, domain, partnerId)) {
    const message = 'another partner already uses this domain'
    throw appError('conflict', `domain: ${message}`, { issues: [{ path: 'domain', message }] })
  }
  const current = await readPartnerDomain(store, partnerId)
  if (current && current.domain === domain && current.cname_target === target) return current
  const at = now()
  const row: PartnerDomainRow = {
    partner_id: partnerId.toLowerCase(),
    domain,
    cname_target: target,
    status: 'pending',
    verified_at: null,
    checked_at: null,
    last_answer: '',
    created_at: at,
    updated_at: at,
    version: nextVersion(),
  }
  await writeRow(store, row)
  if (current?.status === 'verified') forgetVerifiedDomains(store)
  return row
}

// Ingest asks on every pixel and collect hit of a custom host, and Caddy on every TLS handshake for
// a name it has no certificate for (anyone can send any name). So the verified domains are read
// whole (one row per partner at most) and kept per store: a lookup is a Map read, and the snapshot
// is refreshed in the background once older than `maxAgeMs`; a caller waits only for the first
// read. Another process's changes show within that age; this process's own writes at once. While
// the store is unreachable the last snapshot keeps being served: better than refusing every hit.
interface VerifiedSnapshot {
  domains?: Map<string, string>
  loadedAt: number
  loading?: Promise<Map<string, string>> | undefined
}
const snapshots = new WeakMap<Store, VerifiedSnapshot>()

/** Drops this process's snapshot, after a write that changed which domains are verified. */
function forgetVerifiedDomains(store: Store): void {
  snapshots.delete(store)
}

async function loadVerifiedDomains(store: Store): Promise<Map<string, string>> {
  // Earliest verified first: should two partners ever both be verified for a domain (their checks
  // raced), the one verified first keeps it.
  const rows = await store.query<{ domain: string; partner: string }>(
    `SELECT domain, toString(partner_id) AS partner FROM partner_domains FINAL
     WHERE status = 'verified' AND is_deleted = 0 ORDER BY verified_at, partner`,
  )
  const domains = new Map<string, string>()
  for (const row of rows) if (!domains.has(row.domain)) domains.set(row.domain, row.partner)
  return domains
}

function refresh(store: Store, snapshot: VerifiedSnapshot): Promise<Map<string, string>> {
  snapshot.loading ??= loadVerifiedDomains(store)
    .then((domains) => {
      snapshot.domains = domains
      snapshot.loadedAt = Date.now()
      return domains
    })
    .finally(() => {
      snapshot.loading = undefined
    })
  return snapshot.loading
}

/**
 * The partner whose verified domain `host` is (a Host header: any case, a port or a trailing dot
 * are ignored), else undefined: for ingest (serve the pixel on this host?) and `GET /tls/ask`.
 * @example await findVerifiedDomain(store, 'Track.Acme.com:443') // '6f1c…' (the partner id)
 */
export async function findVerifiedDomain(
  store: Store,
  host: string,
  options: { maxAgeMs?: number } = {},
): Promise<string | undefined> {
  const name = bareHost(host.replace(/:\d+$/, ''))
  if (!name) return undefined
  let snapshot = snapshots.get(store)
  if (!snapshot) {
    snapshot = { loadedAt: 0 }
    snapshots.set(store, snapshot)
  }
  if (!snapshot.domains) return (await refresh(store, snapshot)).get(name)
  if (Date.now() - snapshot.loadedAt >= (options.maxAgeMs ?? 30_000)) {
    // Served stale meanwhile; a failed refresh is tried again on a later call.
    refresh(store, snapshot).catch(() => {})
  }
  return snapshot.domains.get(name)
}

const day = (iso: string | null) => (iso ? `${iso.slice(0, 16).replace('T', ' ')} UTC` : 'an earlier check')

/** What a person does in their DNS provider, and what the last check found. */
function instructionsFor(row: PartnerDomainRow, record: string): string {
  const { domain, cname_target: target } = row
  const create =
    `Where the DNS of ${domain} is managed, create a CNAME record named ${domain} with the value ` +
    `${target} (as a zone-file line: ${record}). If ${domain} is an apex domain (nothing before the ` +
    `registered name), where most providers allow no CNAME, create your provider's ALIAS or ANAME ` +
    `record, or a flattened CNAME, pointing to ${target}. Then verify the domain. DNS changes can ` +
    `take up to 48 hours to propagate: if verification fails at first, try again later.`
  if (row.status === 'verified') {
    return (
      `${domain} is verified (since ${day(row.verified_at)}; last checked on ${day(row.checked_at)}: ` +
      `${row.last_answer}). Keep the CNAME record to ${target} in place: the domain is checked ` +
      `daily, and is no longer served once the record is gone.`
    )
  }
  if (row.status === 'failed') {
    const lost = row.verified_at
      ? `The record has disappeared: ${domain} was verified on ${day(row.verified_at)}, and is no ` +
        `longer served since the check of ${day(row.checked_at)}: ${row.last_answer}. `
      : `The check of ${day(row.checked_at)} failed: ${row.last_answer}. `
    return `${lost}${create}`
  }
  const last = row.checked_at ? ` Last checked on ${day(row.checked_at)}: ${row.last_answer}.` : ''
  return `${create}${last}`
}

/**
 * The spec's resource for a stored domain; `withStatus` (the verification read) adds each DNS
 * record's status.
 * @example presentDomain(row, { withStatus: true }).dnsRecords // [{ type: 'CNAME', name: 'track.acme.com', value: 't.service.example', status: 'pending' }]
 */
export function presentDomain(row: PartnerDomainRow, options: { withStatus?: boolean } = {}): DomainResource {
  const verificationRecord = `${row.domain}. CNAME ${row.cname_target}.`
  return {
    domain: row.domain,
    verified: row.status === 'verified',
    verificationRecord,
    cnameTarget: row.cname_target,
    dnsRecords: [
      {
        type: 'CNAME',
        name: row.domain,
        value: row.cname_target,
        ...(options.withStatus ? { status: row.status } : {}),
      },
    ],
    instructions: instructionsFor(row, verificationRecord),
  }
}

/**
 * Checks the row's record and stores the outcome: verified when found; failed on a conclusive
 * answer without it; unchanged status when DNS did not answer (a timeout says nothing about the
 * record). The write's version is the read row's plus one, so a domain set meanwhile (a fresh,
 * larger version) wins over this check's outcome instead of being overwritten by the old domain.
 */
async function checkAndRecord(
  store: Store,
  row: PartnerDomainRow,
  resolver: DnsResolver,
): Promise<{ row: PartnerDomainRow; check: CnameCheck }> {
  // A partner claiming a domain another one serves (verified ones keep their claim on re-checks).
  const check: CnameCheck =
    row.status !== 'verified' && (await verifiedElsewhere(store, row.domain, row.partner_id))
      ? { ok: false, answer: 'another partner already uses this domain' }
      : await checkCname(resolver, row.domain, row.cname_target)
  const at = now()
  const status: DomainStatus = check.ok ? 'verified' : check.transient ? row.status : 'failed'
  const next: PartnerDomainRow = {
    ...row,
    status,
    verified_at: check.ok && row.status !== 'verified' ? at : row.verified_at,
    checked_at: at,
    last_answer: check.answer,
    updated_at: at,
    version: (BigInt(row.version) + 1n).toString(),
  }
  await writeRow(store, next)
  if (status !== row.status) forgetVerifiedDomains(store)
  return { row: next, check }
}

/**
 * `POST /partner/domain/verify`: checks the partner's domain now. Throws `resource_not_found` when
 * the partner has set none.
 * @example await verifyPartnerDomain(store, partnerId, resolver) // { success: false, verified: false, message: 'track.acme.com is not verified: points to …' }
 */
export async function verifyPartnerDomain(
  store: Store,
  partnerId: string,
  resolver: DnsResolver,
): Promise<VerifyResult> {
  const current = await readPartnerDomain(store, partnerId)
  if (!current) throw appError('resource_not_found', 'No custom domain is set')
  const { row, check } = await checkAndRecord(store, current, resolver)
  const verified = row.status === 'verified'
  if (check.ok) return { success: true, verified }
  const hint = check.transient ? '' : ' DNS changes can take up to 48 hours to propagate.'
  return { success: false, verified, message: `${row.domain} is not verified: ${check.answer}.${hint}` }
}

export interface RecheckSummary {
  checked: number
  /** The domains that were verified and are failed now. */
  failed: string[]
  /** Checks DNS gave no conclusive answer to (the domain stays verified). */
  inconclusive: number
}

/**
 * The daily pass: checks every verified domain again; one whose record is gone becomes failed
 * (and is no longer served). `minAgeMs` skips domains checked more recently (a pass run again
 * after a restart); `concurrency` bounds the lookups in flight.
 * @example const { failed } = await recheckVerifiedDomains(store, createDnsResolver(config.dnsServers))
 */
export async function recheckVerifiedDomains(
  store: Store,
  resolver: DnsResolver,
  options: { minAgeMs?: number; concurrency?: number } = {},
): Promise<RecheckSummary> {
  const cutoff = Date.now() - (options.minAgeMs ?? 0)
  const rows = (
    await store.query<StoredRow>(
      `SELECT ${selectColumns} FROM partner_domains FINAL WHERE status = 'verified' AND is_deleted = 0`,
    )
  )
    .map(fromStore)
    .filter((row) => !row.checked_at || Date.parse(row.checked_at) <= cutoff)
  const summary: RecheckSummary = { checked: 0, failed: [], inconclusive: 0 }
  const queue = [...rows]
  const worker = async () => {
    for (let row = queue.shift(); row; row = queue.shift()) {
      const { row: after, check } = await checkAndRecord(store, row, resolver)
      summary.checked += 1
      if (after.status === 'failed') summary.failed.push(after.domain)
      else if (check.transient) summary.inconclusive += 1
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency ?? 4) }, worker))
  return summary
}
