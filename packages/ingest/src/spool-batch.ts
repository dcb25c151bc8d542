// Which spooled entries go to ClickHouse together, under which dedup token. Shared by the replay
// of the durable sink and the inserter of the spool-first sink, so either replays a batch the other
// began after a crash or a change of INGEST_ACK.
import type { Spool, SpoolEntry } from './spool.js'

/** Spooled batches written to ClickHouse as one insert. */
export interface SpoolBatch<Row> {
  token: string
  rows: Row[]
  last: SpoolEntry<Row>
  tokens: string[]
  entries: SpoolEntry<Row>[]
}

/**
 * The spooled entries to insert next: the batch a previous process began and did not commit,
 * exactly (same entries, same token: ClickHouse drops it if it had landed), else the oldest entries
 * up to `maxRows` rows (whole entries).
 */
export async function nextBatch<Row>(
  spool: Spool<Row>,
  maxRows: number,
): Promise<SpoolBatch<Row> | undefined> {
  const end = spool.begunEnd
  let entry = await spool.peek()
  if (!entry) return undefined
  const entries = [entry]
  let count = entry.rows.length
  while (end !== undefined ? entry.next < end : count < maxRows) {
    const next = await spool.peek(entry.next)
    if (!next) break
    entries.push(next)
    count += next.rows.length
    entry = next
  }
  const tokens = entries.map((e) => e.token)
  // One entry keeps its own token: an entry spooled after a failed direct insert used it already.
  const token = entries.length === 1 ? tokens[0]! : `${tokens[0]}..${tokens.at(-1)}`
  const rows = entries.length === 1 ? entries[0]!.rows : entries.flatMap((e) => e.rows)
  return { token, rows, last: entry, tokens, entries }
}
