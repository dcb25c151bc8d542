import { describe, expect, it } from 'vitest'
import {
  type AudienceSync,
  connectionWords,
  matchingWords,
  memberWords,
  type Platform,
  syncFacts,
} from './audience-sync-words.js'
import { formatDateTime, formatNumber } from './format.js'

// Dates and numbers read in the locale and time zone of the run (format.ts): the expected words
// go through the same formatters.
const started = '2025-03-04T10:00:00.000Z'
const finished = '2025-03-04T10:02:00.000Z'

const sync = (more: Partial<AudienceSync> = {}): AudienceSync => ({
  status: 'success',
  flowId: 'flow_1',
  integrationType: 'searchAds',
  accountId: '111',
  audienceId: 'aud_1',
  syncId: 'sync_1',
  sent: 1200,
  removed: 3,
  requests: [],
  error: null,
  resumesAt: null,
  startedAt: started,
  finishedAt: finished,
  ...more,
})

const platforms: Platform[] = [
  {
    type: 'searchAds',
    name: 'Google Ads',
    adsAccounts: [{ id: '111', name: 'Acme Ads' }],
    selectedAdsAccount: { id: '111', name: 'Acme Ads' },
  },
  {
    type: 'socialAds',
    name: 'Meta',
    adsAccounts: [],
    selectedAdsAccount: { id: '123-456-7890', name: '123-456-7890' },
  },
]

describe('connectionWords', () => {
  it('says a list that never synced is not connected', () => {
    expect(connectionWords({ connectedIntegration: null, lastAudienceSync: null }, platforms)).toBe(
      'Not connected to an ads platform',
    )
  })

  it('names the platform, the account (its name where the platform gives one) and the audience', () => {
    expect(connectionWords({ connectedIntegration: 'searchAds', lastAudienceSync: sync() }, platforms)).toBe(
      'Synced to Google Ads · account Acme Ads (111) · audience aud_1',
    )
    const entered = sync({ integrationType: 'socialAds', accountId: '123-456-7890', audienceId: '42' })
    expect(connectionWords({ connectedIntegration: 'socialAds', lastAudienceSync: entered }, platforms)).toBe(
      'Synced to Meta · account 123-456-7890 · audience 42',
    )
  })

  it('falls back to what the types stand for when the integrations are unknown', () => {
    expect(connectionWords({ connectedIntegration: 'socialAds', lastAudienceSync: null })).toBe(
      'Synced to Meta',
    )
    expect(connectionWords({ connectedIntegration: 'searchAds', lastAudienceSync: sync() })).toBe(
      'Synced to Google Ads · account 111 · audience aud_1',
    )
  })

  it('says a first sync is under way, or has not succeeded yet', () => {
    const first = (status: AudienceSync['status']) =>
      connectionWords({ connectedIntegration: null, lastAudienceSync: sync({ status }) }, platforms)
    expect(first('running')).toBe('Syncing to Google Ads · account Acme Ads (111) · audience aud_1')
    expect(first('paused')).toMatch(/^Syncing to Google Ads/)
    expect(first('failed')).toMatch(/^Not yet synced to Google Ads · /)
  })
})

