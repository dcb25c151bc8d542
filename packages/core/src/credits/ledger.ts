// Identification credits: a ledger of grants, charges and adjustments (table `credit_ledger`,
// migration 0008). A balance is the sum of the live entries' amounts, never a stored number.

import type { Locks } from '../coordination/ports.js'
import { appError } from '../errors.js'
import { newId, nextVersion } from '../ids.js'
import type { Store } from '../store/client.js'

/**
 * What an entry is: `grant` (positive: credits given or bought), `charge` (negative: credits spent),
 * `adjustment` (either sign: a correction by an operator), `reservation` (negative: credits held by
 * a phone search while it runs; zero once released).
 */
export type CreditEntryKind = 'grant' | 'charge' | 'adjustment' | 'reservation'

/**
 * The kinds a balance sums. Reservations stay out of the balance: a reservation is replaced, under
 * the same entry id, by its charge or by a zero-amount release.
 */
export const balanceKinds: readonly CreditEntryKind[] = ['grant', 'charge', 'adjustment']

/** One entry as stored. */
export interface CreditEntryRow {
  organization_id: string
  /** Unique within the organization: writing an entry id again replaces the entry (latest wins). */
  entry_id: string
  kind: CreditEntryKind
  amount: number
  reason: string
  created_at: string
}

/** The entry id of the grant every organization opens with (idempotent: written twice, counted once). */
export const initialGrantEntryId = 'initial'

/** The entry id of a visitor's one identification charge. */
export const identificationEntryId = (visitorId: string) => `identify:${visitorId}`

/** The entry id of a phone search's reservation, and of its charge once a phone is found. */
export const phoneSearchEntryId = (searchId: string) => `phone:${searchId}`

/** The largest amount of one entry (sums of entries stay exact JavaScript numbers). */
export const maxCreditAmount = 1_000_000_000

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const kindList = balanceKinds.map((kind) => `'${kind}'`).join(', ')

const invalid = (path: string, message: string) =>
  appError('invalid_request', `${path} ${message}`, { issues: [{ path, message }] })

function organizationIdOf(organizationId: string): string {
  if (!uuidPattern.test(organizationId)) throw invalid('organizationId', 'must be a UUID')
  return organizationId.toLowerCase()
}

/**
 * The balances of several organizations in one query; an organization without entries has 0.
 * The map is keyed by the ids as given.
 * @example const balances = await creditBalances(store, rows.map((row) => row.id))
 */
export async function creditBalances(
  store: Store,
  organizationIds: readonly string[],
): Promise<Map<string, number>> {
  const balances = new Map<string, number>()
  if (organizationIds.length === 0) return balances
  const ids = [...new Set(organizationIds.map(organizationIdOf))]
  // sumIf rather than WHERE kind: the kind is read from each entry's latest version, after FINAL.
  // The id is read as `id`: an alias named organization_id would stand for the column in WHERE.
  const rows = await store.query<{ id: string; balance: number | string }>(
    `SELECT toString(organization_id) AS id, sumIf(amount, kind IN (${kindList})) AS balance
     FROM credit_ledger FINAL WHERE organization_id IN {ids:Array(UUID)} GROUP BY organization_id`,
    { ids },
  )
  const found = new Map(rows.map((row) => [row.id, Number(row.balance)]))
  for (const id of organizationIds) balances.set(id, found.get(id.toLowerCase()) ?? 0)
  return balances
}

/**
 * An organization's balance: the sum of its live entries (0 without any).
 * @example const balance = await creditBalance(store, organization.id)
 */
export async function creditBalance(store: Store, organizationId: string): Promise<number> {
  return (await creditBalances(store, [organizationId])).get(organizationId) ?? 0
}

interface EntryInput {
  organizationId: string
  amount: number
  reason?: string | undefined
  /** Idempotency key: the same entry id written again replaces the entry; default a random id. */
  entryId?: string | undefined
}

