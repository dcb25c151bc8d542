// What this server has put in each ads-platform audience (migration 0023, `audience_members`), and
// the two set differences a sync sends: the list's hashes the audience lacks (to add) and the
// audience's hashes the list no longer has (to remove). The engine computes both against the
// list's snapshot; they are read a page at a time in hash order, so memory stays flat whatever the
// sizes. A batch is recorded only once the platform acknowledged it, so a sync stopped anywhere
// and run again sends each member once.
//
// The list's hashes are the platform's: its snapshot's `email_sha256` (trimmed, lowercased) for
// the `standard` rule; for Google's, the members whose email is a Gmail address are hashed again
// from the contact's email (`googleEmailHashSql`), the others keep the stored hash (the two rules
// agree on them). A contact known only by a hash keeps it: there is no email to fold.
import { nextVersion } from '../ids.js'
import type { Store } from '../store/client.js'
import type { EmailRule } from './ads-platform.js'
import { googleEmailHashSql } from './google-ads-identifiers.js'

/** Whose audience, and the list snapshot it should hold. */
export interface AudienceScope {
  organizationId: string
  /** `type:accountId:audienceId`. */
  audienceKey: string
  listId: string
  snapshot: string
  /** How the platform hashes emails. */
  emailRule: EmailRule
}

export const audienceKeyOf = (type: string, accountId: string, audienceId: string) =>
  `${type}:${accountId}:${audienceId}`

const sent = `SELECT email_sha256 FROM audience_members FINAL
  WHERE organization_id = {organization:UUID} AND audience_key = {audience:String}
    AND email_sha256 > {after:String} AND is_deleted = 0`

const snapshotMembers = `list_id = {list:String} AND snapshot = {snapshot:String}`

/** The contact's email the snapshot's hash came from (contact_facets: the email, else the personal one). */
const hashedEmail = `multiIf(email != '', email, email_sha256 != '', '', personal_email)`

/** The list snapshot's hashes as the platform takes them, as `hash`. */
function listHashes(rule: EmailRule): string {
  if (rule === 'standard') {
    return `SELECT email_sha256 AS hash FROM list_members WHERE ${snapshotMembers} AND email_sha256 != ''`
  }
  return `SELECT if(folded.hash != '', folded.hash, members.email_sha256) AS hash
    FROM (SELECT email_sha256, contact_id FROM list_members WHERE ${snapshotMembers}) AS members
    LEFT JOIN (
      SELECT id, ${googleEmailHashSql(hashedEmail)} AS hash FROM contacts FINAL
      WHERE id IN (SELECT contact_id FROM list_members WHERE ${snapshotMembers})
        AND match(lowerUTF8(${hashedEmail}), '@(gmail|googlemail)[.]com')
    ) AS folded ON folded.id = members.contact_id
    WHERE members.email_sha256 != ''`
}

/** The list's distinct hashes the audience lacks, in hash order. */
export function membersToAdd(store: Store, scope: AudienceScope, pageSize = 25_000): AsyncGenerator<string> {
  return pages(
    store,
    `SELECT DISTINCT hash FROM (${listHashes(scope.emailRule)})
     WHERE hash > {after:String} AND hash NOT IN (${sent})
     ORDER BY hash LIMIT {pageSize:UInt32}`,
    scope,
    pageSize,
  )
}

/** The audience's hashes the list no longer has, in hash order. */
export function membersToRemove(
  store: Store,
  scope: AudienceScope,
  pageSize = 25_000,
): AsyncGenerator<string> {
  return pages(
    store,
    `SELECT email_sha256 AS hash FROM audience_members FINAL
     WHERE organization_id = {organization:UUID} AND audience_key = {audience:String}
       AND email_sha256 > {after:String} AND is_deleted = 0
       AND email_sha256 NOT IN (SELECT hash FROM (${listHashes(scope.emailRule)}))
     ORDER BY hash LIMIT {pageSize:UInt32}`,
    scope,
    pageSize,
  )
}

/** Pages of a query keyed on the hash (`after`: the last one read; '' skips contacts without one). */
async function* pages(store: Store, sql: string, scope: AudienceScope, pageSize: number) {
  let after = ''
  for (;;) {
    const rows = await store.query<{ hash: string }>(sql, {
      organization: scope.organizationId,
      audience: scope.audienceKey,
      list: scope.listId,
      snapshot: scope.snapshot,
      after,
      pageSize,
    })
    for (const row of rows) yield row.hash
    if (rows.length < pageSize) return
    after = rows.at(-1)!.hash
  }
}

/** Records an acknowledged batch: its members are in the audience now, or (`removed`) no longer. */
export async function recordMembers(
  store: Store,
  scope: AudienceScope,
  hashes: readonly string[],
  removed: boolean,
): Promise<void> {
  if (hashes.length === 0) return
  const at = new Date().toISOString()
  const version = nextVersion()
  await store.insert(
    'audience_members',
    hashes.map((hash) => ({
      organization_id: scope.organizationId,
      audience_key: scope.audienceKey,
      email_sha256: hash,
      synced_at: at,
      version,
      is_deleted: removed ? 1 : 0,
    })),
  )
}

/** Batches of at most `size`, each knowing whether it is the last (a look-ahead of one member). */
export async function* batchesOf(
  members: AsyncIterable<string>,
  size: number,
): AsyncGenerator<{ hashes: string[]; last: boolean }> {
  const iterator = members[Symbol.asyncIterator]()
  let next = await iterator.next()
  while (!next.done) {
    const hashes: string[] = []
    while (!next.done && hashes.length < size) {
      hashes.push(next.value)
      next = await iterator.next()
    }
    yield { hashes, last: next.done === true }
  }
}
