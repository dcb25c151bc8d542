// socialAds on Meta's Custom Audiences, end to end on a real server: SOCIAL_ADS_PLATFORM=meta picks
// the Graph API adapter (the composition root), the installation goes through a local Graph API
// that plays Facebook Login (the dialog, the code exchange, the long-lived token trade), the ad
// accounts are listed from it, and a list's sync reaches its Custom Audiences endpoints. Asserted
// on what that server received: the long-lived token used, the audience, the members in one
// upload session, `appsecret_proof`, and a throttled upload resumed without a member sent twice.
// A code Meta refuses at the exchange (expired, used) shows Meta's words on the callback page.
import { metaOAuthEndpoints } from '@visitor-id/core/integrations'
import { audienceSyncFixtures } from '@visitor-id/testing/audience-sync-fixtures'
import { type Harness, startHarness } from '@visitor-id/testing/harness'
import { type MetaGraphServer, startMetaGraphServer } from '@visitor-id/testing/meta-graph-server'
import { until } from '@visitor-id/testing/until'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

let h: Harness
let meta: MetaGraphServer

beforeAll(async () => {
  meta = await startMetaGraphServer()
  const endpoints = metaOAuthEndpoints({ graphUrl: meta.url, dialogUrl: meta.url })
  h = await startHarness({
    PUBLIC_URL: 'https://app.visitor-id.test',
    SOCIAL_ADS_PLATFORM: 'meta',
    SOCIAL_ADS_CLIENT_ID: meta.appId,
    SOCIAL_ADS_CLIENT_SECRET: meta.appSecret,
    // Meta's endpoints are the defaults; the tests point them at the local server.
    SOCIAL_ADS_AUTHORIZE_URL: endpoints.authorizeUrl,
    SOCIAL_ADS_TOKEN_URL: endpoints.tokenUrl,
    SOCIAL_ADS_API_URL: meta.url,
    AUDIENCE_BATCH_SIZE: '3',
  })
})

afterAll(async () => {
  await h?.stop()
  await meta?.close()
})

const { api, installed, select, contacts, syncedList, refreshedRun, runNumber } = audienceSyncFixtures(
  () => h,
)

/** A new organization's authorization on the login dialog: where the browser comes back to. */
async function authorization(organizationId: string): Promise<URL> {
  const { url } = (
    await api(
      'GET',
      `/integrations/request-install?integrationType=socialAds&organizationId=${organizationId}`,
    )
  ).json()
  const dialog = await fetch(url, { redirect: 'manual' })
  return new URL(dialog.headers.get('location')!)
}

const organization = async (name: string) =>
  (await api('POST', '/organization', { organizationName: name })).json().id as string

const callbackPage = async (back: URL) =>
  (await h.server.app.inject({ method: 'GET', url: `${back.pathname}${back.search}` })).body

/** The member uploads the Graph API received for an audience: the hashes of each. */
const uploads = (audienceId: string) =>
  meta.requests
    .filter((r) => r.method === 'POST' && r.path.endsWith(`/${audienceId}/users`))
    .map((r) => JSON.parse(r.params.payload!) as { schema: string; data: string[] })

