// Phone search (spec: "Phone search" rows of "States and transitions"; docs/decisions.md, "Phone search").
//
//   not_started --start--> ongoing --found--> found          (5 credits charged, visitor.phone_revealed)
//                             |  \--not found--> not_found  (free; never searched again, by anyone)
//                             |   \--failure---> error      (free; one retry)
//                             \--timeout-------> expired    (free; one retry)
//   error | expired --start (second try only)--> ongoing
//
// Starting reserves 5 credits (credits/ledger.ts: held under the organization's credit lock, so
// concurrent starts never hold more than the balance); `found` captures the reservation as the
// charge, every other end releases it. The state of a visitor's latest search is one row of
// `phone_searches` (migration 0012); every change is made under the visitor's search lock and
// checks that the search it ends is still the current one, so a late answer of an old search, a
// job run twice or a timeout racing an answer changes nothing twice. The provider is asked by a
// job (`phoneSearchJobName`); transient failures are asked again with backoff until the search
// times out.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { OrganizationRow } from '../accounts/rows.js'
import { type PeriodicTask, startPeriodicTask } from '../coordination/periodic.js'
import type { Coordination, Locks } from '../coordination/ports.js'
import { withLock } from '../coordination/with-lock.js'
import {
  captureReservation,
  phoneSearchEntryId,
  releaseReservation,
  reserveCredits,
} from '../credits/ledger.js'
import { appError } from '../errors.js'
import { appendEvents } from '../events/events.js'
import { visitorEvents } from '../identification/visitor-events.js'
import { nextVersion, randomToken } from '../ids.js'
import type { Repositories } from '../repositories.js'
import type { Store } from '../store/client.js'
import { type VisitorKey, visitorKeyOf, visitorKeysCondition } from '../store/visitor-keys.js'
import type { PhoneLookup, PhoneOutcome, PhoneProvider } from './provider.js'

export type PhoneSearchStatus = 'ongoing' | 'found' | 'not_found' | 'error' | 'expired'

/** Credits a found phone costs, and the least an organization must have to start a search. */
export const phoneSearchCost = 5

/** The job that asks the provider. */
export const phoneSearchJobName = 'phone-search'

export interface PhoneSearchRow {
  organization_id: string
  visitor_id: string
  search_id: string
  status: PhoneSearchStatus
  tries: number
  provider: string
  auto: boolean
  phone: string
  reason: string
  callback_token_sha256: string
  started_at: string
  finished_at: string | null
}

export interface PhoneSearchJob {
  organizationId: string
  visitorId: string
  searchId: string
  /** 1 on the first try; a retry or a poll adds one. */
  attempt: number
  /**
   * The token of the search's callback URL, carried by its jobs only (the store keeps its SHA-256);
   * a search resumed after a restart has none, and its provider uses the URL it was first given.
   */
  callbackToken?: string | undefined
}

export interface PhoneSearchDeps {
  store: Store
  repos: Repositories
  coordination: Coordination
  provider: PhoneProvider
  /** How long a search may stay `ongoing` before it is `expired` (PHONE_SEARCH_TIMEOUT). */
  timeoutMs: number
  /** The service's public URL: callback providers get `<publicUrl>/phone-search/callback/...`. */
  publicUrl?: string | undefined
  /** Tests shorten the backoff between tries (default 2 s, doubling, at most 5 min). */
  retryBaseMs?: number
}

const lockMs = 15_000
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

/**
 * The searches that meet `where`, typed as rows. A condition on the sorting key's columns only
 * (organization_id, visitor_id) goes in PREWHERE: it filters before the FINAL merge, which is
 * the same for every version of one key, and spares the merge the granules' other rows.
 */
