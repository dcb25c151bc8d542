// What this server has put in each ads-platform audience (migration 0023, `audience_members`), and
// the two set differences a sync sends: the list's hashes the audience lacks (to add) and the
// audience's hashes the list no longer has (to remove). The engine computes both against the
// list's snapshot; they are read a page at a time in hash order, so memory stays flat whatever the
// sizes. A batch is recorded only once the platform acknowledged it, so a sync stopped anywhere
// and run again sends each member once.
import { nextVersion } from '../ids.js'
import type { Store } from '../store/client.js'

/** Whose audience, and the list snapshot it should hold. */
export interface AudienceScope {
  organizationId: string
  /** `type:accountId:audienceId`. */
  audienceKey: string
  listId: string
  snapshot: string
}

export const audienceKeyOf = (type: string, accountId: string, audienceId: string) =>
  `${type}:${accountId}:${audienceId}`

const sent = `SELECT email_sha256 FROM audience_members FINAL
  WHERE organization_id = {organization:UUID} AND audience_key = {audience:String}
    AND email_sha256 > {after:String} AND is_deleted = 0`

const listed = `SELECT email_sha256 FROM list_members
  WHERE list_id = {list:String} AND snapshot = {snapshot:String} AND email_sha256 > {after:String}`

/** The list's distinct hashes the audience lacks, in hash order. */
export function membersToAdd(store: Store, scope: AudienceScope, pageSize = 25_000): AsyncGenerator<string> {
  return pages(
    store,
    `SELECT DISTINCT email_sha256 AS hash FROM list_members
     WHERE list_id = {list:String} AND snapshot = {snapshot:String} AND email_sha256 > {after:String}
       AND email_sha256 NOT IN (${sent})
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
       AND email_sha256 NOT IN (${listed})
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
