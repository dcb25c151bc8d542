// The contacts dataset (migration 0007): the operator's people data, imported with
// `npm run cli -- import contacts FILE`, and how identification finds a contact by email, personal
// email or the SHA-256 of either.
import { type ContactField, contactFields } from '../contact-fields/contact-fields.js'
import { sha256Hex } from '../ids.js'
import type { Store } from '../store/client.js'
import { stampColumns } from '../store/columns.js'
import type { EntityDefinition } from '../store/repository.js'
import { storedTime } from '../store/time.js'

/** A contact as stored (snake_case); every field is '' when unknown, timestamps are ISO 8601. */
export interface ContactRow extends Record<ContactField, string> {
  /** The identity: the file's `id`, else the email, else the personal email, else the LinkedIn URL. */
  id: string
  /** Lowercase hex SHA-256 of `email`, '' without one. */
  email_sha256: string
  personal_email_sha256: string
  created_at: string
  updated_at: string
}

export const contactsTable: EntityDefinition<ContactRow> = {
  table: 'contacts',
  key: ['id'],
  columns: {
    id: 'String',
    email_sha256: 'String',
    personal_email_sha256: 'String',
    ...(Object.fromEntries(contactFields.map((field) => [field, 'String'])) as Record<
      ContactField,
      'String'
    >),
    ...stampColumns,
  },
}

/** The longest email address there is (RFC 5321: a 256-octet path less its angle brackets). */
export const emailMaxLength = 254

// local@domain: a local part without spaces, quotes or the specials that need quoting; a domain of
// letter/digit/hyphen labels (any script, so international domains pass) ending in a top label of
// letters or punycode. Plausible, not RFC 5322: quoted local parts and IP literals are refused.
const emailPattern =
  /^[^\s@"(),:;<>[\]\\]{1,64}@(?:[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?\.)+(?:\p{L}{2,63}|xn--[a-z0-9-]{1,59})$/u
// The same for the common all-ASCII address, tried first: about three times cheaper.
const asciiEmailPattern =
  /^[a-z0-9!#$%&'*+/=?^_`{|}~.-]{1,64}@(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/
const hexSha256 = /^[0-9a-f]{64}$/

/**
 * An email address as stored and looked up: trimmed and lowercased. Undefined when it is not a
 * plausible address (one `@`, a domain with a dot, at most 254 characters).
 * @example normalizeEmail('  Jane.Doe@Acme.COM ') // 'jane.doe@acme.com'
 */
export function normalizeEmail(email: string): string | undefined {
  const normalized = email.trim().toLowerCase()
  if (normalized.length > emailMaxLength) return undefined
  return asciiEmailPattern.test(normalized) || emailPattern.test(normalized) ? normalized : undefined
}

/**
 * The lowercase hex SHA-256 of a normalized email: how a hashed email identifies a contact.
 * @example emailSha256('jane.doe@acme.com')
 */
export function emailSha256(normalizedEmail: string): string {
  return sha256Hex(normalizedEmail)
}

/**
 * The lookup key (`contact_keys.key`) for what a site or a file supplies as an email: the
 * normalized email, or, for a SHA-256 of one (64 hex digits, any case), that hash in lowercase.
 * Undefined when it is neither.
 * @example emailKey(' Jane@Acme.com ') // 'jane@acme.com'
 * @example emailKey('9F86D08188...') // '9f86d08188...'
 */
export function emailKey(email: string): string | undefined {
  const trimmed = email.trim().toLowerCase()
  if (hexSha256.test(trimmed)) return trimmed
  return normalizeEmail(trimmed)
}

/** The fields of a contact card (migration 0019), in its order: keep the two in step. */
const cardFields = [
  'id',
  'email',
  'email_sha256',
  'personal_email',
  'personal_email_sha256',
  ...contactFields.filter((field) => field !== 'email' && field !== 'personal_email'),
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof ContactRow)[]

const tsvEscapes: Record<string, string> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', 0: '\0' }
const unescapeTsv = (field: string) =>
  field.includes('\\') ? field.replace(/\\(.)/gs, (_, char: string) => tsvEscapes[char] ?? char) : field

/** A contact from its card: one tab-separated row, fields escaped as the engine's TSV does. */
function contactOfCard(card: string): ContactRow {
  const values = card.split('\t')
  const contact = {} as Record<(typeof cardFields)[number], string>
  cardFields.forEach((field, i) => {
    contact[field] = unescapeTsv(values[i] ?? '')
  })
  // The engine's `toString` of a DateTime64 ('2026-11-27 03:50:00.000', UTC).
  contact.created_at = storedTime(contact.created_at)
  contact.updated_at = storedTime(contact.updated_at)
  return contact
}

/**
 * Finds contacts by key, in one query for the whole batch: each key is an email or the SHA-256 of
 * one (see emailKey: case and surrounding spaces do not matter; anything else finds nothing). A key
 * finds the contact that last claimed it (contact_keys), and only while it is still that
 * contact's email, personal email or the hash of either: keys a re-import took away from a contact
 * stay in contact_keys but match nothing. Returns the keys as given -> their live contact.
 * @example const found = await findContactsByKeys(store, ['jane@acme.com', hash]); found.get(hash)?.first_name
 */
export async function findContactsByKeys(
  store: Store,
  keys: readonly string[],
): Promise<Map<string, ContactRow>> {
  const byKey = new Map<string, string[]>()
  for (const given of keys) {
    const key = emailKey(given)
    if (key === undefined) continue
    const givens = byKey.get(key)
    if (givens) givens.push(given)
    else byKey.set(key, [given])
  }
  const found = new Map<string, ContactRow>()
  if (byKey.size === 0) return found
  // The live version of each row as FINAL would give it (the highest version, unless deleted),
  // read with LIMIT 1 BY: for a few keys scattered over many contacts FINAL merges far more than
  // the rows asked for. Each contact as its card (migration 0019): one column to read instead of
  // 35, so one compressed block per contact instead of one per column (bench/README.md,
  // "Contacts import" and "Identify hits").
  const rows = await store.query<{ lookup_key: string; card: string }>(
    `SELECT k.key AS lookup_key, c.card AS card
     FROM (
       SELECT key, contact_id, is_deleted FROM contact_keys WHERE key IN {keys:Array(String)}
       ORDER BY version DESC LIMIT 1 BY key
     ) AS k
     INNER JOIN (
       SELECT id, card, is_deleted FROM contacts
       WHERE id IN (SELECT contact_id FROM contact_keys WHERE key IN {keys:Array(String)})
       ORDER BY version DESC LIMIT 1 BY id
     ) AS c ON c.id = k.contact_id
     WHERE k.is_deleted = 0 AND c.is_deleted = 0`,
    { keys: [...byKey.keys()] },
  )
  for (const { lookup_key, card } of rows) {
    const contact = contactOfCard(card)
    // A key a re-import took away from its contact matches nothing.
    const keys = [contact.email, contact.personal_email, contact.email_sha256, contact.personal_email_sha256]
    if (!keys.includes(lookup_key)) continue
    for (const given of byKey.get(lookup_key) ?? []) found.set(given, contact)
  }
  return found
}
