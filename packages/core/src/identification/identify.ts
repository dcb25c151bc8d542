// Identify to person (docs/decisions.md, "Identification"): an identify hit (site-supplied email or a
// captured form) matches a contact by email, personal email or the SHA-256 of either; the visitor
// takes the contact's fields and company, and `identified_at` once. The first identification of a
// visitor as a person costs 1 credit (at most once per visitor), and only while the balance allows
// (maxOverages); otherwise, or with no contact, the visitor is known by its email alone. The first
// identification of a visitor stores `visitor.identified` with the whole identification payload,
// before the visitor row says it is identified: a crash in between stores it again under the
// same id on the replay, never loses it, never doubles it.
import { visitorContactFields } from '../contact-fields/contact-fields.js'
import { chargeIdentifications, creditThresholdsCrossed, type LastGrant } from '../credits/ledger.js'
import { appendEvents, eventIdOf, type StoredEvent } from '../events/events.js'
import { nextVersion } from '../ids.js'
import type { Repositories } from '../repositories.js'
import type { Store } from '../store/client.js'
import {
  blankContactFields,
  type VisitorContactFields,
  type VisitorRow,
  visitorsTable,
} from '../visitor-tracking/rows.js'
import { type ContactRow, emailKey, findContactsByKeys, normalizeEmail } from './contacts.js'
import type { IdentifiedVisitors } from './identified-visitors.js'
import { type VisitorEventSubject, visitorEvents } from './visitor-events.js'

/** An identify hit as ingest stored it. */
export interface IdentifyHit {
  organization_id: string
  visitor_id: string
  session_id: string
  /** A site-supplied email, or the SHA-256 hex of a normalized one. */
  email: string
  timestamp: string
  /** The company ingest attributed to the hit's IP ('' when none). */
  company_id: string
}

export interface IdentifyResult {
  /** Visitors written (identified now or again). */
  visitors: VisitorRow[]
  /** Visitors identified as persons for the first time by this call. */
  persons: number
  /** Visitors identified for the first time (each got its `visitor.identified` event). */
  firstIdentifications: number
  /** Hits dropped: the email was malformed or oversized, or a hash matched no contact. */
  dropped: number
}

const earliest = (a: string, b: string) => (Date.parse(a) <= Date.parse(b) ? a : b)
const latest = (a: string, b: string) => (Date.parse(a) >= Date.parse(b) ? a : b)
const visitorColumns = Object.keys(visitorsTable.columns).join(', ')
/** The visitor rows of one organization, and when each visitor was first seen, in two queries side by side. */
async function loadVisitors(store: Store, organizationId: string, ids: string[]) {
  const [rows, firstSeen] = await Promise.all([
    store.query<VisitorRow>(
      `SELECT ${visitorColumns} FROM visitors FINAL WHERE organization_id = {organizationId:UUID} AND id IN {ids:Array(UUID)}`,
      { organizationId, ids },
    ),
    // From the sessions (each session's first hit; the identity row, session id zero, aside): keyed
    // by visitor in small granules. The same read on page_views went through every granule of
    // the table's visitor and time columns for a hundred random visitors, and grew with it.
    store.query<{ visitor: string; first: string }>(
      `SELECT visitor_id AS visitor, min(started_at) AS first FROM sessions
       WHERE organization_id = {organizationId:UUID} AND visitor_id IN {ids:Array(UUID)}
         AND session_id != toUUID('00000000-0000-0000-0000-000000000000')
       GROUP BY visitor_id`,
      { organizationId, ids },
    ),
  ])
  return {
    existing: new Map(rows.map((row) => [row.id, row])),
    firstSeen: new Map(firstSeen.map((row) => [row.visitor, row.first])),
  }
}

/** Imported companies by domain, for contacts that name their company by domain. */
async function companiesByDomain(store: Store, domains: string[]): Promise<Map<string, string>> {
  if (domains.length === 0) return new Map()
  const rows = await store.query<{ domain: string; id: string }>(
    'SELECT domain, any(id) AS id FROM companies FINAL WHERE domain IN {domains:Array(String)} GROUP BY domain',
    { domains },
  )
  return new Map(rows.map((row) => [row.domain, row.id]))
}

/**
 * The visitor's contact fields from its contact, all but the phone: a phone is paid data (docs/decisions.md,
 * "Phone search"), which an organization gets from a search of its own (phone/search.ts), never
 * from identification; the dataset provider reads it from the contact when a search asks.
 */
function fromContact(contact: ContactRow): VisitorContactFields {
  const fields: VisitorContactFields = { ...blankContactFields, contact_id: contact.id }
  for (const field of visitorContactFields) if (field !== 'phone') fields[field] = contact[field]
  return fields
}