async function selectSearches(
  store: Store,
  where: string,
  params?: Record<string, unknown>,
  clause: 'WHERE' | 'PREWHERE' = 'WHERE',
) {
  const rows = await store.query<PhoneSearchRow>(
    `SELECT organization_id, visitor_id, search_id,
       status, tries, provider, auto, phone, reason, callback_token_sha256, started_at, finished_at
     FROM phone_searches FINAL ${clause} ${where}`,
    params,
  )
  return rows.map((row) => ({ ...row, tries: Number(row.tries), auto: Boolean(row.auto) }))
}

/** The visitor's latest search, if any. */
export async function readPhoneSearch(
  store: Store,
  organizationId: string,
  visitorId: string,
): Promise<PhoneSearchRow | undefined> {
  const [row] = await selectSearches(
    store,
    'organization_id = {organizationId:UUID} AND visitor_id = {visitorId:UUID}',
    { organizationId, visitorId },
    'PREWHERE',
  )
  return row
}

/** The latest search of each visitor (undefined where none), of one organization or several, in one read. */
export async function readPhoneSearches(
  store: Store,
  keys: readonly VisitorKey[],
): Promise<(PhoneSearchRow | undefined)[]> {
  const { sql, params } = visitorKeysCondition(keys)
  const rows = await selectSearches(store, sql, params, 'PREWHERE')
  const byKey = new Map(
    rows.map((row) => [
      visitorKeyOf({ organizationId: row.organization_id, visitorId: row.visitor_id }),
      row,
    ]),
  )
  return keys.map((key) => byKey.get(visitorKeyOf(key)))
}

async function writePhoneSearch(store: Store, row: PhoneSearchRow): Promise<void> {
  await store.insert('phone_searches', [{ ...row, version: nextVersion() }])
}

const withVisitorLock = <T>(
  locks: Locks,
  row: { organizationId: string; visitorId: string },
  work: () => Promise<T>,
): Promise<T> =>
  withLock(locks, `phone:${row.organizationId}:${row.visitorId}`, { leaseMs: lockMs, waitMs: lockMs }, work)

const isOverdue = (row: PhoneSearchRow, timeoutMs: number, now = Date.now()) =>
  row.status === 'ongoing' && Date.parse(row.started_at) + timeoutMs <= now

/** How a visitor profile shows the phone search (spec: "Visitor tracking", the visitor profile). */
export interface ProfilePhoneFields {
  phoneNumber?: string
  phoneNumberSearchStatus?: 'not_started' | PhoneSearchStatus
}

/**
 * The profile's phone fields. A B2B (`plus_employee`) organization's visitor always has a status:
 * `not_started` without a search, else its latest search's (an `ongoing` one past the timeout
 * reads `expired`, as the next start or the sweep makes it), so a client polling sees every end.
 * Any other organization has no phone search: nothing, unless it unlocked a phone while it was B2B
 * (the spec: both fields once the organization has unlocked the phone). `phoneNumber` only with
 * `found`: a phone is paid data.
 * @example const fields = profilePhoneFields(await readPhoneSearch(store, orgId, visitorId), organization, timeoutMs)
 */
export function profilePhoneFields(
  search: PhoneSearchRow | undefined,
  organization: Pick<OrganizationRow, 'product_type'>,
  timeoutMs: number,
  now = Date.now(),
): ProfilePhoneFields {
  if (search?.status === 'found') return { phoneNumber: search.phone, phoneNumberSearchStatus: 'found' }
  if (organization.product_type !== 'plus_employee') return {}
  if (!search) return { phoneNumberSearchStatus: 'not_started' }
  return { phoneNumberSearchStatus: isOverdue(search, timeoutMs, now) ? 'expired' : search.status }
}

export interface StartPhoneSearchInput {
  organization: OrganizationRow
  visitorId: string
  /** Started by auto phone enrichment (reported on the search; the rules are the same). */
  auto?: boolean
}

