// Erased visitor ids (migration 0029, `erased_visitors`): the browser of an erased person still
// sends its visitor id, and its next hit must start a new anonymous visitor rather than add to the
// erased one. The store keeps a SHA-256 of each (organization, id); ingest holds the set in memory
// and gives such a hit the replacement id, the same for every later hit of that browser, so its
// sessions hold together.
import { createHash } from 'node:crypto'
import type { PubSub } from '../coordination/ports.js'
import { sha256Hex } from '../ids.js'
import type { Store } from '../store/client.js'
import { storedTime, timeParam } from '../store/time.js'

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

/** Records the visitor ids of an erasure in the store (before their rows are deleted). */
export async function recordErasedVisitors(
  store: Store,
  organizationId: string,
  visitorIds: readonly string[],
): Promise<string[]> {
  if (visitorIds.length === 0) return []
  const erasedAt = new Date().toISOString()
  const hashes = visitorIds.map((id) => erasedVisitorHash(organizationId, id))
  await store.insert(
    'erased_visitors',
    hashes.map((visitor_hash) => ({ organization_id: organizationId, visitor_hash, erased_at: erasedAt })),
  )
  return hashes
}

/** Where an erasure tells every process its visitor hashes (a JSON array). */
const channel = 'privacy:erased-visitors'

/**
 * The set ingest checks each hit against, in every process: loaded from the store at start, told
 * of each erasure at once (pubsub), and read again from the store every `refreshMs` in case an
 * announcement was lost.
 */
export interface ErasedVisitors {
  /** The id a hit of this visitor id is stored under: itself, or its replacement once erased. */
  visitorIdFor(organizationId: string, visitorId: string): string
  has(organizationId: string, visitorId: string): boolean
  /** Records the ids in the store, here and in every process; resolves once this process knows them. */
  record(organizationId: string, visitorIds: readonly string[]): Promise<void>
  start(): Promise<void>
  stop(): Promise<void>
  readonly size: number
}

export function createErasedVisitors(
  store: Store,
  options: { pubsub?: PubSub; refreshMs?: number; onError?: (error: unknown) => void } = {},
): ErasedVisitors {
  const hashes = new Set<string>()
  let since = '1970-01-01T00:00:00.000Z'
  let timer: NodeJS.Timeout | undefined
  let unsubscribe: (() => Promise<void>) | undefined
  const has = (organizationId: string, visitorId: string) =>
    hashes.size > 0 && hashes.has(erasedVisitorHash(organizationId, visitorId))
  const refresh = async () => {
    const rows = await store.query<{ visitor_hash: string; erased_at: string }>(
      `SELECT visitor_hash, erased_at FROM erased_visitors
       WHERE erased_at >= {since:DateTime64(3, 'UTC')} ORDER BY erased_at`,
      { since: timeParam(since) },
    )
    for (const row of rows) hashes.add(row.visitor_hash)
    // Read the last minute again next time: a row stamped a little earlier may land later.
    const last = rows.at(-1)
    if (last) since = new Date(Date.parse(storedTime(last.erased_at)) - 60_000).toISOString()
  }
  return {
    has,
    visitorIdFor(organizationId, visitorId) {
      let id = visitorId
      // A replacement erased in turn is replaced again (a bounded chain: each step is an erasure).
      for (let step = 0; step < 16 && has(organizationId, id); step++) id = replacementVisitorId(id)
      return id
    },
    async record(organizationId, visitorIds) {
      const recorded = await recordErasedVisitors(store, organizationId, visitorIds)
      for (const hash of recorded) hashes.add(hash)
      if (recorded.length > 0) await options.pubsub?.publish(channel, JSON.stringify(recorded))
    },
    async start() {
      await refresh()
      unsubscribe = await options.pubsub?.subscribe(channel, (message) => {
        for (const hash of JSON.parse(message) as string[]) hashes.add(hash)
      })
      if (options.refreshMs) {
        timer = setInterval(
          () => refresh().catch((error: unknown) => options.onError?.(error)),
          options.refreshMs,
        )
        timer.unref()
      }
    },
    async stop() {
      clearInterval(timer)
      await unsubscribe?.()
    },
    get size() {
      return hashes.size
    },
  }
}