export interface IdentifyDeps {
  store: Store
  repos: Repositories
  /** Visitors identified lately: their hits that would change nothing skip the store. */
  identified?: IdentifiedVisitors
}

/** An identify hit with the contact key of its email. */
type KeyedHit = IdentifyHit & { key: string }

/** One identification call: what it read for the whole batch, and what it will store. */
interface Batch {
  /** The hits left to identify: the last of each visitor, not settled lately. */
  wanted: KeyedHit[]
  known: Map<string, KnownVisitors>
  /** The hits of visitors not yet identified as persons: only they look for a contact. */
  needsContact: KeyedHit[]
  contacts: Map<string, ContactRow>
  /** Imported companies by domain, for contacts that name their company by domain only. */
  companiesByDomain: Map<string, string>
  result: IdentifyResult
  events: StoredEvent[]
  rows: VisitorRow[]
  /** Visitors identified before whose hit changes nothing: remembered, not written. */
  unchanged: VisitorRow[]
}

type KnownVisitors = Awaited<ReturnType<typeof loadVisitors>>

/**
 * The last hit of each visitor whose email gives a contact key, less those already settled; a
 * malformed or oversized email is counted dropped.
 */
function hitsToIdentify(
  deps: IdentifyDeps,
  hits: readonly IdentifyHit[],
  result: IdentifyResult,
): KeyedHit[] {
  const last = new Map<string, KeyedHit>()
  for (const hit of hits) {
    const key = emailKey(hit.email)
    if (key === undefined) {
      result.dropped++
      continue
    }
    last.set(`${hit.organization_id}/${hit.visitor_id}`, { ...hit, key })
  }
  return [...last.values()].filter((hit) => !deps.identified?.settled(hit))
}

/** Each organization's visitor rows and first-seen times, one organization after the other. */
async function loadKnownVisitors(
  store: Store,
  organizationIds: readonly string[],
  wanted: readonly KeyedHit[],
): Promise<Map<string, KnownVisitors>> {
  const known = new Map<string, KnownVisitors>()
  for (const organizationId of organizationIds) {
    const ids = wanted.filter((hit) => hit.organization_id === organizationId).map((hit) => hit.visitor_id)
    known.set(organizationId, await loadVisitors(store, organizationId, ids))
  }
  return known
}

/** The company a contact names: its own id, else the imported company of its domain. */
function companyOfContact(contact: ContactRow, companies: Map<string, string>): string | undefined {
  return contact.company_id || (contact.company_domain ? companies.get(contact.company_domain) : '')
}

/**
 * The visitor row an identification writes: the row before (if any) with the new identity over
 * it, `identified_at` kept from the first identification, first and last seen widened to the hit.
 */
function identifiedRow(
  hit: IdentifyHit,
  before: VisitorRow | undefined,
  identity: Partial<VisitorRow> | undefined,
  companyId: string,
  firstSeen: string | undefined,
): VisitorRow {
  const now = new Date().toISOString()
  return {
    ...blankContactFields,
    ...before,
    ...identity,
    id: hit.visitor_id,
    organization_id: hit.organization_id,
    company_id: companyId,
    identified_at: before?.identified_at ?? hit.timestamp,
    first_seen_at: earliest(before?.first_seen_at ?? firstSeen ?? hit.timestamp, hit.timestamp),
    last_seen_at: latest(before?.last_seen_at ?? hit.timestamp, hit.timestamp),
    created_at: before?.created_at ?? now,
    updated_at: now,
  }
}

/**
 * Identifies the batch's visitors of one organization: charges their person identifications at
 * once, then adds each visitor's row (or notes it unchanged) and the events to the batch.
 */
