// Integrations end to end on a real server: the OAuth 2.0 flow against a real OAuth 2.0 server in the
// test (oauth2-mock-server, which checks the PKCE verifier itself), state checks, tokens sealed at
// rest, account selection, the installer link, token refresh and a revoked refresh token; flows
// triggered by a list refresh that sync the list's hashed emails in batches to a local HTTP server
// standing in for the ads API, and a flow that calls a signed webhook; disconnection.
import { createHash, createHmac } from 'node:crypto'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { appendEvents, eventIdOf } from '@visitor-id/core/events'
import { errorBody, type Harness, startHarness } from '@visitor-id/testing/harness'
import { until } from '@visitor-id/testing/until'
import { OAuth2Server } from 'oauth2-mock-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

let h: Harness
let oauth: OAuth2Server
let ads: Server
let hooks: Server
const publicUrl = 'https://app.visitor-id.test'

/** What the ads API stand-in saw. */
const adsSeen = {
  tokens: [] as string[],
  audiences: [] as { account: string; name: string }[],
  batches: [] as string[][],
}
/** Set to make the ads API refuse the next call with 401 (a token revoked on its side). */
let refuseNext = false
/** What the token endpoint saw, and whether refresh grants are refused. */
const tokenRequests: Record<string, string>[] = []
let revokeRefresh = false
let shortTokens = false
const hookCalls: { headers: IncomingHttpHeaders; raw: string }[] = []

function startAds(): Promise<Server> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const token = String(request.headers.authorization ?? '').replace(/^Bearer /, '')
      adsSeen.tokens.push(token)
      const json = (status: number, body: object) => {
        response.writeHead(status, { 'content-type': 'application/json' })
        response.end(JSON.stringify(body))
      }
      if (!token || refuseNext) {
        refuseNext = false
        return json(401, { error: 'unauthorized' })
      }
      const url = request.url ?? ''
      if (request.method === 'GET' && url === '/ads/accounts') {
        return json(200, {
          accounts: [
            { id: '111', name: 'Acme Ads' },
            { id: '222', name: 'Acme Ads EU' },
          ],
        })
      }
      const audience = url.match(/^\/ads\/accounts\/([^/]+)\/audiences$/)
      if (request.method === 'POST' && audience) {
        adsSeen.audiences.push({
          account: audience[1]!,
          name: JSON.parse(Buffer.concat(chunks).toString()).name,
        })
        return json(200, { id: `aud_${adsSeen.audiences.length}` })
      }
      if (request.method === 'POST' && /^\/ads\/audiences\/[^/]+\/members$/.test(url)) {
        const body = JSON.parse(Buffer.concat(chunks).toString()) as { schema: string; data: string[] }
        expect(body.schema).toBe('EMAIL_SHA256')
        adsSeen.batches.push(body.data)
        return json(200, { received: body.data.length })
      }
      json(404, { error: 'not found' })
    })
  })
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)))
}

beforeAll(async () => {
  oauth = new OAuth2Server()
  await oauth.issuer.keys.generate('RS256')
  await oauth.start(0, '127.0.0.1')
  oauth.service.on(
    'beforeResponse',
    (
      response: { body: Record<string, unknown>; statusCode: number },
      request: { body: Record<string, string> },
    ) => {
      tokenRequests.push(request.body)
      if (request.body.grant_type === 'refresh_token' && revokeRefresh) {
        response.statusCode = 400
        response.body = { error: 'invalid_grant', error_description: 'refresh token revoked' }
      } else if (shortTokens) response.body.expires_in = 30
    },
  )
  ads = await startAds()
  hooks = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      hookCalls.push({ headers: request.headers, raw: Buffer.concat(chunks).toString() })
      response.end('ok')
    })
  })
  await new Promise<void>((resolve) => hooks.listen(0, '127.0.0.1', resolve))
  const issuer = oauth.issuer.url!
  h = await startHarness({
    PUBLIC_URL: publicUrl,
    SEARCH_ADS_NAME: 'Search Ads Test',
    SEARCH_ADS_CLIENT_ID: 'visitor-id-app',
    SEARCH_ADS_CLIENT_SECRET: 'visitor-id-app-secret',
    SEARCH_ADS_AUTHORIZE_URL: `${issuer}/authorize`,
    SEARCH_ADS_TOKEN_URL: `${issuer}/token`,
    SEARCH_ADS_API_URL: `http://127.0.0.1:${(ads.address() as AddressInfo).port}/ads`,
    SEARCH_ADS_SCOPES: 'ads.read audiences.write',
    AUDIENCE_BATCH_SIZE: '2',
    ICP_RESCORE_INTERVAL_MS: '300',
  })
})