/**
 * Starts a search, or says why not with the spec's code: `not_plus_employee` (403), a visitor
 * unknown to the organization (404), `no_linkedin` (400), `search_ongoing`, `already_unlocked`,
 * `not_found` (409), `retry_exhausted` (409: the one retry after an error or expiry is spent),
 * `insufficient_credits` (402: fewer than 5 credits free of other searches' reservations).
 * @example const { status } = await startPhoneSearch(deps, { organization, visitorId })
 */
export async function startPhoneSearch(
  deps: PhoneSearchDeps,
  input: StartPhoneSearchInput,
): Promise<{ status: 'ongoing'; visitorId: string }> {
  const { organization } = input
  if (organization.product_type !== 'plus_employee') throw appError('not_plus_employee')
  const visitorId = input.visitorId.toLowerCase()
  const visitor = /^[0-9a-f-]{36}$/.test(visitorId)
    ? await deps.repos.visitors.get({ organization_id: organization.id, id: visitorId })
    : undefined
  if (!visitor) throw appError('resource_not_found', 'Visitor not found')
  if (!visitor.linkedin_url) throw appError('no_linkedin')
  const key = { organizationId: organization.id, visitorId }
  const started = await withVisitorLock(deps.coordination.locks, key, async () => {
    let current = await readPhoneSearch(deps.store, organization.id, visitorId)
    if (current && isOverdue(current, deps.timeoutMs)) current = await expire(deps, current)
    if (current?.status === 'ongoing') throw appError('search_ongoing')
    if (current?.status === 'found') throw appError('already_unlocked')
    if (current?.status === 'not_found') throw appError('not_found')
    if (current && current.tries >= 2) throw appError('retry_exhausted')
    const searchId = randomToken('ps_', 12)
    const { reserved } = await reserveCredits(deps.store, deps.coordination.locks, {
      organizationId: organization.id,
      entryId: phoneSearchEntryId(searchId),
      amount: phoneSearchCost,
      reason: 'phone search',
    })
    if (!reserved) throw appError('insufficient_credits')
    const callbackToken = randomBytes(24).toString('hex')
    const row: PhoneSearchRow = {
      organization_id: organization.id,
      visitor_id: visitorId,
      search_id: searchId,
      status: 'ongoing',
      tries: (current?.tries ?? 0) + 1,
      provider: deps.provider.name,
      auto: input.auto ?? false,
      phone: '',
      reason: '',
      callback_token_sha256: sha256(callbackToken),
      started_at: new Date().toISOString(),
      finished_at: null,
    }
    await writePhoneSearch(deps.store, row)
    return { row, callbackToken }
  })
  await enqueue(
    deps,
    {
      organizationId: organization.id,
      visitorId,
      searchId: started.row.search_id,
      attempt: 1,
      callbackToken: started.callbackToken,
    },
    0,
  )
  return { status: 'ongoing', visitorId }
}

async function enqueue(deps: PhoneSearchDeps, job: PhoneSearchJob, delayMs: number) {
  await deps.coordination.jobs.add(phoneSearchJobName, job, {
    delayMs,
    jobId: `${job.searchId}:${job.attempt}`,
  })
}

/** Ends the search (if it is still the current, ongoing one): the credits captured or released. */
async function finish(
  deps: PhoneSearchDeps,
  current: PhoneSearchRow,
  outcome: { status: Exclude<PhoneSearchStatus, 'ongoing'>; phone?: string; reason?: string },
): Promise<PhoneSearchRow> {
  const entry = { organizationId: current.organization_id, entryId: phoneSearchEntryId(current.search_id) }
  const ended: PhoneSearchRow = {
    ...current,
    status: outcome.status,
    phone: outcome.phone ?? '',
    reason: outcome.reason ?? '',
    finished_at: new Date().toISOString(),
  }
  if (outcome.status === 'found') {
    // The charge first: a crash before the row is written finds the search ongoing and asks again,
    // and the charge is the same entry, counted once.
    await captureReservation(deps.store, { ...entry, amount: phoneSearchCost, reason: 'phone found' })
    await writePhoneSearch(deps.store, ended)
    await revealPhone(deps, ended)
  } else {
    await releaseReservation(deps.store, { ...entry, reason: `phone search ${outcome.status}` })
    await writePhoneSearch(deps.store, ended)
  }
  return ended
}

