// Who a privacy request is about. A person is named by an email, the SHA-256 of one, or a visitor
// id; what the store holds about them is found from that key: the organization's visitors with the
// email (or its hash, or the id), the visitor ids that sent the email in a hit, the contacts of the
// dataset they were identified as or that carry the email, and the events written about them.
import { z } from 'zod'
import { emailSha256, normalizeEmail } from '../identification/contacts.js'
import type { Store } from '../store/client.js'

const hexSha256 = /^[0-9a-f]{64}$/

/** What a person may be named by: an email, the SHA-256 of one, or a visitor id. */
export type PersonKey = { email: string } | { emailSha256: string } | { visitorId: string }

/**
 * A request's key: exactly one of the three fields, normalized (the email trimmed and lowercased,
 * the hash lowercased); two or none is 400 naming the fields.
 */
export const personKeySchema = z
  .strictObject({
    email: z
      .string()
      .max(320)
      .refine((value) => normalizeEmail(value) !== undefined, 'must be an email address')
      .transform((value) => normalizeEmail(value)!)
      .optional()
      .describe('The email address (any case, spaces around it ignored)'),
    emailSha256: z
      .string()
      .max(64)
      .transform((value) => value.trim().toLowerCase())
      .pipe(z.string().regex(hexSha256, 'must be 64 hex digits'))
      .optional()
      .describe('The hex SHA-256 of the trimmed, lowercased email address'),
    visitorId: z
      .uuid()
      .transform((value) => value.toLowerCase())
      .optional()
      .describe("The pixel's visitor id (one browser)"),
  })
  .refine((key) => Object.values(key).filter((value) => value !== undefined).length === 1, {
    message: 'name the person by exactly one of email, emailSha256 and visitorId',
  })
  .transform(
    (key): PersonKey =>
      key.email !== undefined
        ? { email: key.email }
        : key.emailSha256 !== undefined
          ? { emailSha256: key.emailSha256 }
          : { visitorId: key.visitorId! },
  )

/** Which key a request used (recorded with an erasure; the key itself is not). */
export const keyKindOf = (key: PersonKey): 'email' | 'email_sha256' | 'visitor_id' =>
  'email' in key ? 'email' : 'emailSha256' in key ? 'email_sha256' : 'visitor_id'

/** Everything that names the person in one organization's data, as the erasure and export use it. */
export interface Person {
  organizationId: string
  visitorIds: string[]
  /** Plain addresses known for the person (the key's, the visitors'). */
  emails: string[]
  /** SHA-256 of each address, and the key's hash. */
  hashes: string[]
  /** Rows of the contacts dataset: those the visitors were identified as, and those with the hashes. */
  contactIds: string[]
  /** Events about the person's visitors (their payloads name the person; deliveries and runs follow them). */
  eventIds: string[]
}

const unique = (values: Iterable<string>) => [...new Set([...values].filter((value) => value !== ''))].sort()

/**
 * The person's rows, found from the key in one organization. Nothing found is a person with no
 * visitor, contact or event: an erasure of it erases nothing and says so.
 */
export async function findPerson(store: Store, organizationId: string, key: PersonKey): Promise<Person> {
  const keyEmails = 'email' in key ? [key.email] : []
  const keyHashes = unique(['emailSha256' in key ? key.emailSha256 : '', ...keyEmails.map(emailSha256)])
  const keyVisitors = 'visitorId' in key ? [key.visitorId] : []
  const [found] = await store.query<{
    visitors: string[]
    emails: string[]
    contacts: string[]
  }>(
    `WITH matching AS (
       SELECT id, email, personal_email, contact_id FROM visitors FINAL
       WHERE organization_id = {organizationId:UUID} AND is_deleted = 0 AND (
         id IN {visitorIds:Array(UUID)}
         OR (email != '' AND (email IN {emails:Array(String)} OR lower(hex(SHA256(email))) IN {hashes:Array(String)}))
         OR (personal_email != '' AND (personal_email IN {emails:Array(String)}
           OR lower(hex(SHA256(personal_email))) IN {hashes:Array(String)})))
     ),
     hits AS (
       SELECT DISTINCT visitor_id FROM page_views
       WHERE organization_id = {organizationId:UUID} AND email != ''
         AND (email IN {emails:Array(String)} OR email IN {hashes:Array(String)})
     )
     SELECT
       arrayDistinct(arrayConcat((SELECT groupArray(toString(id)) FROM matching),
         (SELECT groupArray(toString(visitor_id)) FROM hits))) AS visitors,
       (SELECT groupArray(e) FROM (SELECT arrayJoin([email, personal_email]) AS e FROM matching) WHERE e != '') AS emails,
       (SELECT groupArray(contact_id) FROM matching WHERE contact_id != '') AS contacts`,
    { organizationId, visitorIds: keyVisitors, emails: keyEmails, hashes: keyHashes },
  )
  const visitorIds = unique([...keyVisitors, ...(found?.visitors ?? [])])
  // Emails sent in hits by the visitors found from the id (a visitor id names a person who typed one).
  const [sent] = await store.query<{ emails: string[] }>(
    `SELECT groupUniqArray(email) AS emails FROM page_views
     WHERE organization_id = {organizationId:UUID} AND visitor_id IN {visitorIds:Array(UUID)} AND email != ''`,
    { organizationId, visitorIds },
  )
  const sentEmails = sent?.emails ?? []
  const emails = unique([
    ...keyEmails,
    ...(found?.emails ?? []),
    ...sentEmails.filter((e) => !hexSha256.test(e)),
  ])
  const hashes = unique([
    ...keyHashes,
    ...emails.map(emailSha256),
    ...sentEmails.filter((e) => hexSha256.test(e)),
  ])
  const [related] = await store.query<{ contacts: string[]; events: string[] }>(
    `SELECT
       (SELECT groupUniqArray(id) FROM contacts FINAL
        WHERE is_deleted = 0 AND (id IN {contactIds:Array(String)}
          OR email_sha256 IN {hashes:Array(String)} OR personal_email_sha256 IN {hashes:Array(String)})) AS contacts,
       (SELECT groupUniqArray(toString(event_id)) FROM events
        WHERE organization_id = {organizationId:UUID}
          AND (visitor_id IN {visitorIds:Array(UUID)} OR multiSearchAnyCaseInsensitive(payload, {emails:Array(String)}))) AS events`,
    { organizationId, visitorIds, emails, hashes, contactIds: found?.contacts ?? [] },
  )
  return {
    organizationId,
    visitorIds,
    emails,
    hashes,
    contactIds: unique(related?.contacts ?? []),
    eventIds: unique(related?.events ?? []),
  }
}
