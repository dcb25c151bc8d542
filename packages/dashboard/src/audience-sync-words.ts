// A list's audience sync in a marketer's words: which ads platform, account and audience the list
// goes to, how its last sync went and when, what the platform counted, and what went wrong. The
// outcome is the API's `lastAudienceSync` (core integrations/sync-outcome.ts); the Lists page shows
// these words as they are, so every state reads as text, never as a colour alone.
import { formatDateTime, formatNumber } from './format.js'
import type { Integration, SavedList } from './types.js'

export type AudienceSync = NonNullable<SavedList['lastAudienceSync']>
type SyncRequest = AudienceSync['requests'][number]

/** What the words need of the organization's integrations (`GET /integrations/{organizationId}`). */
export type Platform = Pick<Integration, 'type' | 'name' | 'adsAccounts' | 'selectedAdsAccount'>

/** What the words need of a list. */
export type ListSync = Pick<SavedList, 'connectedIntegration' | 'lastAudienceSync'>

/** One line of the summary; `tone` only adds a colour to words that already say it. */
export interface SyncFact {
  term: string
  text: string
  tone?: 'ok' | 'pending' | 'problem'
}

/** What the integration types stand for, when the integrations did not load. */
const typeNames: Record<string, string> = { searchAds: 'Google Ads', socialAds: 'Meta' }

/** Request problems listed one by one; more are counted. */
const requestProblemsShown = 3

export function platformName(type: string, platforms: readonly Platform[] = []): string {
  return platforms.find((platform) => platform.type === type)?.name ?? typeNames[type] ?? type
}

/** `account Acme Ads (111)`, or `account 111` when the platform gives no other name. */
function accountWords(sync: AudienceSync, platforms: readonly Platform[]): string {
  const platform = platforms.find((p) => p.type === sync.integrationType)
  const known = [...(platform?.adsAccounts ?? []), platform?.selectedAdsAccount].find(
    (account) => account?.id === sync.accountId,
  )
  return known && known.name !== known.id
    ? `account ${known.name} (${known.id})`
    : `account ${sync.accountId}`
}

/** `Google Ads · account 111 · audience aud_1`. */
function targetWords(sync: AudienceSync, platforms: readonly Platform[]): string {
  return [
    platformName(sync.integrationType, platforms),
    accountWords(sync, platforms),
    `audience ${sync.audienceId}`,
  ].join(' · ')
}

/**
 * Where the list goes: `Synced to <platform> · account <id> · audience <id>` once a sync succeeded,
 * `Syncing to` while its first one runs or waits, `Not yet synced to` after it failed.
 */
export function connectionWords(list: ListSync, platforms: readonly Platform[] = []): string {
  const sync = list.lastAudienceSync
  const type = list.connectedIntegration ?? sync?.integrationType
  if (!type) return 'Not connected to an ads platform'
  const verb = list.connectedIntegration
    ? 'Synced to'
    : sync?.status === 'failed'
      ? 'Not yet synced to'
      : 'Syncing to'
  // The last sync may be to another platform than the one the list last synced to successfully.
  const target = sync?.integrationType === type ? targetWords(sync, platforms) : platformName(type, platforms)
  return `${verb} ${target}`
}

/** The last sync's status and when, as one fact. */
function statusFact(sync: AudienceSync, platforms: readonly Platform[]): SyncFact {
  const name = platformName(sync.integrationType, platforms)
  switch (sync.status) {
    case 'running':
      return {
        term: 'Last sync',
        text: `Running, started ${formatDateTime(sync.startedAt)}`,
        tone: 'pending',
      }
    case 'paused':
      return {
        term: 'Last sync',
        text:
          `Paused: rate-limited by ${name}; resumes by itself ` +
          `${sync.resumesAt ? `at ${formatDateTime(sync.resumesAt)}` : 'shortly'}`,
        tone: 'pending',
      }
    case 'success':
      return { term: 'Last sync', text: `Succeeded, finished ${formatDateTime(sync.finishedAt)}`, tone: 'ok' }
    case 'failed':
      return {
        term: 'Last sync',
        text: `Failed, stopped ${formatDateTime(sync.finishedAt)}`,
        tone: 'problem',
      }
  }
}