describe('socialAds on Meta Custom Audiences', () => {
  it('installs through Facebook Login, keeps the long-lived token, lists the ad accounts and syncs a list in one upload session', async () => {
    const { organizationId, url } = await installed('socialAds', 'Meta Co')
    expect(url.pathname).toMatch(/\/v\d+\.\d+\/dialog\/oauth$/)
    expect(url.searchParams.get('scope')).toBe('ads_management')
    const trade = meta.requests.find((r) => r.params.grant_type === 'fb_exchange_token')
    expect(trade, 'the short-lived token is traded for a long-lived one').toBeDefined()
    const integration = (await api('GET', `/integrations/${organizationId}`)).json()[1]
    expect(integration).toMatchObject({ type: 'socialAds', status: 'connected' })
    expect(integration.adsAccounts.map((a: { id: string }) => a.id)).toEqual([
      'act_1000000001',
      'act_1000000002',
    ])
    const chosen = await select(organizationId, 'socialAds', 'act_1000000002')
    expect(chosen.statusCode, chosen.body).toBe(200)

    const hashes = await contacts('Social', 5)
    const ids = await syncedList(organizationId, 'Social', 'socialAds')
    const run = await refreshedRun(organizationId, ids, 1)
    expect(run.status, JSON.stringify(run)).toBe('success')
    const { audienceId } = run.actions[0].sync
    expect(meta.audience(audienceId)).toBeDefined()
    expect(meta.members(audienceId)).toEqual(hashes)
    expect(uploads(audienceId).map((u) => [u.schema, u.data.length])).toEqual([
      ['EMAIL_SHA256', 3],
      ['EMAIL_SHA256', 2],
    ])
    expect(run.actions[0].sync).toMatchObject({ sent: 5, received: 5, invalid: 0 })
    const sessions = meta.requests
      .filter((r) => r.method === 'POST' && r.path.endsWith(`/${audienceId}/users`))
      .map(
        (r) =>
          JSON.parse(r.params.session!) as {
            session_id: number
            batch_seq: number
            last_batch_flag: boolean
          },
      )
    expect(sessions.map((x) => [x.batch_seq, x.last_batch_flag])).toEqual([
      [1, false],
      [2, true],
    ])
    expect(sessions[1]!.session_id).toBe(sessions[0]!.session_id)
    // Every call after the login carries the app secret proof.
    for (const request of meta.requests.filter((r) => r.path.endsWith('/users'))) {
      expect(request.params.appsecret_proof).toMatch(/^[0-9a-f]{64}$/)
    }
  }, 60_000)

  it('a long-lived token within 7 days of its end asks to be reconnected; installing again renews it', async () => {
    const day = 24 * 3600
    const listed = async (organizationId: string) =>
      (await api('GET', `/integrations/${organizationId}`)).json()[1] as { status: string; expiresAt: string }
    const around = (iso: string, seconds: number) =>
      expect(Math.abs(Date.parse(iso) - (Date.now() + seconds * 1000))).toBeLessThan(60_000)
    meta.setLongLivedSeconds(3 * day)
    try {
      const { organizationId } = await installed('socialAds', 'Expiring Meta')
      const soon = await listed(organizationId)
      expect(soon.status).toBe('reconnect_soon')
      around(soon.expiresAt, 3 * day)
      // Reconnecting is installing again: a new long-lived token, connected until its own end.
      meta.setLongLivedSeconds(60 * day)
      const { url } = (
        await api(
          'GET',
          `/integrations/request-install?integrationType=socialAds&organizationId=${organizationId}`,
        )
      ).json()
      const back = new URL((await fetch(url, { redirect: 'manual' })).headers.get('location')!)
      const page = await h.server.app.inject({ method: 'GET', url: `${back.pathname}${back.search}` })
      expect(page.body).toContain('Connected')
      const renewed = await listed(organizationId)
      expect(renewed.status).toBe('connected')
      around(renewed.expiresAt, 60 * day)
      // A token past its end needs a new authorization, before any call is refused.
      meta.setLongLivedSeconds(2)
      const expired = await installed('socialAds', 'Expired Meta')
      expect((await listed(expired.organizationId)).status).toBe('reconnect_soon')
      await until(
        async () => (await listed(expired.organizationId)).status === 'reauthorization_required' || undefined,
      )
    } finally {
      meta.setLongLivedSeconds(5_183_944)
    }
  }, 60_000)

  it('a throttled upload (code 17) pauses the sync; a job resumes it without a member sent twice', async () => {
    const { organizationId } = await installed('socialAds', 'Throttled Social')
    expect((await select(organizationId, 'socialAds', 'act_1000000001')).statusCode).toBe(200)
    const hashes = await contacts('Throttled social', 7)
    const ids = await syncedList(organizationId, 'Throttled social', 'socialAds')
    meta.failNext(1, { code: 17, path: /\/users$/, headers: { 'retry-after': '1' } })
    const paused = await refreshedRun(organizationId, ids, 1)
    expect(paused.status, JSON.stringify(paused)).toBe('failed')
    const { audienceId } = paused.actions[0].sync
    expect(paused.actions[0].sync).toMatchObject({ status: 'paused' })
    const resumed = await runNumber(organizationId, ids.flowId, 2)
    expect(resumed, JSON.stringify(resumed)).toMatchObject({ status: 'success', eventId: paused.eventId })
    const sent = uploads(audienceId).flatMap((u) => u.data)
    expect(meta.members(audienceId)).toEqual(hashes)
    // Only the refused batch went twice: every other member was sent once.
    expect(sent.length).toBe(hashes.length + 3)
    expect(new Set(sent).size).toBe(hashes.length)
  }, 60_000)

  it('a sync stopped after two uploads resumes after a restart in the same upload session; no acknowledged batch is sent again', async () => {
    const { organizationId } = await installed('socialAds', 'Restarted Social')
    expect((await select(organizationId, 'socialAds', 'act_1000000001')).statusCode).toBe(200)
    const hashes = await contacts('Restarted social', 8)
    const ids = await syncedList(organizationId, 'Restarted social', 'socialAds')
    // The third upload is refused (2650: reported, not retried); the sync stops there.
    meta.failNext(1, { code: 2650, path: /\/users$/, after: 2 })
    const stopped = await refreshedRun(organizationId, ids, 1)
    expect(stopped.status, JSON.stringify(stopped)).toBe('failed')
    const sync = stopped.actions[0].sync
    expect(sync).toMatchObject({ status: 'failed', sent: 6 })
    // A new process on the same store: jobs, locks and caches of the first are gone.
    await h.restart()
    const next = await refreshedRun(organizationId, ids, 2)
    expect(next.status, JSON.stringify(next)).toBe('success')
    expect(next.actions[0].detail).toContain(`resumed ${sync.syncId} at batch 3`)
    expect(next.actions[0].sync).toMatchObject({ syncId: sync.syncId, sent: 8 })
    const calls = meta.requests.filter(
      (r) => r.method === 'POST' && r.path.endsWith(`/${sync.audienceId}/users`),
    )
    const sessions = calls.map(
      (r) =>
        JSON.parse(r.params.session!) as { session_id: number; batch_seq: number; last_batch_flag: boolean },
    )
    expect(sessions.map((x) => [x.batch_seq, x.last_batch_flag])).toEqual([
      [1, false],
      [2, false],
      [3, true],
      [3, true],
    ])
    expect(new Set(sessions.map((x) => x.session_id)).size).toBe(1)
    const batches = calls.map((r) => (JSON.parse(r.params.payload!) as { data: string[] }).data)
    // The refused third batch went again, and nothing else did.
    expect(batches[3]).toEqual(batches[2])
    expect(batches.slice(0, 2).flat().concat(batches[3]!).sort()).toEqual(hashes)
    expect(meta.members(sync.audienceId)).toEqual(hashes)
  }, 60_000)

  it("a code Meta refuses (expired, then used) shows Meta's words on the callback page; nothing is installed or shown of the secrets", async () => {
    const organizationId = await organization('Refused Social')
    const late = await authorization(organizationId)
    // The person came back after the code's 10 minutes.
    meta.advanceClock(11 * 60_000)
    const expired = await callbackPage(late)
    expect(expired).toContain('Not connected')
    expect(expired).toContain('The Meta authorization code expired before this server could use it')
    expect(expired).toContain('start the installation again')
    expect(expired).toContain('Meta: This authorization code has expired. [code 100/36007, trace ')

    // Another organization's installation used a code; replayed under a new authorization, Meta refuses it.
    const other = await authorization(await organization('Used Social'))
    expect(await callbackPage(other)).toContain('Connected')
    const again = await authorization(organizationId)
    const replayed = new URL(again)
    replayed.searchParams.set('code', other.searchParams.get('code')!)
    const used = await callbackPage(replayed)
    expect(used).toContain('This Meta authorization code was already used')
    expect(used).toContain('Meta: This authorization code has been used. [code 100/36009, trace ')

    for (const [page, back] of [
      [expired, late],
      [used, replayed],
    ] as const) {
      for (const secret of [
        back.searchParams.get('code')!,
        back.searchParams.get('state')!,
        meta.appSecret,
      ]) {
        expect(page).not.toContain(secret)
      }
    }
    const integration = (await api('GET', `/integrations/${organizationId}`)).json()[1]
    expect(integration).toMatchObject({ type: 'socialAds', installed: false, status: 'not_installed' })
  }, 60_000)
})