afterAll(async () => {
  await h?.stop()
  await oauth?.stop()
  for (const server of [ads, hooks]) {
    server?.closeAllConnections()
    await new Promise((resolve) => server?.close(resolve))
  }
})

const api = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) =>
  h.request({ method, url: `/api/v1${url}`, ...(payload ? { payload } : {}) })

/** The user authorizes on the provider's page; the browser comes back to our callback. */
async function authorize(url: string) {
  const answer = await fetch(url, { redirect: 'manual' })
  expect(answer.status).toBe(302)
  const back = new URL(answer.headers.get('location')!)
  expect(`${back.origin}${back.pathname}`).toBe(`${publicUrl}/integrations/callback/searchAds`)
  return back
}

const callback = (back: URL) => h.server.app.inject({ method: 'GET', url: `${back.pathname}${back.search}` })

const sha = (text: string) => createHash('sha256').update(text).digest('hex')

/** A contact `audience-N` with the email `PersonN@Audience.test ` (normalized before hashing). */
async function addContact(id: string) {
  const at = new Date().toISOString()
  const n = id.replace('audience-', '')
  await h.store.insert('contacts', [
    { id, email: `Person${n}@Audience.test `, created_at: at, updated_at: at, version: 1 },
  ])
}

async function subOrganization(name: string): Promise<string> {
  return (await api('POST', '/organization', { organizationName: name })).json().id
}

async function install(organizationId: string) {
  const { url } = (
    await api(
      'GET',
      `/integrations/request-install?integrationType=searchAds&organizationId=${organizationId}`,
    )
  ).json()
  const page = await callback(await authorize(url))
  expect(page.body).toContain('Connected')
  return url as string
}

