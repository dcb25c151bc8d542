// The fake Graph API refuses what Meta refuses, in Meta's error bodies: raw requests, no adapter, so
// a test that passes against it passes for the right reason.
import { createHash, createHmac } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type MetaGraphServer, maxRecordsPerRequest, startMetaGraphServer } from './meta-graph-server.js'

let meta: MetaGraphServer
let token: string
let audienceId: string

beforeAll(async () => {
  meta = await startMetaGraphServer()
  token = meta.issueToken()
  const created = await call('POST', '/act_1000000001/customaudiences', {
    name: 'Fake checks',
    subtype: 'CUSTOM',
    customer_file_source: 'USER_PROVIDED_ONLY',
  })
  audienceId = (created.body as { id: string }).id
})
afterAll(() => meta.close())

const hash = (i: number) => createHash('sha256').update(`p${i}@example.com`).digest('hex')
const proof = (user: string) => createHmac('sha256', meta.appSecret).update(user).digest('hex')

async function call(method: string, path: string, params: Record<string, string>, user = token) {
  const form = new URLSearchParams({ ...params, access_token: user, appsecret_proof: proof(user) })
  const url = `${meta.url}/${meta.version}${path}`
  const response =
    method === 'GET'
      ? await fetch(`${url}?${form}`)
      : await fetch(url, {
          method,
          body: form,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

const users = (data: unknown, session?: object, method = 'POST') =>
  call(method, `/${audienceId}/users`, {
    payload: JSON.stringify({ schema: 'EMAIL_SHA256', data }),
    ...(session ? { session: JSON.stringify(session) } : {}),
  })

const errorOf = (answer: { body: Record<string, unknown> }) => answer.body.error as Record<string, unknown>

describe('the fake Graph API', () => {
  it('answers Meta’s 2500 for another version, with a trace id', async () => {
    const response = await fetch(`${meta.url}/v2.80/me/adaccounts`)
    expect(response.status).toBe(400)
    expect(await response.json()).toEqual({
      error: {
        message: 'Unknown path components: /v2.80/me/adaccounts',
        type: 'OAuthException',
        code: 2500,
        fbtrace_id: expect.any(String),
      },
    })
  })

  it('counts malformed hashes as invalid entries instead of refusing the batch', async () => {
    const answer = await users([hash(1), 'not-a-hash', hash(2).toUpperCase()])
    expect(answer.body).toMatchObject({ audience_id: audienceId, num_received: 3, num_invalid_entries: 2 })
    expect(meta.members(audienceId)).toEqual([hash(1)])
  })

  it('takes a single-key schema’s data as strings only, and at most 10,000 of them', async () => {
    expect(errorOf(await users([[hash(1)]]))).toMatchObject({
      code: 100,
      message: expect.stringMatching(/list of strings/),
    })
    expect(errorOf(await users([]))).toMatchObject({ code: 100 })
    const tooMany = Array.from({ length: maxRecordsPerRequest + 1 }, (_, i) => hash(i))
    expect(errorOf(await users(tooMany))).toMatchObject({
      code: 100,
      message: expect.stringMatching(/at most 10000/),
    })
    const wrongSchema = await call('POST', `/${audienceId}/users`, {
      payload: '{"schema":"EMAIL","data":["x"]}',
    })
    expect(errorOf(wrongSchema)).toMatchObject({
      code: 100,
      message: expect.stringMatching(/payload.schema/),
    })
  })

  it('keeps a session’s batches in order and closes it with the last', async () => {
    const session = (batch_seq: number, last_batch_flag = false) => ({
      session_id: 42,
      batch_seq,
      last_batch_flag,
    })
    expect(errorOf(await users([hash(3)], session(2)))).toMatchObject({
      message: expect.stringMatching(/expects 1/),
    })
    expect((await users([hash(3)], session(1))).body).toMatchObject({ session_id: 42, num_received: 1 })
    expect(errorOf(await users([hash(4)], session(3)))).toMatchObject({
      message: expect.stringMatching(/expects 2/),
    })
    await users([hash(4)], session(2, true))
    expect(errorOf(await users([hash(5)], session(3)))).toMatchObject({
      message: expect.stringMatching(/has ended/),
    })
    expect(
      errorOf(await users([hash(5)], { session_id: 'x', batch_seq: 1, last_batch_flag: true })),
    ).toMatchObject({
      code: 100,
    })
    // A DELETE session is another session, even with the same id.
    expect((await users([hash(3)], session(1, true), 'DELETE')).status).toBe(200)
  })

  it('refuses a call without a token, and a code used twice', async () => {
    const response = await fetch(`${meta.url}/${meta.version}/me/adaccounts`)
    expect(await response.json()).toMatchObject({ error: { code: 104 } })
    const redirectUri = 'https://app.example.com/cb'
    const code = meta.issueCode({ redirectUri })
    const exchange = () =>
      fetch(
        `${meta.url}/${meta.version}/oauth/access_token?${new URLSearchParams({
          client_id: meta.appId,
          client_secret: meta.appSecret,
          redirect_uri: redirectUri,
          code,
        })}`,
      ).then((r) => r.json())
    expect(await exchange()).toEqual({
      access_token: expect.stringMatching(/^EAA/),
      token_type: 'bearer',
      expires_in: 7200,
    })
    expect(await exchange()).toMatchObject({ error: { code: 100, error_subcode: 36009 } })
  })

  it("refuses an expired code and another redirect URI in Meta's error shape, status 400", async () => {
    const redirectUri = 'https://app.example.com/cb'
    const exchange = async (code: string, redirect = redirectUri) => {
      const response = await fetch(`${meta.url}/${meta.version}/oauth/access_token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          client_id: meta.appId,
          client_secret: meta.appSecret,
          redirect_uri: redirect,
          code,
        }),
      })
      return { status: response.status, body: await response.json() }
    }
    const elsewhere = await exchange(meta.issueCode({ redirectUri }), 'https://other.example.com/cb')
    expect(elsewhere.status).toBe(400)
    expect(elsewhere.body.error).toMatchObject({ type: 'OAuthException', code: 100, error_subcode: 36008 })
    const code = meta.issueCode({ redirectUri })
    meta.advanceClock(10 * 60_000 + 1000)
    expect(await exchange(code)).toEqual({
      status: 400,
      body: {
        error: {
          message: 'This authorization code has expired.',
          type: 'OAuthException',
          code: 100,
          error_subcode: 36007,
          fbtrace_id: expect.any(String),
        },
      },
    })
  })

  it('redirects a declined login with Meta’s error parameters', async () => {
    meta.declineNextLogin()
    const query = new URLSearchParams({
      client_id: meta.appId,
      redirect_uri: 'https://app.example.com/cb',
      state: 's',
    })
    const response = await fetch(`${meta.url}/${meta.version}/dialog/oauth?${query}`, { redirect: 'manual' })
    const location = new URL(response.headers.get('location')!)
    expect(Object.fromEntries(location.searchParams)).toEqual({
      error: 'access_denied',
      error_code: '200',
      error_description: 'Permissions error',
      error_reason: 'user_denied',
      state: 's',
    })
  })
})
