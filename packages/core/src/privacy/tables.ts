// Every table that can name a person, and how a privacy request treats it: which rows are the
// person's (a condition over the `Person`'s ids), whether an access export lists the rows or only
// counts them (rollups derived from the page views hold aggregate states, not readable records),
// and whether an erasure deletes them. The list is the one place that knows: the erasure and the
// export both walk it, and a test checks that every table of the store is either here or in
// `tablesWithoutPersons` with the reason.
import { identificationEntryId } from '../credits/ledger.js'
import type { Person } from './person.js'

export interface PersonalTable {
  table: string
  /** Sharded on a cluster: its rows live in `<table>_local` on each shard. */
  sharded: boolean
  /** The person's rows, over the parameters of `personParams`. */
  where: string
  /** `rows`: listed in an access export; `count`: counted there (derived rollups). */
  exported: 'rows' | 'count'
  /** Read with FINAL (the table keeps versions of one row). */
  final?: boolean
  /** `delete` (the default), or why an erasure keeps the rows. */
  erasure?: 'delete' | { keep: string }
}

const byVisitor = 'organization_id = {organizationId:UUID} AND visitor_id IN {visitorIds:Array(UUID)}'

/**
 * In erasure order: what refers to a row goes before it (deliveries before their events), and what
 * a concurrent pass could write again from another table goes after that table (the ICP scores
 * after the facts they are computed from; the sessions after the scores, whose view writes them).
 */
export const personalTables: readonly PersonalTable[] = [
  {
    table: 'webhook_deliveries',
    sharded: false,
    where: `organization_id = {organizationId:UUID}
      AND (event_id IN {eventIds:Array(String)} OR multiSearchAnyCaseInsensitive(body, {needles:Array(String)}))`,
    exported: 'rows',
    final: true,
  },
  {
    table: 'webhook_attempts',
    sharded: false,
    where: 'organization_id = {organizationId:UUID} AND event_id IN {eventIds:Array(String)}',
    exported: 'count',
  },
  {
    table: 'integration_flow_runs',
    sharded: false,
    where: 'organization_id = {organizationId:UUID} AND event_id IN {eventIds:Array(String)}',
    exported: 'rows',
  },
  { table: 'event_marks', sharded: true, where: 'event_id IN {eventIds:Array(UUID)}', exported: 'count' },
  {
    table: 'events',
    sharded: true,
    where: 'organization_id = {organizationId:UUID} AND event_id IN {eventIds:Array(UUID)}',
    exported: 'rows',
    final: true,
  },
  { table: 'visitor_changes', sharded: true, where: byVisitor, exported: 'count' },
  { table: 'audience_changes', sharded: true, where: byVisitor, exported: 'count' },
  { table: 'first_hours_seen', sharded: false, where: byVisitor, exported: 'count' },
  // first_hours (and first_hours_by_visitor, its view's copy) are taken back (sign -1) before they
  // are deleted, so the hourly counts their view sums lose the person too (erasure.ts).
  { table: 'first_hours', sharded: true, where: byVisitor, exported: 'count' },
  { table: 'first_hours_by_visitor', sharded: true, where: byVisitor, exported: 'count' },
  { table: 'visitor_hours', sharded: true, where: byVisitor, exported: 'count' },
  { table: 'company_hours', sharded: true, where: byVisitor, exported: 'count' },
  { table: 'visitor_facts', sharded: true, where: byVisitor, exported: 'count' },
  { table: 'phone_searches', sharded: false, where: byVisitor, exported: 'rows', final: true },
  { table: 'icp_scores', sharded: true, where: byVisitor, exported: 'rows', final: true },
  {
    table: 'visitors',
    sharded: false,
    where: 'organization_id = {organizationId:UUID} AND id IN {visitorIds:Array(UUID)}',
    exported: 'rows',
    final: true,
  },
  { table: 'sessions', sharded: true, where: byVisitor, exported: 'count' },
  { table: 'page_views', sharded: true, where: byVisitor, exported: 'rows' },
  {
    table: 'list_members',
    sharded: false,
    where: `contact_id IN {contactIds:Array(String)}
      OR (list_id IN {listIds:Array(String)} AND email_sha256 IN {hashes:Array(String)})`,
    exported: 'rows',
  },
  {
    table: 'audience_members',
    sharded: false,
    where: 'organization_id = {organizationId:UUID} AND email_sha256 IN {hashes:Array(String)}',
    exported: 'rows',
    final: true,
    erasure: {
      keep:
        "the hash of what this server put in an ads platform's audience: the list's next sync " +
        'takes the person out of the audience (they left the list) and records them as removed',
    },
  },
  {
    table: 'contact_keys',
    sharded: false,
    where: 'contact_id IN {contactIds:Array(String)}',
    exported: 'count',
  },
  {
    table: 'contact_facets',
    sharded: false,
    where: 'contact_id IN {contactIds:Array(String)}',
    exported: 'count',
  },
  {
    table: 'contacts',
    sharded: false,
    where: 'id IN {contactIds:Array(String)}',
    exported: 'rows',
    final: true,
  },
  {
    table: 'credit_ledger',
    sharded: false,
    where: 'organization_id = {organizationId:UUID} AND entry_id IN {ledgerEntries:Array(String)}',
    exported: 'rows',
    final: true,
    erasure: {
      keep: 'the billing record of the identification: it names the visitor id only, which names no one once the rest is erased',
    },
  },
]

/** Tables that hold no person's data, each with why: the test of the list reads this. */
export const tablesWithoutPersons: Readonly<Record<string, string>> = {
  api_key_usage: 'keys',
  api_keys: 'keys (hashed) of users',
  audience_syncs: 'state of a list sync',
  billing_local_objects: 'billing of organizations',
  billing_webhook_events: 'ids of billing events',
  companies: 'companies',
  company_ip_ranges: 'networks of companies',
  dropped_hits: 'counts per day and reason',
  email_preferences: "partners' settings",
  first_hour_counts: 'counts per hour (the erasure adjusts them through first_hours)',
  first_hours_passes: 'watermarks',
  icp_configs: 'settings',
  icp_rescore_passes: 'watermarks',
  integration_flows: 'settings',
  integration_reconnect_notices: 'notices to organizations',
  integrations: 'settings (sealed tokens)',
  lists: 'settings and counts',
  memberships: 'users of the service',
  organizations: 'organizations',
  partner_domains: 'settings',
  partners: 'partners',
  pixel_configs: 'settings',
  schema_migrations: 'migrations',
  subscriptions: 'billing of organizations',
  users: 'users of the service (their own accounts, not visitors)',
  webhook_configs: 'settings (sealed secrets)',
  erasures: 'the record of erasures: kind of key, who, when and how many rows, never the key',
  erased_visitors: 'SHA-256 of erased visitor ids, so a later hit starts a new visitor',
  privacy_settings: 'settings',
}

/** The parameters every condition of `personalTables` reads. */
export function personParams(person: Person, listIds: readonly string[]) {
  return {
    organizationId: person.organizationId,
    visitorIds: person.visitorIds,
    emails: person.emails,
    hashes: person.hashes,
    contactIds: person.contactIds,
    eventIds: person.eventIds,
    listIds: [...listIds],
    needles: [...person.emails, ...person.visitorIds],
    ledgerEntries: person.visitorIds.map(identificationEntryId),
  }
}