/** `120 added · 3 removed · 118 received · 2 invalid` (the last two where the platform counts them). */
export function memberWords(sync: AudienceSync): string {
  return [
    `${formatNumber(sync.sent)} added`,
    `${formatNumber(sync.removed)} removed`,
    ...(sync.received !== undefined ? [`${formatNumber(sync.received)} received`] : []),
    ...(sync.invalid !== undefined ? [`${formatNumber(sync.invalid)} invalid`] : []),
  ].join(' · ')
}

/** The range the match rates of the requests span, where the platform gives ranges (Google). */
function matchRateRange(requests: readonly SyncRequest[]): { min: number; max: number } | undefined {
  const rates = requests.flatMap((request) => (request.matchRate ? [request.matchRate] : []))
  if (rates.length === 0) return undefined
  return { min: Math.min(...rates.map((r) => r.min)), max: Math.max(...rates.map((r) => r.max)) }
}

/**
 * How the platform matched the members to its users, where it says: still in progress (platforms
 * that process requests after answering), a count, or a match rate range. Undefined when unknown.
 */
export function matchingWords(sync: AudienceSync): string | undefined {
  const pending = sync.requests.filter((request) => request.state === 'processing').length
  const rate = matchRateRange(sync.requests)
  const parts = [
    ...(pending > 0 ? [`Matching in progress (${pending} of ${sync.requests.length} requests)`] : []),
    ...(sync.matched !== undefined
      ? [`${formatNumber(sync.matched)} matched${pending > 0 ? ' so far' : ''}`]
      : []),
    ...(rate ? [`match rate ${rate.min === rate.max ? rate.min : `${rate.min}–${rate.max}`} %`] : []),
  ]
  if (parts.length === 0) return undefined
  const text = parts.join(' · ')
  return text.charAt(0).toUpperCase() + text.slice(1)
}

/** What went wrong: the sync's error, the platform's words on a pause, its failed requests. */
function problemFacts(sync: AudienceSync, platforms: readonly Platform[]): SyncFact[] {
  const facts: SyncFact[] = []
  if (sync.error && sync.status === 'paused') {
    facts.push({ term: `${platformName(sync.integrationType, platforms)} said`, text: sync.error })
  } else if (sync.error) {
    facts.push({ term: 'Error', text: sync.error, tone: 'problem' })
  }
  const troubled = sync.requests.filter(
    (request) => request.state === 'failed' || request.state === 'partial',
  )
  for (const request of troubled.slice(0, requestProblemsShown)) {
    facts.push({
      term: request.state === 'failed' ? 'Request failed' : 'Request partly failed',
      text: `${request.detail ?? 'the platform gave no reason'} (request ${request.id})`,
      tone: 'problem',
    })
  }
  const more = troubled.length - requestProblemsShown
  if (more > 0) {
    facts.push({ term: 'Requests', text: `${more} more with problems`, tone: 'problem' })
  }
  return facts
}

/**
 * The last sync as facts: its status and when, the members, the matching, the problems. None before
 * the first sync. The target is named when it is not the one `connectionWords` names.
 */
export function syncFacts(list: ListSync, platforms: readonly Platform[] = []): SyncFact[] {
  const sync = list.lastAudienceSync
  if (!sync) return []
  const status = statusFact(sync, platforms)
  const elsewhere = list.connectedIntegration && list.connectedIntegration !== sync.integrationType
  const matching = matchingWords(sync)
  return [
    elsewhere ? { ...status, text: `${status.text} (to ${targetWords(sync, platforms)})` } : status,
    { term: 'Members', text: memberWords(sync) },
    ...(matching ? [{ term: 'Matching', text: matching }] : []),
    ...problemFacts(sync, platforms),
  ]
}