async function identifyOrganization(deps: IdentifyDeps, batch: Batch, organizationId: string): Promise<void> {
  const organization = await deps.repos.organizations.get({ id: organizationId })
  if (!organization) return // an organization deleted since the hit: nothing to identify for
  const { existing, firstSeen } = batch.known.get(organizationId)!
  const { result, contacts } = batch
  // Every person identification of the batch charged at once, in hit order, while credits allow.
  const { allowed, balance, before, lastGrant } = await chargeIdentifications(deps.store, {
    organizationId,
    visitorIds: batch.needsContact
      .filter((hit) => hit.organization_id === organizationId && contacts.has(hit.key))
      .map((hit) => hit.visitor_id),
    maxOverages: organization.max_overages,
  })
  batch.events.push(...creditEvents(organizationId, before, balance, lastGrant))
  const firsts: VisitorEventSubject[] = []
  for (const hit of batch.wanted) {
    if (hit.organization_id !== organizationId) continue
    const before = existing.get(hit.visitor_id)
    const isPerson = Boolean(before?.contact_id)
    const contact = isPerson ? undefined : contacts.get(hit.key)
    const person = contact && allowed.has(hit.visitor_id) ? fromContact(contact) : undefined
    if (person) result.persons++
    const email = normalizeEmail(hit.email)
    if (!person && !isPerson && !email) {
      // A hash with no contact (or no credit to use it) leaves nothing to identify the visitor by.
      result.dropped++
      continue
    }
    // Identified before, and nothing to change: no write (its last visit shows in its sessions).
    if (before?.identified_at && !person && (isPerson || before.email === email)) {
      batch.unchanged.push(before)
      continue
    }
    const companyId =
      (person && companyOfContact(contact!, batch.companiesByDomain)) || before?.company_id || hit.company_id
    const identity = person ?? (isPerson ? undefined : { email: email as string })
    const row = identifiedRow(hit, before, identity, companyId, firstSeen.get(hit.visitor_id))
    batch.rows.push(row)
    if (!before?.identified_at)
      firsts.push({ visitor: row, sessionId: hit.session_id, timestamp: hit.timestamp })
  }
  batch.events.push(...(await visitorEvents(deps, organization, 'visitor.identified', firsts)))
}

/**
 * Identifies the visitors of a batch of identify hits (the last hit of a visitor wins).
 * @example await identifyVisitors({ store, repos }, rows.filter((row) => row.type === 'identify'))
 */
export async function identifyVisitors(
  deps: IdentifyDeps,
  hits: readonly IdentifyHit[],
): Promise<IdentifyResult> {
  const { store } = deps
  const result: IdentifyResult = { visitors: [], persons: 0, firstIdentifications: 0, dropped: 0 }
  const wanted = hitsToIdentify(deps, hits, result)
  if (wanted.length === 0) return result
  const organizationIds = [...new Set(wanted.map((hit) => hit.organization_id))]

  // The visitor rows first: a visitor already identified as a person needs no contact lookup and
  // no charge (most identify hits come from visitors identified before).
  const known = await loadKnownVisitors(store, organizationIds, wanted)
  const needsContact = wanted.filter(
    (hit) => !known.get(hit.organization_id)?.existing.get(hit.visitor_id)?.contact_id,
  )
  const contacts = await findContactsByKeys(
    store,
    needsContact.map((hit) => hit.key),
  )
  const domains = [
    ...new Set(
      [...contacts.values()].filter((c) => !c.company_id && c.company_domain).map((c) => c.company_domain),
    ),
  ]
  const batch: Batch = {
    wanted,
    known,
    needsContact,
    contacts,
    companiesByDomain: await companiesByDomain(store, domains),
    result,
    events: [],
    rows: [],
    unchanged: [],
  }
  for (const organizationId of organizationIds) await identifyOrganization(deps, batch, organizationId)
  result.firstIdentifications = batch.events.filter((event) => event.type === 'visitor.identified').length
  await storeIdentifications(deps, batch)
  result.visitors = batch.rows
  return result
}

/** Stores the batch's events, then its visitor rows, and remembers every visitor it identified. */
async function storeIdentifications(deps: IdentifyDeps, batch: Batch): Promise<void> {
  // The events first: a crash before the visitor rows are written identifies again on the replay,
  // which stores the same events under the same ids.
  await appendEvents(deps.store, batch.events)
  if (batch.rows.length > 0) {
    await deps.store.insert(
      'visitors',
      batch.rows.map((row) => ({ ...row, version: nextVersion(), is_deleted: 0 })),
    )
  }
  for (const row of [...batch.unchanged, ...batch.rows]) deps.identified?.remember(row)
}

/**
 * `credits.low` and `credits.exhausted` when this batch's charges cross them (core credits/ledger.ts
 * says where): once per grant, since the event id is made from the grant (a top-up may cross them
 * again). They feed the lifecycle emails and the partner's billing webhook.
 */
function creditEvents(
  organizationId: string,
  before: number,
  after: number,
  lastGrant: LastGrant,
): StoredEvent[] {
  const at = new Date().toISOString()
  return creditThresholdsCrossed(before, after, lastGrant.amount).map((threshold) => {
    const type = threshold === 'credits_low' ? ('credits.low' as const) : ('credits.exhausted' as const)
    return {
      event_id: eventIdOf(type, organizationId, lastGrant.entryId || 'no-grant'),
      type,
      organization_id: organizationId,
      visitor_id: null,
      payload: JSON.stringify({
        event_type: type,
        timestamp: at,
        organization_id: organizationId,
        balance: after,
      }),
      created_at: at,
    }
  })
}
