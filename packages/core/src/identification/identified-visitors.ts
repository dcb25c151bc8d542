// The visitors a process identified lately, so that their next identify hits (a logged-in visitor
// sends one per page) cost nothing: most identify hits come from visitors identified before, and
// checking each against the store means a visitors read and, for visitors known by their email
// alone, a contacts lookup. An entry lasts `ttlMs` (10 minutes): a visitor changed by another
// process is seen at the next identify hit after that. A contacts import ends with `forgetUnmatched`
// (in every ingest process, told through pubsub), so a contact it brought is found at the next hit.
import { createBoundedCache } from '../bounded-cache.js'
import type { VisitorRow } from '../visitor-tracking/rows.js'
import { normalizeEmail } from './contacts.js'

export interface IdentifiedVisitors {
  /** True when the hit would change nothing: its visitor is a person, or is known by this email. */
  settled(hit: { organization_id: string; visitor_id: string; email: string }): boolean
  /** Remembers a visitor row as written (or found unchanged) by identification. */
  remember(row: VisitorRow): void
  /**
   * Forgets the visitors known by their email alone (no contact yet), so their next identify hit
   * looks for their contact again: a contacts import may have brought it. Persons stay settled.
   */
  forgetUnmatched(): void
}

export interface IdentifiedVisitorsOptions {
  maxEntries?: number
  ttlMs?: number
  now?: () => number
}

/**
 * The cache of identified visitors for `identifyVisitors`.
 * @example const identified = createIdentifiedVisitors(); await identifyVisitors({ store, repos, identified }, hits)
 */
export function createIdentifiedVisitors(options: IdentifiedVisitorsOptions = {}): IdentifiedVisitors {
  const ttlMs = options.ttlMs ?? 600_000
  const now = options.now ?? Date.now
  const cache = createBoundedCache<{ person: boolean; email: string; expires: number; contacts: number }>(
    options.maxEntries ?? 200_000,
  )
  // Bumped by `forgetUnmatched`: an unmatched entry remembered before the last bump is not settled.
  let contacts = 0
  return {
    settled(hit) {
      const entry = cache.get(`${hit.organization_id}/${hit.visitor_id}`)
      if (!entry || entry.expires <= now()) return false
      if (entry.person) return true
      return entry.contacts === contacts && entry.email === normalizeEmail(hit.email)
    },
    remember(row) {
      if (!row.identified_at) return
      cache.set(`${row.organization_id}/${row.id}`, {
        person: Boolean(row.contact_id),
        email: row.email,
        expires: now() + ttlMs,
        contacts,
      })
    },
    forgetUnmatched() {
      contacts += 1
    },
  }
}
