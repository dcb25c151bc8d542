// Audience syncs on the AdsPlatform port, end to end on a real server: installed through a real
// OAuth 2.0 server (oauth2-mock-server), synced to a local ads API speaking the provider-neutral
// contract (searchAds, the neutral adapter) and, for socialAds, through a small adapter of the
// tests' own (a platform that lists no accounts, takes 2 members a request, and reports each
// request's processing later). What the local API received is asserted: batch sizes, no batch
// sent twice across a rate limit or a stopped sync, removals, and reconnection after a refused grant.
import { type AdsPlatform, AdsPlatformError, type BatchPosition } from '@visitor-id/core/integrations'
import { audienceSyncFixtures, sha256Hex } from '@visitor-id/testing/audience-sync-fixtures'
import { errorBody, type Harness, startHarness } from '@visitor-id/testing/harness'
import { type NeutralAdsServer, startNeutralAdsServer } from '@visitor-id/testing/neutral-ads-server'
import { OAuth2Server } from 'oauth2-mock-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

let h: Harness
let oauth: OAuth2Server
let ads: NeutralAdsServer
const publicUrl = 'https://app.visitor-id.test'
const tokenRequests: Record<string, string>[] = []

beforeAll(async () => {
  oauth = new OAuth2Server()
  await oauth.issuer.keys.generate('RS256')
  await oauth.start(0, '127.0.0.1')
  oauth.service.on('beforeResponse', (_response: unknown, request: { body: Record<string, string> }) => {
    tokenRequests.push(request.body)
  })
  ads = await startNeutralAdsServer()
  const issuer = oauth.issuer.url!
  const app = (prefix: string) => ({
    [`${prefix}_CLIENT_ID`]: 'visitor-id-app',
    [`${prefix}_CLIENT_SECRET`]: 'visitor-id-app-secret',
    [`${prefix}_AUTHORIZE_URL`]: `${issuer}/authorize`,
    [`${prefix}_TOKEN_URL`]: `${issuer}/token`,
    [`${prefix}_API_URL`]: ads.url,
  })
  h = await startHarness({
    PUBLIC_URL: publicUrl,
    ...app('SEARCH_ADS'),
    ...app('SOCIAL_ADS'),
    SEARCH_ADS_PLATFORM: 'neutral',
    AUDIENCE_BATCH_SIZE: '3',
  })
})

afterAll(async () => {
  await h?.stop()
  await oauth?.stop()
  await ads?.close()
})

const { api, installed, select, contacts, syncedList, runNumber, refreshedRun } = audienceSyncFixtures(
  () => h,
)
const sha = sha256Hex

/** The member calls the local API received for an audience, in order: their status and size. */
const memberCalls = (audienceId: string, kind = '/members') =>
  ads.requests
    .filter((r) => r.path === `/audiences/${audienceId}${kind}`)
    .map((r) => [r.status, (r.body as { data: string[] }).data.length])

const taken = (audienceId: string, kind = '/members') =>
  ads.requests
    .filter((r) => r.status === 200 && r.path === `/audiences/${audienceId}${kind}`)
    .flatMap((r) => (r.body as { data: string[] }).data)

