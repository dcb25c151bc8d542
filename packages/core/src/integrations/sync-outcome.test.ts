import { describe, expect, it } from 'vitest'
import type { RequestStatus } from './ads-platform.js'
import { type AudienceSyncOutcome, readBackRequests } from './sync-outcome.js'

const outcome = (requests: AudienceSyncOutcome['requests']): AudienceSyncOutcome => ({
  status: 'success',
  flowId: 'flow_1',
  integrationType: 'searchAds',
  accountId: '111',
  audienceId: 'aud_1',
  syncId: 'sync_1',
  sent: 10,
  removed: 0,
  requests,
  error: null,
  resumesAt: null,
  startedAt: '2025-01-01T00:00:00.000Z',
  finishedAt: '2025-01-01T00:01:00.000Z',
})

describe('readBackRequests', () => {
  it('keeps what the platform says of each pending request: state, matched count, match rate, words', async () => {
    const answers: Record<string, RequestStatus> = {
      a: { state: 'succeeded', matchRate: { min: 20, max: 30 } },
      b: { state: 'partial', matched: 4, detail: 'malformed identifiers (2 records)' },
    }
    const read = async (id: string) => {
      const answer = answers[id]
      if (!answer) throw new Error('not reachable now')
      return answer
    }
    const updated = await readBackRequests(
      outcome([
        { id: 'a', state: 'processing' },
        { id: 'b', state: 'processing' },
        { id: 'c', state: 'processing' },
        { id: 'd', state: 'failed', detail: 'kept as it was' },
      ]),
      read,
    )
    expect(updated.requests).toEqual([
      { id: 'a', state: 'succeeded', matchRate: { min: 20, max: 30 } },
      { id: 'b', state: 'partial', matched: 4, detail: 'malformed identifiers (2 records)' },
      // Not readable now: still processing, asked again later.
      { id: 'c', state: 'processing' },
      { id: 'd', state: 'failed', detail: 'kept as it was' },
    ])
    expect(updated.matched).toBe(4)
  })

  it('reports no matched count when no request gave one', async () => {
    const updated = await readBackRequests(outcome([{ id: 'a', state: 'processing' }]), async () => ({
      state: 'succeeded',
      matchRate: { min: 0, max: 19 },
    }))
    expect(updated.matched).toBeUndefined()
    expect(updated.requests[0]?.matchRate).toEqual({ min: 0, max: 19 })
  })
})