export interface GrantCreditsInput extends EntryInput {
  /** A positive integer. */
  amount: number
}

export interface AdjustCreditsInput extends EntryInput {
  /** A non-zero integer: positive adds credits, negative takes them away. */
  amount: number
}

async function writeEntry(store: Store, kind: CreditEntryKind, input: EntryInput): Promise<string> {
  const organizationId = organizationIdOf(input.organizationId)
  const entryId = input.entryId ?? `${kind}:${newId()}`
  if (entryId.length === 0 || entryId.length > 200) throw invalid('entryId', 'must be 1 to 200 characters')
  const reason = (input.reason ?? '').trim()
  if (reason.length > 500) throw invalid('reason', 'must be at most 500 characters')
  await store.insert('credit_ledger', [
    {
      organization_id: organizationId,
      entry_id: entryId,
      kind,
      amount: input.amount,
      reason,
      created_at: new Date().toISOString(),
      version: nextVersion(),
    },
  ])
  return organizationId
}

const isAmount = (amount: number) => Number.isSafeInteger(amount) && Math.abs(amount) <= maxCreditAmount

/**
 * Adds credits to an organization's ledger; returns the new balance. The caller checks that the
 * organization exists. `amount`: a positive integer up to 1,000,000,000 (else `invalid_request`).
 * @example const balance = await grantCredits(store, { organizationId, amount: 500, reason: 'top-up' })
 */
export async function grantCredits(store: Store, input: GrantCreditsInput): Promise<number> {
  if (!isAmount(input.amount) || input.amount <= 0) {
    throw invalid('amount', `must be a positive integer up to ${maxCreditAmount}`)
  }
  const organizationId = await writeEntry(store, 'grant', input)
  return creditBalance(store, organizationId)
}

/**
 * Corrects an organization's balance by a non-zero integer (positive or negative); returns the new
 * balance. The caller checks that the organization exists.
 * @example await adjustCredits(store, { organizationId, amount: -20, reason: 'refund reversed' })
 */
export async function adjustCredits(store: Store, input: AdjustCreditsInput): Promise<number> {
  if (!isAmount(input.amount) || input.amount === 0) {
    throw invalid('amount', `must be a non-zero integer between -${maxCreditAmount} and ${maxCreditAmount}`)
  }
  const organizationId = await writeEntry(store, 'adjustment', input)
  return creditBalance(store, organizationId)
}

export interface ChargeResult {
  /** Whether this call wrote the visitor's charge (see `chargeIdentification` for races). */
  charged: boolean
  /** The balance after the charge, as this call knows it. */
  balance: number
}

// Calls under way in this process, per store and entry: concurrent calls for one visitor share
// one check-and-write, so exactly one of them says `charged` (per process).
const inFlight = new WeakMap<Store, Map<string, Promise<ChargeResult>>>()

/**
 * Charges the first identification of a visitor as a person: 1 credit, at most once per visitor.
 *
 * The charge is the entry `identify:<visitorId>`, so however many times and from however many
 * processes it is written, the balance counts it once (the ledger keeps one row per entry id).
 * The call reads the balance and whether the entry exists, and writes it only if it does not;
 * concurrent calls of one process share that work and only one of them gets `charged: true`.
 * Calls racing in different processes may each see no entry and each write it: then more than one
 * of them says `charged: true`, but the balance still drops by 1. Whether a person may be identified
 * at all (`mayIdentifyPerson`) is the caller's check, made before charging.
 * @example const { charged, balance } = await chargeIdentification(store, { organizationId, visitorId })
 */