describe('audience sync', () => {
  it('a platform without account listing: its authorization parameters, kept tokens, an entered account id; batches of its maxBatch with their positions; request statuses read back', async () => {
    const positions: BatchPosition[] = []
    const kept: string[] = []
    h.integrations.platforms.socialAds = testPlatform(ads.url, positions, kept)
    const { organizationId, url, page } = await installed('socialAds', 'Entered Account Co')
    expect(url.searchParams.get('access_type')).toBe('offline')
    expect(url.searchParams.get('prompt')).toBe('consent')
    expect(url.searchParams.get('code_challenge_method')).toBe('S256')
    expect(page).toContain('Enter the id')
    expect(kept).toHaveLength(1)
    const social = () =>
      api('GET', `/integrations/${organizationId}`).then((r) => r.json()[1] as Record<string, unknown>)
    expect(await social()).toMatchObject({
      type: 'socialAds',
      status: 'connected',
      adsAccounts: [],
      accountIdEntry: true,
      selectedAdsAccount: null,
    })
    expect((await select(organizationId, 'socialAds', '12345')).json()).toMatchObject(
      errorBody(400, 'unknown_ads_account'),
    )
    const chosen = await select(organizationId, 'socialAds', '123-456-7890')
    expect(chosen.statusCode, chosen.body).toBe(200)
    expect(chosen.json().selectedAdsAccount).toEqual({ id: '123-456-7890', name: '123-456-7890' })

    const hashes = await contacts('Batcher', 5)
    const ids = await syncedList(organizationId, 'Batcher', 'socialAds')
    const run = await refreshedRun(organizationId, ids, 1)
    expect(run.status, JSON.stringify(run)).toBe('success')
    const sync = run.actions[0].sync
    expect([...ads.audiences.get(sync.audienceId)!.members].sort()).toEqual(hashes)
    expect(ads.audiences.get(sync.audienceId)!.account).toBe('123-456-7890')
    // AUDIENCE_BATCH_SIZE is 3, the platform takes 2.
    expect(memberCalls(sync.audienceId)).toEqual([
      [200, 2],
      [200, 2],
      [200, 1],
    ])
    expect(positions).toEqual(
      [1, 2, 3].map((sequence) => ({ syncId: sync.syncId, sequence, last: sequence === 3 })),
    )
    expect(sync).toMatchObject({ status: 'success', sent: 5, received: 5, invalid: 0, removed: 0 })
    expect(sync.requests.map((r: { state: string }) => r.state)).toEqual([
      'processing',
      'processing',
      'processing',
    ])
    const list = (await api('GET', `/lists/${ids.listId}`)).json()
    expect(list).toMatchObject({
      connectedIntegration: 'socialAds',
      lastAudienceSync: { syncId: sync.syncId },
    })

    // The next run reads the requests' processing back first, and has nothing new to send.
    const next = await refreshedRun(organizationId, ids, 2)
    expect(next.actions[0].detail).toContain('added 0 and removed 0')
    expect(next.actions[0].sync.requests.map((r: { state: string }) => r.state)).toEqual([
      'succeeded',
      'succeeded',
      'succeeded',
    ])
    expect(next.actions[0].sync.matched).toBe(2)
    expect(memberCalls(sync.audienceId)).toHaveLength(3)
  }, 60_000)

  it('a rate limit pauses the sync; a job resumes it after Retry-After without sending a batch twice', async () => {
    const { organizationId } = await installed('searchAds', 'Paused Inc')
    expect((await select(organizationId, 'searchAds', '111')).statusCode).toBe(200)
    const hashes = await contacts('Pauser', 7)
    const ids = await syncedList(organizationId, 'Pauser', 'searchAds')
    ads.failMembers({ status: 429, afterBatches: 1, retryAfterSeconds: 1, message: 'slow down' })
    const paused = await refreshedRun(organizationId, ids, 1)
    expect(paused.status).toBe('failed')
    expect(paused.actions[0].detail).toMatch(
      /^paused after 1 batches \(the ads API answered 429: slow down\): resumes in 1 s$/,
    )
    const sync = paused.actions[0].sync
    expect(sync).toMatchObject({ status: 'paused', sent: 3, error: 'the ads API answered 429: slow down' })
    expect(Date.parse(sync.resumesAt)).toBeGreaterThan(Date.parse(paused.finishedAt) - 100)
    const resumed = await runNumber(organizationId, ids.flowId, 2)
    expect(resumed, JSON.stringify(resumed)).toMatchObject({ status: 'success', eventId: paused.eventId })
    expect(resumed.actions[0].detail).toContain(`resumed ${sync.syncId} at batch 2: added 4`)
    expect(resumed.actions[0].sync).toMatchObject({ status: 'success', syncId: sync.syncId, sent: 7 })
    expect(memberCalls(sync.audienceId)).toEqual([
      [200, 3],
      [429, 3],
      [200, 3],
      [200, 1],
    ])
    expect(taken(sync.audienceId).sort()).toEqual(hashes)
  }, 60_000)

  it('a sync stopped after some batches (a failure, a restart) is resumed by the next run, not sent again', async () => {
    const { organizationId } = await installed('searchAds', 'Restarted Ltd')
    await select(organizationId, 'searchAds', '111')
    const hashes = await contacts('Restarter', 8)
    const ids = await syncedList(organizationId, 'Restarter', 'searchAds')
    ads.failMembers({ status: 500, afterBatches: 2, message: 'internal error' })
    const stopped = await refreshedRun(organizationId, ids, 1)
    expect(stopped.status).toBe('failed')
    expect(stopped.actions[0].detail).toBe('the ads API answered 500: internal error')
    const sync = stopped.actions[0].sync
    expect(sync).toMatchObject({
      status: 'failed',
      sent: 6,
      error: 'the ads API answered 500: internal error',
    })
    const next = await refreshedRun(organizationId, ids, 2)
    expect(next.status, JSON.stringify(next)).toBe('success')
    expect(next.actions[0].detail).toContain(`resumed ${sync.syncId} at batch 3: added 2`)
    expect(next.actions[0].sync).toMatchObject({ syncId: sync.syncId, sent: 8 })
    expect(memberCalls(sync.audienceId)).toEqual([
      [200, 3],
      [200, 3],
      [500, 2],
      [200, 2],
    ])
    expect(taken(sync.audienceId).sort()).toEqual(hashes)
  }, 60_000)

  it('members that left the list are removed from the audience', async () => {
    const { organizationId } = await installed('searchAds', 'Removals Co')
    await select(organizationId, 'searchAds', '111')
    const hashes = await contacts('Remover', 4)
    const ids = await syncedList(organizationId, 'Remover', 'searchAds')
    const first = await refreshedRun(organizationId, ids, 1)
    const audienceId = first.actions[0].sync.audienceId
    expect([...ads.audiences.get(audienceId)!.members].sort()).toEqual(hashes)
    // One contact changes jobs: it leaves the list.
    const at = new Date().toISOString()
    await h.store.insert('contacts', [
      {
        id: 'Remover-2',
        email: 'Remover2@Sync.test',
        job_title: 'Florist',
        created_at: at,
        updated_at: at,
        version: 2,
      },
    ])
    const second = await refreshedRun(organizationId, ids, 2)
    expect(second.status, JSON.stringify(second)).toBe('success')
    expect(second.actions[0].detail).toContain('added 0 and removed 1')
    expect(taken(audienceId, '/members/remove')).toEqual([sha('remover2@sync.test')])
    expect(ads.audiences.get(audienceId)!.members.has(sha('remover2@sync.test'))).toBe(false)
    expect(ads.audiences.get(audienceId)!.members.size).toBe(3)
    const list = (await api('GET', `/lists/${ids.listId}`)).json()
    expect(list.lastAudienceSync).toMatchObject({ status: 'success', sent: 0, removed: 1 })
    // Back on the list: added again.
    await h.store.insert('contacts', [
      {
        id: 'Remover-2',
        email: 'Remover2@Sync.test',
        job_title: 'Remover',
        created_at: at,
        updated_at: at,
        version: 3,
      },
    ])
    const third = await refreshedRun(organizationId, ids, 3)
    expect(third.actions[0].detail).toContain('added 1 and removed 0')
    expect([...ads.audiences.get(audienceId)!.members].sort()).toEqual(hashes)
  }, 60_000)

  it('a platform refusing the refreshed token too asks the organization to reconnect', async () => {
    const { organizationId } = await installed('searchAds', 'Revoked Grant Co')
    await select(organizationId, 'searchAds', '111')
    await contacts('Reauther', 2)
    const ids = await syncedList(organizationId, 'Reauther', 'searchAds')
    const refreshes = tokenRequests.filter((r) => r.grant_type === 'refresh_token').length
    ads.refuseTokens(true)
    try {
      const run = await refreshedRun(organizationId, ids, 1)
      expect(run.status).toBe('failed')
      expect(run.actions[0].detail).toContain('install the integration again')
    } finally {
      ads.refuseTokens(false)
    }
    expect(tokenRequests.filter((r) => r.grant_type === 'refresh_token').length).toBe(refreshes + 1)
    expect((await api('GET', `/integrations/${organizationId}`)).json()[0].status).toBe(
      'reauthorization_required',
    )
  }, 60_000)
})

