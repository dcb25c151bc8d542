// The local Data Manager API holds requests to the documented shapes: raw requests that Google would
// refuse are refused here too, with Google's error bodies, so an adapter test passing means the
// adapter's requests have the documented form.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type GoogleDataManagerServer, startGoogleDataManagerServer } from './google-data-manager-server.js'

const account = '1234567890'
const hex = (n: number) => n.toString(16).padStart(64, '0')

let google: GoogleDataManagerServer
let list: string

async function call(path: string, body?: unknown, init: { method?: string; token?: string | null } = {}) {
  const token = init.token === undefined ? google.token : init.token
  const response = await fetch(`${google.apiUrl}${path}`, {
    method: init.method ?? (body === undefined ? 'GET' : 'POST'),
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  })
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as Answer,
  }
}

const userListBody = (displayName: string, extra: Record<string, unknown> = {}) => ({
  displayName,
  ingestedUserListInfo: {
    uploadKeyTypes: ['CONTACT_ID'],
    contactIdInfo: { dataSourceType: 'DATA_SOURCE_TYPE_FIRST_PARTY' },
  },
  ...extra,
})

const ingest = (extra: Record<string, unknown> = {}, members = [hex(1)]) => ({
  destinations: [
    { operatingAccount: { accountType: 'GOOGLE_ADS', accountId: account }, productDestinationId: list },
  ],
  audienceMembers: members.map((h) => ({ userData: { userIdentifiers: [{ emailAddress: h }] } })),
  encoding: 'HEX',
  termsOfService: { customerMatchTermsOfServiceStatus: 'ACCEPTED' },
  ...extra,
})

/** A success's fields, or Google's error body. */
type Answer = Record<string, unknown> & {
  id?: string
  error?: { code: number; message: string; status: string; details: { fieldViolations?: Violation[] }[] }
}
interface Violation {
  field?: string
  description: string
  reason?: string
}

/** The first field violation of the error. */
const violation = (body: Answer) => body.error?.details.find((d) => d.fieldViolations)?.fieldViolations?.[0]

beforeAll(async () => {
  google = await startGoogleDataManagerServer({ accounts: [account] })
  const created = await call(`/accountTypes/GOOGLE_ADS/accounts/${account}/userLists`, userListBody('Strict'))
  list = created.body.id!
})
afterAll(() => google.close())

describe('the local Data Manager API: authentication', () => {
  it("answers Google's 401 to a request without a token, or with one it does not take", async () => {
    for (const token of [null, 'ya29.unknown']) {
      const { status, headers, body } = await call('/audienceMembers:ingest', ingest(), { token })
      expect(status).toBe(401)
      expect(headers.get('www-authenticate')).toMatch(/^Bearer realm="https:\/\/accounts.google.com\/"/)
      expect(body.error).toMatchObject({ code: 401, status: 'UNAUTHENTICATED' })
    }
  })
})

describe('the local Data Manager API: user lists', () => {
  it('answers the created UserList, its name holding the account and the id', async () => {
    const { status, body } = await call(
      `/accountTypes/GOOGLE_ADS/accounts/${account}/userLists`,
      userListBody('Created', { membershipDuration: '2592000s' }),
    )
    expect(status).toBe(200)
    expect(body).toMatchObject({
      name: `accountTypes/GOOGLE_ADS/accounts/${account}/userLists/${body.id}`,
      membershipStatus: 'OPEN',
      membershipDuration: '2592000s',
      ingestedUserListInfo: { uploadKeyTypes: ['CONTACT_ID'] },
    })
  })

  it('refuses an unknown field, a missing name or list info, and durations that are not whole days up to 540', async () => {
    const path = `/accountTypes/GOOGLE_ADS/accounts/${account}/userLists`
    const unknown = await call(path, userListBody('A', { size: 3 }))
    expect(unknown.body.error?.message).toBe(
      'Invalid JSON payload received. Unknown name "size": Cannot find field.',
    )
    expect(violation((await call(path, { ingestedUserListInfo: {} })).body)?.reason).toBe(
      'REQUIRED_FIELD_MISSING',
    )
    expect(violation((await call(path, { displayName: 'B' })).body)?.field).toBe('ingested_user_list_info')
    expect(
      violation((await call(path, userListBody('C', { membershipDuration: '3600s' }))).body)?.reason,
    ).toBe('INVALID_ARGUMENT')
    expect(
      violation((await call(path, userListBody('D', { membershipDuration: '47520000s' }))).body)?.reason,
    ).toBe('MEMBERSHIP_DURATION_TOO_LONG')
  })
})

