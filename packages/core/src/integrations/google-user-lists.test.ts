// A list name already used on the Google Ads account (DISPLAY_NAME_ALREADY_USED): the adapter finds
// the list of that name with Data Manager's ListUserLists and reuses it, so a flow deleted and made
// again, or two flows of one list, fill one Customer Match list. Against the local Data Manager
// API, which answers the name conflict and the listing as documented.
import {
  type GoogleDataManagerServer,
  googleFailures,
  startGoogleDataManagerServer,
} from '@visitor-id/testing/google-data-manager-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AdsPlatform, AdsPlatformError } from './ads-platform.js'
import { createGoogleAdsPlatform } from './google-data-manager.js'
import { displayNameFilter } from './google-user-lists.js'

const account = '1234567890'
const consent = { adUserData: 'CONSENT_GRANTED' } as const
const listsPath = `/v1/accountTypes/GOOGLE_ADS/accounts/${account}/userLists`

let google: GoogleDataManagerServer
let ads: AdsPlatform

beforeAll(async () => {
  google = await startGoogleDataManagerServer({ accounts: [account] })
  ads = createGoogleAdsPlatform({ apiUrl: google.apiUrl, consent })
})
afterAll(() => google.close())

async function failure(call: Promise<unknown>): Promise<AdsPlatformError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(AdsPlatformError)
  return error as AdsPlatformError
}

const nameTaken = () =>
  googleFailures.invalidArgument(
    'display_name',
    'DISPLAY_NAME_ALREADY_USED',
    'The display name is already being used for another user list for the account.',
  )
const named = (name: string) => google.userLists(account).filter((l) => l.displayName === name)

describe('the Google adapter: a list name already used on the account', () => {
  it('escapes quotes and backslashes in the filter, as Google documents its strings', () => {
    expect(displayNameFilter('list 1')).toBe('display_name = "list 1"')
    expect(displayNameFilter('Say "hi" \\ bye')).toBe('display_name = "Say \\"hi\\" \\\\ bye"')
  })

  it('reuses the list of that name: the conflict, then one documented ListUserLists call', async () => {
    const made = await ads.createAudience(google.token, account, 'Returning visitors')
    const before = google.requests.length
    expect(await ads.createAudience(google.token, account, ' Returning visitors ')).toBe(made)
    const calls = google.requests.slice(before)
    expect(calls.map((c) => [c.method, c.path, c.status])).toEqual([
      ['POST', listsPath, 400],
      ['GET', listsPath, 200],
    ])
    expect(calls[1]!.query).toEqual({ filter: 'display_name = "Returning visitors"', pageSize: '100' })
    expect(named('Returning visitors')).toHaveLength(1)
  })

  it('finds a name with quotes and backslashes, and not a list whose name only contains it', async () => {
    const name = 'Said "yes" \\ maybe'
    await ads.createAudience(google.token, account, `${name} (old)`)
    const made = await ads.createAudience(google.token, account, name)
    expect(await ads.createAudience(google.token, account, name)).toBe(made)
    expect(google.requests.at(-1)!.query.filter).toBe('display_name = "Said \\"yes\\" \\\\ maybe"')
  })

  it("reports Google's refusal when no list of that name is found", async () => {
    // Google said the name is taken, but the listing shows no such list (deleted in between).
    google.failNext(nameTaken())
    const error = await failure(ads.createAudience(google.token, account, 'Vanished'))
    expect(error).toMatchObject({
      kind: 'report',
      details: { status: 400, code: 'DISPLAY_NAME_ALREADY_USED' },
    })
    expect(error.message).toMatch(/display name is already being used/)
    expect(named('Vanished')).toEqual([])
  })

  it('reports a name held by a list of another kind, which contact uploads cannot fill', async () => {
    const other = google.addOtherUserList(account, 'Website visitors')
    const error = await failure(ads.createAudience(google.token, account, 'Website visitors'))
    expect(error).toMatchObject({ kind: 'report', details: { code: 'DISPLAY_NAME_ALREADY_USED' } })
    expect(error.message).toContain(`not a Customer Match contact list (list ${other})`)
  })

  it("passes on the listing's own failure (a rate limit waits and resumes)", async () => {
    google.failNext(nameTaken(), googleFailures.rateLimited({ retryAfterSeconds: 7 }))
    const before = google.requests.length
    const error = await failure(ads.createAudience(google.token, account, 'Throttled'))
    expect(google.requests.slice(before).map((c) => [c.method, c.status])).toEqual([
      ['POST', 400],
      ['GET', 429],
    ])
    expect(error).toMatchObject({ kind: 'retry_later', details: { retryAfterMs: 7000 } })
  })

  it('follows nextPageToken with the same filter until the exact name', async () => {
    const seen: URL[] = []
    const pages: Record<string, object> = {
      '': { userLists: [{ id: '11', displayName: 'SEGMENT' }], nextPageToken: 'page-2' },
      'page-2': {
        userLists: [
          {
            name: `accountTypes/GOOGLE_ADS/accounts/${account}/userLists/22`,
            displayName: 'Segment',
            ingestedUserListInfo: { uploadKeyTypes: ['CONTACT_ID'] },
          },
        ],
      },
    }
    const paging = createGoogleAdsPlatform({
      apiUrl: google.apiUrl,
      consent,
      fetch: (async (input: string | URL, init?: RequestInit) => {
        const url = new URL(String(input))
        if (init?.method !== 'GET') return fetch(input, init)
        seen.push(url)
        return Response.json(pages[url.searchParams.get('pageToken') ?? '']!)
      }) as typeof fetch,
    })
    await ads.createAudience(google.token, account, 'Segment')
    expect(await paging.createAudience(google.token, account, 'Segment')).toBe('22')
    expect(seen.map((u) => [u.searchParams.get('filter'), u.searchParams.get('pageToken')])).toEqual([
      ['display_name = "Segment"', null],
      ['display_name = "Segment"', 'page-2'],
    ])
  })

  it('reuses a list of that name only when it was made from the same list (its origin in the description)', async () => {
    const made = await ads.createAudience(google.token, account, 'Decision makers', 'list_aaa')
    expect(named('Decision makers')[0]).toMatchObject({
      description: 'Customer list kept in sync by visitor-id (from list_aaa)',
    })
    expect(await ads.createAudience(google.token, account, 'Decision makers', 'list_aaa')).toBe(made)
    const other = await failure(ads.createAudience(google.token, account, 'Decision makers', 'list_bbb'))
    expect(other.kind).toBe('report')
    expect(other.message).toContain(`(list ${made}) was not made from this list`)
    expect(other.message).toContain('audienceName')
    expect(named('Decision makers')).toHaveLength(1)
  })
})