/**
 * The tests' own AdsPlatform, over the local API: it lists no accounts (ids look like
 * 123-456-7890), takes 2 members a request, wants extra authorization parameters, keeps the
 * exchanged tokens through `keepTokens`, and reads requests back (`GET /requests/{id}`).
 */
function testPlatform(apiUrl: string, positions: BatchPosition[], kept: string[]): AdsPlatform {
  const call = async (token: string, method: string, path: string, body?: object) => {
    const response = await fetch(`${apiUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body ? { body: JSON.stringify(body) } : {}),
    })
    const answer = (await response.json()) as Record<string, unknown>
    if (response.status === 401) throw new AdsPlatformError('reauthorize', 'the token was refused')
    if (!response.ok) {
      const kind = response.status === 429 ? 'retry_later' : 'report'
      throw new AdsPlatformError(kind, String(answer.error), { status: response.status })
    }
    return answer
  }
  const members = async (token: string, audienceId: string, hashes: readonly string[], remove: boolean) => {
    const path = `/audiences/${audienceId}/members${remove ? '/remove' : ''}`
    const answer = await call(token, 'POST', path, { schema: 'EMAIL_SHA256', data: hashes })
    return {
      sent: hashes.length,
      received: answer.received as number,
      invalid: answer.invalid as number,
      requestId: answer.requestId as string,
    }
  }
  return {
    name: 'test',
    maxBatch: 2,
    authorizationParams: { access_type: 'offline', prompt: 'consent' },
    async keepTokens(tokens) {
      kept.push(tokens.accessToken)
      return tokens
    },
    listAccounts: async () => undefined,
    isAccountId: (id) => /^\d{3}-\d{3}-\d{4}$/.test(id),
    createAudience: async (token, accountId, name) =>
      String((await call(token, 'POST', `/accounts/${accountId}/audiences`, { name })).id),
    async addMembers(token, target, hashes, position) {
      positions.push(position)
      return members(token, target.audienceId, hashes, false)
    },
    removeMembers: (token, target, hashes) => members(token, target.audienceId, hashes, true),
    async requestStatus(token, requestId) {
      const answer = await call(token, 'GET', `/requests/${requestId}`)
      return { state: 'succeeded', matched: answer.matched as number }
    },
  }
}