describe('the local Data Manager API: listing user lists', () => {
  const other = '2222222222'
  const path = `/accountTypes/GOOGLE_ADS/accounts/${other}/userLists`
  const list = (query = '') => call(`${path}${query}`)
  const names = (body: Answer) =>
    ((body.userLists ?? []) as { displayName: string }[]).map((l) => l.displayName)
  const filtered = (filter: string, extra = '') => list(`?filter=${encodeURIComponent(filter)}${extra}`)

  beforeAll(async () => {
    google.addAccount(other)
    for (let i = 1; i <= 55; i++) await call(path, userListBody(`List ${i}`))
    for (const name of ['Say "hi"', 'back\\slash', 'list 1']) await call(path, userListBody(name))
  })

  it('answers 50 lists a page unless asked, at most 1000, and the next page with its token', async () => {
    const first = await list()
    expect(first.status).toBe(200)
    expect(names(first.body)).toHaveLength(50)
    expect(names(first.body)[0]).toBe('List 1')
    const second = await list(`?pageToken=${first.body.nextPageToken}`)
    expect(names(second.body)).toEqual([
      'List 51',
      'List 52',
      'List 53',
      'List 54',
      'List 55',
      'Say "hi"',
      'back\\slash',
      'list 1',
    ])
    expect(second.body).not.toHaveProperty('nextPageToken')
    expect(names((await list('?pageSize=5000')).body)).toHaveLength(58)
    const small = await list('?pageSize=2')
    expect(names(small.body)).toEqual(['List 1', 'List 2'])
    expect(names((await list(`?pageSize=2&pageToken=${small.body.nextPageToken}`)).body)).toEqual([
      'List 3',
      'List 4',
    ])
  })

  it('refuses a page token with other parameters than its call, or one it never gave', async () => {
    const small = await list('?pageSize=2')
    const changed = await list(`?pageSize=3&pageToken=${small.body.nextPageToken}`)
    expect(changed.status).toBe(400)
    expect(violation(changed.body)).toMatchObject({ field: 'page_token', reason: 'INVALID_ARGUMENT' })
    expect((await list('?pageToken=forged')).status).toBe(400)
    expect((await list('?pageSize=-1')).status).toBe(400)
    expect((await list('?pageSize=ten')).body.error?.message).toMatch(/^Invalid value at 'page_size'/)
  })

  it('filters on the display name exactly, in snake or camel case, quotes and backslashes escaped', async () => {
    expect(names((await filtered('display_name = "list 1"')).body)).toEqual(['list 1'])
    expect(names((await filtered('displayName = "List 1"')).body)).toEqual(['List 1'])
    expect(names((await filtered('display_name = "Say \\"hi\\""')).body)).toEqual(['Say "hi"'])
    expect(names((await filtered('display_name = "back\\\\slash"')).body)).toEqual(['back\\slash'])
    const none = await filtered('display_name = "List"')
    expect(none.status).toBe(200)
    expect(none.body).toEqual({})
  })

  it('joins conditions with AND, and pages a filtered answer with the same filter', async () => {
    expect(
      names((await filtered('display_name != "List 1" AND membership_status = OPEN AND id = "x"')).body),
    ).toEqual([])
    const open = await filtered('membershipStatus = "OPEN" AND displayName != "list 1"', '&pageSize=56')
    expect(names(open.body)).toHaveLength(56)
    const rest = await filtered(
      'membershipStatus = "OPEN" AND displayName != "list 1"',
      `&pageSize=56&pageToken=${open.body.nextPageToken}`,
    )
    expect(names(rest.body)).toEqual(['back\\slash'])
  })

  it("answers Google's 400 INVALID_ARGUMENT to a filter it does not serve", async () => {
    for (const filter of [
      'display_name = "a" OR display_name = "b"',
      'size > 3',
      'display_name > "a"',
      'display_name = "a" AND displayName = "b"',
      'display_name = "unclosed',
      'display_name = "bad \\n escape"',
      '(display_name = "a")',
      'display_name =',
    ]) {
      const { status, body } = await filtered(filter)
      expect(status, filter).toBe(400)
      expect(body.error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' })
      expect(violation(body), filter).toMatchObject({ field: 'filter', reason: 'INVALID_ARGUMENT' })
    }
    expect((await list('?orderBy=id')).status).toBe(400)
  })
})

describe('the local Data Manager API: audience members', () => {
  it('refuses names the request does not have: consent and terms on a removal', async () => {
    const { termsOfService, ...removal } = ingest()
    for (const [body, name] of [
      [{ ...removal, consent: {} }, 'consent'],
      [{ ...removal, termsOfService }, 'termsOfService'],
    ] as const) {
      const { status, body: answer } = await call('/audienceMembers:remove', body)
      expect(status).toBe(400)
      expect(answer.error?.message).toBe(
        `Invalid JSON payload received. Unknown name "${name}": Cannot find field.`,
      )
    }
    expect((await call('/audienceMembers:remove', removal)).status).toBe(200)
  })

  it('refuses a missing encoding, malformed hex, a short hash, unaccepted terms and a wrong enum', async () => {
    const reasonOf = async (body: unknown) =>
      violation((await call('/audienceMembers:ingest', body)).body)?.reason
    expect(await reasonOf(ingest({ encoding: undefined }))).toBe('REQUIRED_FIELD_MISSING')
    expect(await reasonOf(ingest({}, ['zz'.repeat(32)]))).toBe('INVALID_HEX_ENCODING')
    expect(await reasonOf(ingest({}, ['ab'.repeat(31)]))).toBe('INVALID_SHA256_FORMAT')
    expect(await reasonOf(ingest({ termsOfService: undefined }))).toBe('TERMS_AND_CONDITIONS_NOT_SIGNED')
    const badEnum = await call('/audienceMembers:ingest', ingest({ consent: { adUserData: 'GRANTED' } }))
    expect(badEnum.body.error?.message).toMatch(/^Invalid value at 'consent.ad_user_data'/)
  })

  it('refuses more than 10,000 members with TOO_MANY_AUDIENCE_MEMBERS', async () => {
    const many = Array.from({ length: 10_001 }, (_, i) => hex(i))
    const { status, body } = await call('/audienceMembers:ingest', ingest({}, many))
    expect(status).toBe(400)
    expect(violation(body)).toMatchObject({ field: 'audience_members', reason: 'TOO_MANY_AUDIENCE_MEMBERS' })
  })

  it('validates only when asked, keeping no member and answering no request id', async () => {
    const { status, body } = await call('/audienceMembers:ingest', ingest({ validateOnly: true }, [hex(77)]))
    expect(status).toBe(200)
    expect(body).toEqual({})
    expect(google.members(account, list)).not.toContain(hex(77))
  })

  it('answers 404 to a path it does not serve, and records every request with the status it answered', async () => {
    const before = google.requests.length
    expect((await call('/audienceMembers:removeAll', {})).status).toBe(404)
    expect(google.requests.slice(before)).toEqual([
      {
        method: 'POST',
        path: '/v1/audienceMembers:removeAll',
        query: {},
        authorization: `Bearer ${google.token}`,
        contentType: 'application/json',
        body: {},
        status: 404,
      },
    ])
  })
})
