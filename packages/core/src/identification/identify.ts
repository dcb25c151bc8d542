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
import { visitorEvents } from './visitor-events.js'

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

/**
 * Identifies the visitors of a batch of identify hits (the last hit of a visitor wins).
 * @example await identifyVisitors({ store, repos }, rows.filter((row) => row.type === 'identify'))
 */
export async function identifyVisitors(
  deps: IdentifyDeps,
  hits: readonly IdentifyHit[],
): Promise<IdentifyResult> {
  const { store, repos } = deps
  const result: IdentifyResult = { visitors: [], persons: 0, firstIdentifications: 0, dropped: 0 }
  const last = new Map<string, IdentifyHit & { key: string }>()
  for (const hit of hits) {
    const key = emailKey(hit.email)
    if (key === undefined) {
      result.dropped++
      continue
    }
    last.set(`${hit.organization_id}/${hit.visitor_id}`, { ...hit, key })
  }
  const wanted = [...last.values()].filter((hit) => !deps.identified?.settled(hit))
  if (wanted.length === 0) return result
  const organizationIds = [...new Set(wanted.map((hit) => hit.organization_id))]

  // The visitor rows first: a visitor already identified as a person needs no contact lookup and
  // no charge (most identify hits come from visitors identified before).
  const known = new Map<string, Awaited<ReturnType<typeof loadVisitors>>>()
  for (const organizationId of organizationIds) {
    const ids = wanted.filter((hit) => hit.organization_id === organizationId).map((hit) => hit.visitor_id)
    known.set(organizationId, await loadVisitors(store, organizationId, ids))
  }
  const needsContact = wanted.filter(
    (hit) => !known.get(hit.organization_id)?.existing.get(hit.visitor_id)?.contact_id,
  )
  const contacts = await findContactsByKeys(
    store,
    needsContact.map((hit) => hit.key),
  )
  const domains = await companiesByDomain(store, [
    ...new Set(
      [...contacts.values()].filter((c) => !c.company_id && c.company_domain).map((c) => c.company_domain),
    ),
  ])
  const events: StoredEvent[] = []
  const rows: VisitorRow[] = []
  const unchanged: VisitorRow[] = []
  const firsts: { row: VisitorRow; hit: IdentifyHit }[] = []

  for (const organizationId of organizationIds) {
    const organization = await repos.organizations.get({ id: organizationId })
    if (!organization) continue // an organization deleted since the hit: nothing to identify for
    const hitsOfOrganization = wanted.filter((hit) => hit.organization_id === organizationId)
    const { existing, firstSeen } = known.get(organizationId)!
    // Every person identification of the batch charged at once, in hit order, while credits allow.
    const { allowed, balance, before, lastGrant } = await chargeIdentifications(store, {
      organizationId,
      visitorIds: needsContact
        .filter((hit) => hit.organization_id === organizationId && contacts.has(hit.key))
        .map((hit) => hit.visitor_id),
      maxOverages: organization.max_overages,
    })
    events.push(...creditEvents(organizationId, before, balance, lastGrant))
    for (const hit of hitsOfOrganization) {
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
        unchanged.push(before)
        continue
      }
      const now = new Date().toISOString()
      const contactCompany =
        contact?.company_id || (contact?.company_domain ? domains.get(contact.company_domain) : '')
      const identity = person ?? (isPerson ? {} : { email: email as string })
      const row: VisitorRow = {
        ...blankContactFields,
        ...before,
        ...identity,
        id: hit.visitor_id,
        organization_id: organizationId,
        company_id: (person && contactCompany) || before?.company_id || hit.company_id,
        identified_at: before?.identified_at ?? hit.timestamp,
        first_seen_at: earliest(
          before?.first_seen_at ?? firstSeen.get(hit.visitor_id) ?? hit.timestamp,
          hit.timestamp,
        ),
        last_seen_at: latest(before?.last_seen_at ?? hit.timestamp, hit.timestamp),
        created_at: before?.created_at ?? now,
        updated_at: now,
      }
      rows.push(row)
      if (!before?.identified_at) firsts.push({ row, hit })
    }
    events.push(
      ...(await visitorEvents(
        deps,
        organization,
        'visitor.identified',
        firsts
          .splice(0)
          .map(({ row, hit }) => ({ visitor: row, sessionId: hit.session_id, timestamp: hit.timestamp })),
      )),
    )
  }
  result.firstIdentifications = events.length
  // The events first: a crash before the visitor rows are written identifies again on the replay,
  // which stores the same events under the same ids.
  await appendEvents(store, events)
  if (rows.length > 0) {
    await store.insert(
      'visitors',
      rows.map((row) => ({ ...row, version: nextVersion(), is_deleted: 0 })),
    )
  }
  for (const row of [...unchanged, ...rows]) deps.identified?.remember(row)
  result.visitors = rows
  return result
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