const expire = (deps: PhoneSearchDeps, current: PhoneSearchRow) =>
  finish(deps, current, { status: 'expired', reason: 'no answer within PHONE_SEARCH_TIMEOUT' })

/** `visitor.phone_revealed`, with the identification payload and the phone in `visitor.phone`. */
async function revealPhone(deps: PhoneSearchDeps, search: PhoneSearchRow): Promise<void> {
  const [organization, visitor] = await Promise.all([
    deps.repos.organizations.get({ id: search.organization_id }),
    deps.repos.visitors.get({ organization_id: search.organization_id, id: search.visitor_id }),
  ])
  if (!organization || !visitor) return
  const events = await visitorEvents(deps, organization, 'visitor.phone_revealed', [
    { visitor, revealedPhone: search.phone, timestamp: search.finished_at! },
  ])
  await appendEvents(deps.store, events)
}

/** Applies a provider's outcome to the search it belongs to; stale or finished searches are left alone. */
export async function applyPhoneOutcome(
  deps: PhoneSearchDeps,
  job: PhoneSearchJob,
  outcome: PhoneOutcome,
): Promise<PhoneSearchRow | undefined> {
  const next = await withVisitorLock(deps.coordination.locks, job, async () => {
    const current = await readPhoneSearch(deps.store, job.organizationId, job.visitorId)
    if (!current || current.search_id !== job.searchId || current.status !== 'ongoing') return undefined
    if (isOverdue(current, deps.timeoutMs)) return { row: await expire(deps, current) }
    switch (outcome.status) {
      case 'found':
        return { row: await finish(deps, current, { status: 'found', phone: outcome.phone }) }
      case 'not_found':
        return { row: await finish(deps, current, { status: 'not_found' }) }
      case 'error':
        return { row: await finish(deps, current, { status: 'error', reason: outcome.reason }) }
      case 'retry': {
        const base = deps.retryBaseMs ?? 2000
        const backoff = Math.min(base * 2 ** (job.attempt - 1), 5 * 60_000)
        return { row: current, retryInMs: Math.max(outcome.retryAfterMs ?? 0, backoff) }
      }
      case 'pending':
        // Polling providers are asked again; callback providers answer on their own.
        return { row: current, retryInMs: deps.provider.poll ? (deps.retryBaseMs ?? 2000) * 5 : undefined }
    }
  })
  if (next?.retryInMs !== undefined) {
    await enqueue(deps, { ...job, attempt: job.attempt + 1 }, next.retryInMs)
  }
  return next?.row
}

/** The job: asks the provider (or polls it) about the search, and applies the answer. */
export async function runPhoneSearchJob(deps: PhoneSearchDeps, job: PhoneSearchJob): Promise<void> {
  const current = await readPhoneSearch(deps.store, job.organizationId, job.visitorId)
  if (!current || current.search_id !== job.searchId || current.status !== 'ongoing') return
  if (isOverdue(current, deps.timeoutMs)) {
    await applyPhoneOutcome(deps, job, { status: 'error', reason: 'timeout' })
    return
  }
  const visitor = await deps.repos.visitors.get({ organization_id: job.organizationId, id: job.visitorId })
  if (!visitor?.linkedin_url) {
    await applyPhoneOutcome(deps, job, {
      status: 'error',
      reason: 'the visitor has no LinkedIn URL any more',
    })
    return
  }
  const token = job.callbackToken
  const lookup: PhoneLookup = {
    searchId: job.searchId,
    organizationId: job.organizationId,
    visitorId: job.visitorId,
    linkedinUrl: visitor.linkedin_url,
    email: visitor.email,
    firstName: visitor.first_name,
    lastName: visitor.last_name,
    contactId: visitor.contact_id,
    callbackUrl:
      deps.publicUrl && token
        ? `${deps.publicUrl}/phone-search/callback/${job.organizationId}/${job.visitorId}/${job.searchId}/${token}`
        : undefined,
  }
  let outcome: PhoneOutcome
  try {
    outcome =
      job.attempt > 1 && deps.provider.poll
        ? await deps.provider.poll(lookup)
        : await deps.provider.lookup(lookup)
  } catch (error) {
    outcome = { status: 'retry', reason: error instanceof Error ? error.name : 'provider failure' }
  }
  await applyPhoneOutcome(deps, job, outcome)
}