describe('integrations', () => {
  it('request-install: PKCE S256, a state, our callback; an unconfigured type says how to configure it', async () => {
    const response = await api('GET', '/integrations/request-install?integrationType=searchAds')
    expect(response.statusCode, response.body).toBe(200)
    const url = new URL(response.json().url)
    expect(url.origin).toBe(oauth.issuer.url)
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      response_type: 'code',
      client_id: 'visitor-id-app',
      redirect_uri: `${publicUrl}/integrations/callback/searchAds`,
      scope: 'ads.read audiences.write',
      code_challenge_method: 'S256',
    })
    expect(url.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(url.searchParams.get('state')).toMatch(/^[0-9a-f]{48}$/)
    const social = await api('GET', '/integrations/request-install?integrationType=socialAds')
    expect(social.json()).toMatchObject(errorBody(409, 'integration_not_configured'))
    expect(social.json().message).toContain('SOCIAL_ADS_CLIENT_ID')
    expect((await api('GET', '/integrations/request-install?integrationType=tiktok')).statusCode).toBe(400)
  })

  it('the whole OAuth flow: code for tokens with the PKCE verifier, accounts listed, tokens sealed at rest', async () => {
    const organizationId = await subOrganization('Installs Inc')
    const url = await install(organizationId)
    const exchange = tokenRequests.findLast((r) => r.grant_type === 'authorization_code')!
    const challenge = createHash('sha256').update(exchange.code_verifier!).digest('base64url')
    expect(challenge).toBe(new URL(url).searchParams.get('code_challenge'))
    const [integration] = (await api('GET', `/integrations/${organizationId}`)).json()
    expect(integration).toMatchObject({
      type: 'searchAds',
      name: 'Search Ads Test',
      configured: true,
      installed: true,
      status: 'connected',
      // A grant with a refresh token renews itself: no end to show.
      expiresAt: null,
      adsAccounts: [
        { id: '111', name: 'Acme Ads' },
        { id: '222', name: 'Acme Ads EU' },
      ],
      accountIdEntry: false,
      selectedAdsAccount: null,
    })
    // The access token the ads API saw is nowhere in the store in clear.
    const [row] = await h.store.query<{ access_token: string; refresh_token: string }>(
      'SELECT access_token, refresh_token FROM integrations FINAL WHERE organization_id = {organizationId:UUID}',
      { organizationId },
    )
    const seen = adsSeen.tokens.at(-1)!
    expect(seen.length).toBeGreaterThan(20)
    expect(row!.access_token).toMatch(/^v1\./)
    expect(row!.access_token).not.toContain(seen)
    expect(JSON.stringify(row)).not.toContain(exchange.code!)

    expect(
      (
        await api('POST', '/integrations/account/select', {
          organizationId,
          integrationType: 'searchAds',
          accountId: '999',
        })
      ).json(),
    ).toMatchObject(errorBody(400, 'unknown_ads_account'))
    const selected = await api('POST', '/integrations/account/select', {
      organizationId,
      integrationType: 'searchAds',
      accountId: '222',
    })
    expect(selected.json().selectedAdsAccount).toEqual({ id: '222', name: 'Acme Ads EU' })
  })

  it('refuses a forged state, a replayed callback and a declined authorization, storing nothing', async () => {
    const organizationId = await subOrganization('Forged state')
    const { url } = (
      await api(
        'GET',
        `/integrations/request-install?integrationType=searchAds&organizationId=${organizationId}`,
      )
    ).json()
    const back = await authorize(url)
    const forged = new URL(back)
    forged.searchParams.set('state', 'f'.repeat(48))
    expect((await callback(forged)).body).toContain('unknown or expired')
    const declined = new URL(back)
    declined.searchParams.delete('code')
    declined.searchParams.set('error', 'access_denied')
    expect((await callback(declined)).body).toContain('did not authorize')
    // The state was used by the declined answer: the real code cannot be brought with it any more.
    expect((await callback(back)).body).toContain('unknown or expired')
    expect((await api('GET', `/integrations/${organizationId}`)).json()[0]).toMatchObject({
      installed: false,
      status: 'not_installed',
    })
  })

  it('a flow on a list refresh syncs its hashed emails in batches, refreshing tokens; a revoked refresh token stops it', async () => {
    const organizationId = await subOrganization('Audience Co')
    // Tokens expire within the refresh margin: every use refreshes first.
    shortTokens = true
    await install(organizationId)
    await api('POST', '/integrations/account/select', {
      organizationId,
      integrationType: 'searchAds',
      accountId: '111',
    })
    // Five contacts with emails (the fixture's and these four): batches of 2, 2 and 1.
    for (const n of [1, 2, 3, 4]) await addContact(`audience-${n}`)
    const listId = await h.createList(organizationId)
    const created = await api('POST', '/integrations/flows', {
      organizationId,
      title: 'Engineers to search ads',
      nodes: {
        trigger: { type: 'list.refreshed', listId },
        actions: [
          {
            type: 'audience.sync',
            listId,
            integrationType: 'searchAds',
            audienceName: 'Visitor ID engineers',
          },
        ],
      },
    })
    expect(created.statusCode, created.body).toBe(200)
    const flow = created.json()
    expect(flow).toMatchObject({
      id: expect.stringMatching(/^flow_[0-9a-f]{24}$/),
      integrationId: 'searchAds',
    })
    expect(
      (await api('GET', `/integrations/${organizationId}/flows?integrationId=searchAds`))
        .json()
        .map((f: { id: string }) => f.id),
    ).toEqual([flow.id])
    expect(
      (await api('GET', `/integrations/${organizationId}/flows?integrationId=socialAds`)).json(),
    ).toEqual([])

    const expected = (
      await api('GET', `/lists/${listId}/chat-ads-export?organizationId=${organizationId}`)
    ).body
      .trim()
      .split(/\r\n/)
      .slice(1)
      .sort()
    expect(expected).toHaveLength(5)
    expect(expected).toContain(sha('person1@audience.test'))
    const batchesBefore = adsSeen.batches.length
    const refreshesBefore = tokenRequests.filter((r) => r.grant_type === 'refresh_token').length
    expect((await api('POST', `/lists/refresh/${listId}`)).statusCode).toBe(200)
    const run = await until(
      async () => (await api('GET', `/integrations/${organizationId}/flows/${flow.id}`)).json().runs?.[0],
    )
    expect(run, JSON.stringify(run)).toMatchObject({ status: 'success', trigger: 'list.refreshed' })
    const batches = adsSeen.batches.slice(batchesBefore)
    expect(batches.map((batch) => batch.length)).toEqual([2, 2, 1])
    expect(batches.flat().sort()).toEqual(expected)
    expect(adsSeen.audiences.at(-1)).toEqual({ account: '111', name: 'Visitor ID engineers' })
    expect(tokenRequests.filter((r) => r.grant_type === 'refresh_token').length).toBeGreaterThan(
      refreshesBefore,
    )
    expect((await api('GET', `/lists/${listId}`)).json().connectedIntegration).toBe('searchAds')

    // A new member; the ads API refuses the token once: refreshed and retried, same audience, and
    // only the new member is sent.
    await addContact('audience-5')
    refuseNext = true
    const before = adsSeen.batches.length
    await api('POST', `/lists/refresh/${listId}`)
    const second = await until(async () => {
      const runs = (await api('GET', `/integrations/${organizationId}/flows/${flow.id}`)).json().runs
      return runs.length >= 2 ? runs[0] : undefined
    })
    expect(second.status, JSON.stringify(second)).toBe('success')
    expect(second.actions[0].detail).toContain('audience aud_')
    expect(adsSeen.batches.slice(before)).toEqual([[sha('person5@audience.test')]])
    expect(adsSeen.audiences.filter((a) => a.name === 'Visitor ID engineers')).toHaveLength(1)

    // The provider revokes the refresh token: the run fails, the integration asks to install again.
    await addContact('audience-6')
    revokeRefresh = true
    await api('POST', `/lists/refresh/${listId}`)
    const third = await until(async () => {
      const runs = (await api('GET', `/integrations/${organizationId}/flows/${flow.id}`)).json().runs
      return runs.length >= 3 ? runs[0] : undefined
    })
    expect(third.status).toBe('failed')
    expect(third.actions[0].detail).toContain('install the integration again')
    expect((await api('GET', `/integrations/${organizationId}`)).json()[0].status).toBe(
      'reauthorization_required',
    )
    revokeRefresh = false
    shortTokens = false
    // Installing again connects it again, with the same account.
    await install(organizationId)
    expect((await api('GET', `/integrations/${organizationId}`)).json()[0]).toMatchObject({
      status: 'connected',
      selectedAdsAccount: { id: '111' },
    })

    // Disconnected: the tokens are gone, the next run fails and says so; the flow is deleted.
    expect((await api('DELETE', `/integrations/${organizationId}/searchAds`)).statusCode).toBe(200)
    expect((await api('GET', `/integrations/${organizationId}`)).json()[0].installed).toBe(false)
    expect((await api('DELETE', `/integrations/${organizationId}/flows/${flow.id}`)).statusCode).toBe(200)
    expect((await api('GET', `/integrations/${organizationId}/flows/${flow.id}`)).json()).toEqual(
      errorBody(404, 'flow_not_found'),
    )
  }, 60_000)

  it('an installer token starts the authorization once, without an API key', async () => {
    const organizationId = await subOrganization('Installer Ltd')
    const token = await api('POST', '/integrations/integrator/token', {
      organizationId,
      integrationType: 'searchAds',
    })
    expect(token.statusCode, token.body).toBe(200)
    const { installUrl, expiresAt } = token.json()
    expect(Date.parse(expiresAt) - Date.now()).toBeGreaterThan(14 * 60_000)
    const link = new URL(installUrl)
    expect(link.origin).toBe(publicUrl)
    const first = await h.server.app.inject({ method: 'GET', url: `${link.pathname}${link.search}` })
    expect(first.statusCode).toBe(302)
    const page = await callback(await authorize(String(first.headers.location)))
    expect(page.body).toContain('Connected')
    expect((await api('GET', `/integrations/${organizationId}`)).json()[0].installed).toBe(true)
    const again = await h.server.app.inject({ method: 'GET', url: `${link.pathname}${link.search}` })
    expect(again.statusCode).toBe(200)
    expect(again.body).toContain('not valid')
  })

  it('a flow on visitor.identified calls a signed webhook; bad nodes are 400 naming the path', async () => {
    const organizationId = await subOrganization('Hooked')
    const url = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/flow`
    const secret = 'a-flow-webhook-secret'
    const created = await api('POST', '/integrations/flows', {
      organizationId,
      title: 'Tell the CRM',
      nodes: { trigger: { type: 'visitor.identified' }, actions: [{ type: 'webhook.call', url, secret }] },
    })
    expect(created.json().nodes.actions).toEqual([{ type: 'webhook.call', url, hasSecret: true }])
    // `nodes` is optional (spec): such a flow is kept and runs nothing.
    const bare = await api('POST', '/integrations/flows', { organizationId, title: 'Not wired yet' })
    expect(bare.statusCode, bare.body).toBe(200)
    expect(bare.json()).toMatchObject({ title: 'Not wired yet', nodes: null, integrationId: null })
    const visitorId = crypto.randomUUID()
    const eventId = eventIdOf('visitor.identified', organizationId, visitorId)
    await appendEvents(h.store, [
      {
        event_id: eventId,
        type: 'visitor.identified',
        organization_id: organizationId,
        visitor_id: visitorId,
        payload: JSON.stringify({ event_type: 'visitor.identified', visitor: { id: visitorId } }),
        created_at: new Date().toISOString(),
      },
    ])
    const call = await until(() => hookCalls.find((c) => c.headers['x-service-event-id'] === eventId))
    expect(call.headers['x-service-signature']).toBe(
      createHmac('sha256', secret).update(call.raw).digest('hex'),
    )
    expect(JSON.parse(call.raw)).toMatchObject({
      event_type: 'visitor.identified',
      flow_id: created.json().id,
      event: { visitor: { id: visitorId } },
    })
    // The bare flow (newer, so considered first for the same event) ran nothing.
    const bareRead = await h.request({
      url: `/api/v1/integrations/${organizationId}/flows/${bare.json().id}`,
    })
    expect(bareRead.json()).toMatchObject({ nodes: null, runs: [] })
    const listed = await h.request({ url: `/api/v1/integrations/${organizationId}/flows` })
    expect(listed.json().map((f: { id: string }) => f.id)).toContain(bare.json().id)

    const other = await h.createTenant()
    const otherList = await h.createList(other.organizationId)
    for (const [nodes, path] of [
      [
        { trigger: { type: 'list.refreshed', listId: otherList }, actions: [{ type: 'webhook.call', url }] },
        'nodes.trigger.listId',
      ],
      [{ trigger: { type: 'visitor.identified' }, actions: [] }, 'nodes.actions'],
      [{ trigger: { type: 'page.viewed' }, actions: [{ type: 'webhook.call', url }] }, 'nodes.trigger.type'],
      [
        {
          trigger: { type: 'visitor.identified' },
          actions: [{ type: 'audience.sync', listId: otherList, integrationType: 'searchAds' }],
        },
        'nodes.actions.0.listId',
      ],
      [
        {
          trigger: { type: 'visitor.identified' },
          actions: [{ type: 'webhook.call', url: 'ftp://x.test/' }],
        },
        'nodes.actions.0.url',
      ],
    ] as const) {
      const response = await api('POST', '/integrations/flows', { organizationId, title: 'Bad', nodes })
      expect(response.statusCode, JSON.stringify(nodes)).toBe(400)
      expect(response.json().details.issues.map((i: { path: string }) => i.path)).toContain(path)
    }
    // Another organization's flow is not found.
    const mine = created.json().id
    const theirs = await h.request({
      url: `/api/v1/integrations/${other.organizationId}/flows/${mine}`,
      key: other.key,
    })
    expect(theirs.json()).toEqual(errorBody(404, 'flow_not_found'))
  }, 30_000)

  it('a flow on icp.matched runs once per visitor when new activity makes it a match', async () => {
    const organizationId = await subOrganization('ICP flows')
    const url = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/icp`
    const config = await api('POST', `/organizations/${organizationId}/icp-configs`, {
      name: 'German visitors',
      filter: { company: { countries: ['DE'] } },
    })
    expect(config.statusCode, config.body).toBe(201)
    const flow = await api('POST', '/integrations/flows', {
      organizationId,
      title: 'Tell sales about German visitors',
      nodes: {
        trigger: { type: 'icp.matched', icpSlug: 'german-visitors' },
        actions: [{ type: 'webhook.call', url }],
      },
    })
    expect(flow.statusCode, flow.body).toBe(200)
    // New activity of a visitor of a German company: the incremental pass scores it a match.
    const companyId = await h.seedCompany({ name: 'Berlin GmbH', domain: 'berlin.test', country: 'DE' })
    const { visitorId } = await h.seedVisitor(organizationId, 2, { country: 'DE', companyId })
    const call = await until(
      () =>
        hookCalls.find(
          (c) => c.raw.includes(visitorId) && c.headers['x-service-event-type'] === 'icp.matched',
        ),
      20_000,
    )
    expect(JSON.parse(call.raw)).toMatchObject({
      event_type: 'icp.matched',
      flow_id: flow.json().id,
      event: { icp_slug: 'german-visitors', visitor_id: visitorId },
    })
    // More activity of the same visitor: still a match, no second event.
    await h.seedVisitor(organizationId, 1, { visitorId, country: 'DE', companyId })
    await new Promise((resolve) => setTimeout(resolve, 2_000))
    expect(hookCalls.filter((c) => c.raw.includes(visitorId))).toHaveLength(1)
  }, 40_000)
})