export async function chargeIdentification(
  store: Store,
  input: { organizationId: string; visitorId: string },
): Promise<ChargeResult> {
  const organizationId = organizationIdOf(input.organizationId)
  if (!uuidPattern.test(input.visitorId)) throw invalid('visitorId', 'must be a UUID')
  const entryId = identificationEntryId(input.visitorId.toLowerCase())
  let running = inFlight.get(store)
  if (!running) {
    running = new Map()
    inFlight.set(store, running)
  }
  const key = `${organizationId}/${entryId}`
  const leader = running.get(key)
  if (leader) return { charged: false, balance: (await leader).balance }
  const work = (async (): Promise<ChargeResult> => {
    const [row] = await store.query<{ balance: number | string; present: number }>(
      `SELECT sumIf(amount, kind IN (${kindList})) AS balance, countIf(entry_id = {entryId:String}) AS present
       FROM credit_ledger FINAL WHERE organization_id = {organizationId:UUID}`,
      { organizationId, entryId },
    )
    const balance = Number(row?.balance ?? 0)
    if (Number(row?.present ?? 0) > 0) return { charged: false, balance }
    await writeEntry(store, 'charge', { organizationId, entryId, amount: -1, reason: 'identification' })
    return { charged: true, balance: balance - 1 }
  })()
  running.set(key, work)
  try {
    return await work
  } finally {
    running.delete(key)
  }
}

/**
 * Charges the first person identification of several visitors of one organization at once, in
 * order, while `mayIdentifyPerson` allows: one read (the balance and which of them are charged
 * already) and one insert, whatever their number. Returns the visitors that may be identified as
 * persons (charged now, or before) and the balance after. Entries are `identify:<visitorId>` as
 * for `chargeIdentification`, so the two never charge a visitor twice.
 * @example const { allowed } = await chargeIdentifications(store, { organizationId, visitorIds, maxOverages })
 */
export async function chargeIdentifications(
  store: Store,
  input: { organizationId: string; visitorIds: readonly string[]; maxOverages: number | null },
): Promise<{ allowed: Set<string>; balance: number; before: number; lastGrant: LastGrant }> {
  const organizationId = organizationIdOf(input.organizationId)
  const visitorIds = [...new Set(input.visitorIds.map((id) => id.toLowerCase()))]
  for (const id of visitorIds) if (!uuidPattern.test(id)) throw invalid('visitorIds', 'must be UUIDs')
  const allowed = new Set<string>()
  if (visitorIds.length === 0) {
    const balance = await creditBalance(store, organizationId)
    return { allowed, balance, before: balance, lastGrant: { amount: 0, entryId: '' } }
  }
  // The latest grant too, in the same read: the credit thresholds are fractions of it.
  const [row] = await store.query<{
    balance: number | string
    charged: string[]
    grant_amount: number | string
    grant_entry: string
  }>(
    `SELECT sumIf(amount, kind IN (${kindList})) AS balance,
       groupArrayIf(entry_id, entry_id IN {entryIds:Array(String)}) AS charged,
       argMaxIf(amount, created_at, kind = 'grant') AS grant_amount,
       argMaxIf(entry_id, created_at, kind = 'grant') AS grant_entry
     FROM credit_ledger FINAL WHERE organization_id = {organizationId:UUID}`,
    { organizationId, entryIds: visitorIds.map(identificationEntryId) },
  )
  const lastGrant = { amount: Number(row?.grant_amount ?? 0), entryId: row?.grant_entry ?? '' }
  let balance = Number(row?.balance ?? 0)
  const before = balance
  const charged = new Set(row?.charged ?? [])
  const entries: object[] = []
  const at = new Date().toISOString()
  for (const visitorId of visitorIds) {
    const entryId = identificationEntryId(visitorId)
    if (charged.has(entryId)) {
      allowed.add(visitorId)
      continue
    }
    if (!mayIdentifyPerson(balance, input.maxOverages)) continue
    balance -= 1
    allowed.add(visitorId)
    entries.push({
      organization_id: organizationId,
      entry_id: entryId,
      kind: 'charge',
      amount: -1,
      reason: 'identification',
      created_at: at,
      version: nextVersion(),
    })
  }
  if (entries.length > 0) await store.insert('credit_ledger', entries)
  return { allowed, balance, before, lastGrant }
}