/**
 * A callback provider's answer for a search, if its token is the one the search was started with
 * (compared as SHA-256 digests, in constant time). Unknown, finished or foreign searches: false.
 */
export async function acceptPhoneCallback(
  deps: PhoneSearchDeps,
  target: { organizationId: string; visitorId: string; searchId: string; token: string },
  body: unknown,
): Promise<boolean> {
  if (!deps.provider.parseCallback) return false
  const current = await readPhoneSearch(deps.store, target.organizationId, target.visitorId).catch(
    () => undefined,
  )
  if (!current || current.search_id !== target.searchId || current.status !== 'ongoing') return false
  const presented = Buffer.from(sha256(target.token), 'hex')
  const expected = Buffer.from(current.callback_token_sha256, 'hex')
  if (expected.length !== presented.length || !timingSafeEqual(expected, presented)) return false
  await applyPhoneOutcome(deps, { ...target, attempt: 1 }, deps.provider.parseCallback(body))
  return true
}

/**
 * The worker's sweep: ongoing searches past the timeout become `expired` (credits released). With
 * `resumeStartedBefore`, ongoing searches started before that time are asked again: those of a
 * process that stopped, whose jobs an in-memory queue lost (a job run twice changes nothing twice).
 * Returns what it did.
 */
export async function sweepPhoneSearches(
  deps: PhoneSearchDeps,
  options: { resumeStartedBefore?: string } = {},
): Promise<{ expired: number; resumed: number }> {
  const rows = await selectSearches(deps.store, "status = 'ongoing'")
  let expired = 0
  let resumed = 0
  for (const row of rows) {
    const job = {
      organizationId: row.organization_id,
      visitorId: row.visitor_id,
      searchId: row.search_id,
      attempt: 1,
    }
    if (isOverdue(row, deps.timeoutMs)) {
      if (await applyPhoneOutcome(deps, job, { status: 'error', reason: 'timeout' })) expired++
    } else if (
      options.resumeStartedBefore &&
      Date.parse(row.started_at) < Date.parse(options.resumeStartedBefore)
    ) {
      await deps.coordination.jobs.add(phoneSearchJobName, job, {
        jobId: `${row.search_id}:resume:${Date.now()}`,
      })
      resumed++
    }
  }
  return { expired, resumed }
}

/**
 * The worker's sweep, every quarter of the timeout (at most a minute): expires overdue searches.
 * With the in-memory queue (one process, no Redis), the first pass also asks again about the
 * searches left ongoing before this process started; a Redis queue keeps their jobs itself.
 */
export function startPhoneSearchSweep(
  deps: PhoneSearchDeps,
  log: { warn(details: object, message: string): void },
): PeriodicTask {
  const startedAt = new Date().toISOString()
  let first = deps.coordination.kind === 'memory'
  return startPeriodicTask({
    locks: deps.coordination.locks,
    lockName: 'phone-search:sweep',
    lockTtlMs: 5 * 60_000,
    intervalMs: Math.max(250, Math.min(60_000, Math.floor(deps.timeoutMs / 4))),
    pass: async () => {
      await sweepPhoneSearches(deps, first ? { resumeStartedBefore: startedAt } : {})
      first = false
    },
    onError: (error) => log.warn({ err: error }, 'phone search sweep failed'),
  })
}
