// Erased visitor ids (migration 0028, `erased_visitors`): the browser of an erased person still
// sends its visitor id, and its next hit must start a new anonymous visitor rather than add to the
// erased one. The store keeps a SHA-256 of each (organization, id); ingest holds the set in memory
// and gives such a hit the replacement id, the same for every later hit of that browser, so its
// sessions hold together.
import { createHash } from 'node:crypto'
import { sha256Hex } from '../ids.js'
import type { Store } from '../store/client.js'
import { storedTime } from '../store/time.js'

/** How an erased visitor id is kept: its hash with its organization's id. */
export const erasedVisitorHash = (organizationId: string, visitorId: string) =>
  sha256Hex(`${organizationId.toLowerCase()}:${visitorId.toLowerCase()}`)

/**
 * The id a hit of an erased visitor id is stored under: a UUID (version 4 bits set) from a hash of
 * the erased id, so every hit of that browser gets the same one, and nothing stored leads back.
 */
export function replacementVisitorId(visitorId: string): string {
  const bytes = createHash('sha256').update(`erased:${visitorId.toLowerCase()}`).digest()
  bytes[6] = (bytes[6]! & 0x0f) | 0x40
  bytes[8] = (bytes[8]! & 0x3f) | 0x80
  const hex = bytes.subarray(0, 16).toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/** Records the visitor ids of an erasure (before their rows are deleted). */
export async function recordErasedVisitors(
  store: Store,
  organizationId: string,
  visitorIds: readonly string[],
): Promise<void> {
  if (visitorIds.length === 0) return
  const erasedAt = new Date().toISOString()
  await store.insert(
    'erased_visitors',
    visitorIds.map((id) => ({
      organization_id: organizationId,
      visitor_hash: erasedVisitorHash(organizationId, id),
      erased_at: erasedAt,
    })),
  )
}

/**
 * The set ingest checks each hit against, kept in step with the store: `refresh()` reads the
 * hashes recorded since the last refresh (every process, every few seconds), `add()` takes those
 * this process recorded at once.
 */
export interface ErasedVisitors {
  has(organizationId: string, visitorId: string): boolean
  add(organizationId: string, visitorIds: readonly string[]): void
  refresh(): Promise<void>
  readonly size: number
}

export function createErasedVisitors(store: Store): ErasedVisitors {
  const hashes = new Set<string>()
  let since = '1970-01-01T00:00:00.000Z'
  return {
    has: (organizationId, visitorId) =>
      hashes.size > 0 && hashes.has(erasedVisitorHash(organizationId, visitorId)),
    add(organizationId, visitorIds) {
      for (const id of visitorIds) hashes.add(erasedVisitorHash(organizationId, id))
    },
    async refresh() {
      const rows = await store.query<{ visitor_hash: string; erased_at: string }>(
        `SELECT visitor_hash, erased_at FROM erased_visitors
         WHERE erased_at >= {since:DateTime64(3, 'UTC')} ORDER BY erased_at`,
        { since },
      )
      for (const row of rows) hashes.add(row.visitor_hash)
      // Read the last minute again next time: a row stamped a little earlier may land later.
      const last = rows.at(-1)
      if (last) since = new Date(Date.parse(storedTime(last.erased_at)) - 60_000).toISOString()
    },
    get size() {
      return hashes.size
    },
  }
}