/** The latest grant of an organization (amount 0 and entry '' when none). */
export interface LastGrant {
  amount: number
  entryId: string
}

/**
 * Whether a visitor not yet charged may be identified as a person: the charge of 1 credit must keep
 * the balance at or above `-maxOverages` (null, negative or not a number: 0), i.e.
 * `balance - 1 >= -maxOverages`. Without overage the last credit is spent and the balance stops at
 * 0; with `maxOverages` 250 it stops at -250 (a fractional limit rounds down to the whole credit).
 * @example mayIdentifyPerson(1, null) // true; mayIdentifyPerson(0, null) // false
 */
export function mayIdentifyPerson(balance: number, maxOverages: number | null): boolean {
  const overage = maxOverages !== null && maxOverages > 0 ? maxOverages : 0
  return balance - 1 >= -overage
}

/** The credit events a balance change can cross. */
export type CreditThreshold = 'credits_low' | 'credits_exhausted'

/**
 * The thresholds a change of the balance from `before` to `after` crosses downwards, in this order:
 * `credits_low` when it falls under 10 % of `lastGrant` (the amount of the latest grant; none when
 * it is 0 or less), `credits_exhausted` when it falls to 0 or below. A change that stays on one side
 * of a threshold, or goes up, crosses nothing.
 * @example creditThresholdsCrossed(100, 99, 1000) // ['credits_low']
 */
export function creditThresholdsCrossed(before: number, after: number, lastGrant: number): CreditThreshold[] {
  const crossed: CreditThreshold[] = []
  const low = lastGrant * 0.1
  if (lastGrant > 0 && before >= low && after < low) crossed.push('credits_low')
  if (before > 0 && after <= 0) crossed.push('credits_exhausted')
  return crossed
}

/** How long a reservation waits for the organization's credit lock (held only for a read and a write). */
const creditLockMs = 10_000

/**
 * Holds `amount` credits for a running operation (a phone search) if the balance minus the
 * reservations already held is at least `amount`: the read and the write happen under the
 * organization's credit lock, so concurrent reservations, in any process, never hold more than
 * the organization has. Overage (`maxOverages`) never counts. Returns whether it was reserved and
 * what was available before.
 * @example const { reserved } = await reserveCredits(store, locks, { organizationId, entryId: phoneSearchEntryId(id), amount: 5 })
 */
export async function reserveCredits(
  store: Store,
  locks: Locks,
  input: { organizationId: string; entryId: string; amount: number; reason?: string },
): Promise<{ reserved: boolean; available: number }> {
  const organizationId = organizationIdOf(input.organizationId)
  if (!isAmount(input.amount) || input.amount <= 0) throw invalid('amount', 'must be a positive integer')
  const lock = await locks.acquire(`credits:${organizationId}`, creditLockMs, creditLockMs)
  try {
    const [row] = await store.query<{ available: number | string }>(
      `SELECT sumIf(amount, kind IN (${kindList}, 'reservation')) AS available
       FROM credit_ledger FINAL WHERE organization_id = {organizationId:UUID}`,
      { organizationId },
    )
    const available = Number(row?.available ?? 0)
    if (available < input.amount) return { reserved: false, available }
    await writeEntry(store, 'reservation', {
      organizationId,
      entryId: input.entryId,
      amount: -input.amount,
      reason: input.reason,
    })
    return { reserved: true, available }
  } finally {
    await lock.release()
  }
}

/** Turns a reservation into the charge it held (same entry id: counted once, however often written). */
export async function captureReservation(
  store: Store,
  input: { organizationId: string; entryId: string; amount: number; reason?: string },
): Promise<void> {
  await writeEntry(store, 'charge', { ...input, amount: -Math.abs(input.amount) })
}

/** Gives a reservation's credits back (the entry stays, at zero). */
export async function releaseReservation(
  store: Store,
  input: { organizationId: string; entryId: string; reason?: string },
): Promise<void> {
  await writeEntry(store, 'reservation', { ...input, amount: 0 })
}