describe('syncFacts', () => {
  it('has none before the first sync', () => {
    expect(syncFacts({ connectedIntegration: null, lastAudienceSync: null }, platforms)).toEqual([])
  })

  it('a success: when it finished and the members the platform counted', () => {
    const facts = syncFacts(
      { connectedIntegration: 'searchAds', lastAudienceSync: sync({ received: 1190, invalid: 10 }) },
      platforms,
    )
    expect(facts).toEqual([
      { term: 'Last sync', text: `Succeeded, finished ${formatDateTime(finished)}`, tone: 'ok' },
      {
        term: 'Members',
        text: `${formatNumber(1200)} added · 3 removed · ${formatNumber(1190)} received · 10 invalid`,
      },
    ])
  })

  it('a failure: when it stopped and its error in the platform’s words', () => {
    const error = 'the ads API answered 500: internal error'
    const facts = syncFacts(
      { connectedIntegration: null, lastAudienceSync: sync({ status: 'failed', error, sent: 6 }) },
      platforms,
    )
    expect(facts[0]).toEqual({
      term: 'Last sync',
      text: `Failed, stopped ${formatDateTime(finished)}`,
      tone: 'problem',
    })
    expect(facts).toContainEqual({ term: 'Error', text: error, tone: 'problem' })
  })

  it('a pause: rate-limited by the platform, when it resumes, and what the platform said', () => {
    const resumesAt = '2025-03-04T10:30:00.000Z'
    const paused = sync({
      status: 'paused',
      finishedAt: null,
      resumesAt,
      error: 'the ads API answered 429: slow down',
    })
    const facts = syncFacts({ connectedIntegration: 'searchAds', lastAudienceSync: paused }, platforms)
    expect(facts[0]).toEqual({
      term: 'Last sync',
      text: `Paused: rate-limited by Google Ads; resumes by itself at ${formatDateTime(resumesAt)}`,
      tone: 'pending',
    })
    expect(facts).toContainEqual({ term: 'Google Ads said', text: 'the ads API answered 429: slow down' })
    expect(facts.some((fact) => fact.term === 'Error')).toBe(false)
  })

  it('a sync under way: when it started', () => {
    const facts = syncFacts(
      { connectedIntegration: null, lastAudienceSync: sync({ status: 'running', finishedAt: null }) },
      platforms,
    )
    expect(facts[0]).toEqual({
      term: 'Last sync',
      text: `Running, started ${formatDateTime(started)}`,
      tone: 'pending',
    })
  })

  it('names the last sync’s target when it is not the platform the list last synced to', () => {
    const meta = sync({ integrationType: 'socialAds', accountId: '123-456-7890', audienceId: '42' })
    const list = { connectedIntegration: 'searchAds', lastAudienceSync: meta }
    expect(connectionWords(list, platforms)).toBe('Synced to Google Ads')
    expect(syncFacts(list, platforms)[0]?.text).toBe(
      `Succeeded, finished ${formatDateTime(finished)} (to Meta · account 123-456-7890 · audience 42)`,
    )
  })

  it('each failed or partial request with the platform’s words, three at most, the rest counted', () => {
    const requests: AudienceSync['requests'] = [
      { id: 'r1', state: 'succeeded' },
      { id: 'r2', state: 'failed', detail: 'consent unknown (4 records)' },
      { id: 'r3', state: 'partial', detail: 'malformed identifiers (2 records)' },
      { id: 'r4', state: 'failed' },
      { id: 'r5', state: 'failed', detail: 'x' },
      { id: 'r6', state: 'partial', detail: 'y' },
    ]
    const facts = syncFacts({ connectedIntegration: 'searchAds', lastAudienceSync: sync({ requests }) })
    expect(facts.filter((fact) => fact.term.startsWith('Request'))).toEqual([
      { term: 'Request failed', text: 'consent unknown (4 records) (request r2)', tone: 'problem' },
      {
        term: 'Request partly failed',
        text: 'malformed identifiers (2 records) (request r3)',
        tone: 'problem',
      },
      { term: 'Request failed', text: 'the platform gave no reason (request r4)', tone: 'problem' },
      { term: 'Requests', text: '2 more with problems', tone: 'problem' },
    ])
  })
})

describe('memberWords', () => {
  it('leaves out the counts the platform does not give', () => {
    expect(memberWords(sync({ sent: 0, removed: 7 }))).toBe('0 added · 7 removed')
  })
})

describe('matchingWords', () => {
  it('is unknown when the platform says nothing of matching', () => {
    expect(matchingWords(sync({ requests: [{ id: 'r1', state: 'succeeded' }] }))).toBeUndefined()
  })

  it('is in progress while requests are processing, with what is matched so far', () => {
    const requests: AudienceSync['requests'] = [
      { id: 'r1', state: 'processing' },
      { id: 'r2', state: 'processing' },
      { id: 'r3', state: 'succeeded', matched: 40 },
    ]
    expect(matchingWords(sync({ requests }))).toBe('Matching in progress (2 of 3 requests)')
    expect(matchingWords(sync({ requests, matched: 40 }))).toBe(
      'Matching in progress (2 of 3 requests) · 40 matched so far',
    )
  })

  it('gives the matched count once known', () => {
    const requests: AudienceSync['requests'] = [{ id: 'r1', state: 'succeeded', matched: 1500 }]
    expect(matchingWords(sync({ requests, matched: 1500 }))).toBe(`${formatNumber(1500)} matched`)
  })

  it('gives the range the match rates span where the platform gives ranges (Google)', () => {
    const rate = (id: string, min: number, max: number) => ({
      id,
      state: 'succeeded' as const,
      matchRate: { min, max },
    })
    expect(matchingWords(sync({ requests: [rate('r1', 20, 30)] }))).toBe('Match rate 20–30 %')
    expect(matchingWords(sync({ requests: [rate('r1', 20, 30), rate('r2', 0, 19)] }))).toBe(
      'Match rate 0–30 %',
    )
    expect(matchingWords(sync({ requests: [rate('r1', 20, 30), { id: 'r2', state: 'processing' }] }))).toBe(
      'Matching in progress (1 of 2 requests) · match rate 20–30 %',
    )
  })
})
