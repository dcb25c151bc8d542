// Phone search on the real embedded store: every transition and code of the spec's table, the
// credits (reserved, captured once on found, released otherwise), 50 concurrent searches against
// 12 credits with in-memory and with Redis coordination (two coordinations, as two processes have),
// the reveal event, the timeout sweep and resume, callbacks, auto enrichment and the dataset provider.
import { randomUUID } from 'node:crypto'
import { timeUntil } from '@visitor-id/testing/poll'
import { personVisitorRow } from '@visitor-id/testing/rows'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { OrganizationRow } from '../accounts/rows.js'
import { createMemoryCoordination } from '../coordination/index.js'
import type { Coordination } from '../coordination/ports.js'
import { createRedisCoordination } from '../coordination/redis.js'
import { creditBalance, grantCredits } from '../credits/ledger.js'
import { readEvents } from '../events/events.js'
import { createOrganization, createUser } from '../organizations/tenancy.js'
import { createRepositories, type Repositories } from '../repositories.js'
import { createStore, type Store } from '../store/client.js'
import { migrate } from '../store/migrate.js'
import type { VisitorRow } from '../visitor-tracking/rows.js'
import { createDatasetPhoneProvider } from './dataset-provider.js'
import { autoEnrichPhone } from './index.js'
import type { PhoneLookup, PhoneOutcome, PhoneProvider } from './provider.js'
import {
  acceptPhoneCallback,
  type PhoneSearchDeps,
  type PhoneSearchJob,
  type PhoneSearchRow,
  phoneSearchJobName,
  profilePhoneFields,
  readPhoneSearch,
  runPhoneSearchJob,
  startPhoneSearch,
  sweepPhoneSearches,
} from './search.js'

const tmp = tempDir('vid-phone-')
let store: Store
let repos: Repositories
let coordination: Coordination

/** The provider the tests script: an answer (or a queue of answers) per LinkedIn URL. */
const answers = new Map<string, PhoneOutcome[]>()
const asked: PhoneLookup[] = []
const scripted: PhoneProvider & { parseCallback(body: unknown): PhoneOutcome } = {
  name: 'scripted',
  async lookup(request) {
    asked.push(request)
    const queue = answers.get(request.linkedinUrl) ?? []
    return queue.length > 1 ? queue.shift()! : (queue[0] ?? { status: 'found', phone: '+14155552671' })
  },
  parseCallback(body) {
    const phone = (body as { phone?: string }).phone
    return phone ? { status: 'found', phone } : { status: 'not_found' }
  },
}

function depsWith(overrides: Partial<PhoneSearchDeps> = {}): PhoneSearchDeps {
  return {
    store,
    repos,
    coordination,
    provider: scripted,
    timeoutMs: 60_000,
    publicUrl: 'https://vid.example',
    retryBaseMs: 20,
    ...overrides,
  }
}

const at = () => new Date().toISOString()

async function organization(options: { plus?: boolean; credits?: number; auto?: boolean } = {}) {
  const user = await createUser(repos, { email: `${randomUUID()}@phone.test` })
  const { organization } = await createOrganization(repos, {
    name: 'Phone test',
    ownerUserId: user.id,
    productType: options.plus === false ? 'standard' : 'plus_employee',
  })
  if (options.credits) await grantCredits(store, { organizationId: organization.id, amount: options.credits })
  if (options.auto) return repos.organizations.save({ ...organization, auto_phone_enrichment: true })
  return organization
}

async function person(organizationId: string, fields: Partial<VisitorRow> = {}) {
  const id = randomUUID()
  await repos.visitors.save(personVisitorRow(organizationId, id, fields))
  return id
}

/** Waits for the search to end (the jobs run on the test's queue, as the worker runs them). */
async function settle(organizationId: string, visitorId: string) {
  await timeUntil(
    async () => (await readPhoneSearch(store, organizationId, visitorId))?.status !== 'ongoing',
    5000,
  )
  return (await readPhoneSearch(store, organizationId, visitorId))!
}

const code = async (promise: Promise<unknown>) =>
  promise.then(
    () => 'started',
    (error: { code?: string }) => error.code ?? String(error),
  )

beforeAll(async () => {
  store = createStore({ database: 'default', dataDir: tmp.dir })
  await migrate(store)
  repos = createRepositories(store)
  coordination = createMemoryCoordination()
  coordination.jobs.process<PhoneSearchJob>(
    phoneSearchJobName,
    (job) => runPhoneSearchJob(depsWith(), job.data),
    {
      concurrency: 8,
    },
  )
})

afterAll(async () => {
  await coordination?.close()
  await store?.close()
  tmp.remove()
})

describe('starting a search', () => {
  it('refuses with the spec codes: not_plus_employee, unknown visitor, no_linkedin, insufficient_credits', async () => {
    const standard = await organization({ plus: false, credits: 100 })
    expect(
      await code(
        startPhoneSearch(depsWith(), { organization: standard, visitorId: await person(standard.id) }),
      ),
    ).toBe('not_plus_employee')
    const plus = await organization({ credits: 4 })
    expect(await code(startPhoneSearch(depsWith(), { organization: plus, visitorId: randomUUID() }))).toBe(
      'resource_not_found',
    )
    expect(await code(startPhoneSearch(depsWith(), { organization: plus, visitorId: 'nope' }))).toBe(
      'resource_not_found',
    )
    const other = await organization({ credits: 100 })
    expect(
      await code(startPhoneSearch(depsWith(), { organization: plus, visitorId: await person(other.id) })),
    ).toBe('resource_not_found')
    const noLinkedin = await person(plus.id, { linkedin_url: '' })
    expect(await code(startPhoneSearch(depsWith(), { organization: plus, visitorId: noLinkedin }))).toBe(
      'no_linkedin',
    )
    expect(
      await code(startPhoneSearch(depsWith(), { organization: plus, visitorId: await person(plus.id) })),
    ).toBe('insufficient_credits')
    expect(await creditBalance(store, plus.id)).toBe(4)
  })

  it('found: 5 credits charged once, the phone revealed in an event; then already_unlocked', async () => {
    const org = await organization({ credits: 20 })
    const visitorId = await person(org.id)
    const deps = depsWith()
    expect(await startPhoneSearch(deps, { organization: org, visitorId })).toEqual({
      status: 'ongoing',
      visitorId,
    })
    const done = await settle(org.id, visitorId)
    expect(done).toMatchObject({ status: 'found', phone: '+14155552671', tries: 1 })
    expect(await creditBalance(store, org.id)).toBe(15)
    expect(await code(startPhoneSearch(deps, { organization: org, visitorId }))).toBe('already_unlocked')
    const [event] = await readEvents(store, { organizationId: org.id, type: 'visitor.phone_revealed' })
    const payload = JSON.parse(event!.payload)
    expect(payload.event_type).toBe('visitor.phone_revealed')
    expect(payload.visitor.phone).toBe('+14155552671')
    // The job or the answer applied twice changes nothing twice.
    await runPhoneSearchJob(deps, { organizationId: org.id, visitorId, searchId: done.search_id, attempt: 1 })
    expect(await creditBalance(store, org.id)).toBe(15)
  })

  it('not_found is free and final; error and expired allow one retry', async () => {
    const org = await organization({ credits: 20 })
    const deps = depsWith()
    const nobody = await person(org.id)
    answers.set((await repos.visitors.get({ organization_id: org.id, id: nobody }))!.linkedin_url, [
      { status: 'not_found' },
    ])
    await startPhoneSearch(deps, { organization: org, visitorId: nobody })
    expect((await settle(org.id, nobody)).status).toBe('not_found')
    expect(await code(startPhoneSearch(deps, { organization: org, visitorId: nobody }))).toBe('not_found')
    expect(await creditBalance(store, org.id)).toBe(20)

    const failing = await person(org.id)
    const url = (await repos.visitors.get({ organization_id: org.id, id: failing }))!.linkedin_url
    answers.set(url, [
      { status: 'error', reason: 'HTTP 401' },
      { status: 'error', reason: 'HTTP 401' },
    ])
    await startPhoneSearch(deps, { organization: org, visitorId: failing })
    expect(await settle(org.id, failing)).toMatchObject({
      status: 'error',
      reason: 'HTTP 401',
      tries: 1,
    })
    await startPhoneSearch(deps, { organization: org, visitorId: failing })
    expect(await settle(org.id, failing)).toMatchObject({ status: 'error', tries: 2 })
    expect(await code(startPhoneSearch(deps, { organization: org, visitorId: failing }))).toBe(
      'retry_exhausted',
    )
    expect(await creditBalance(store, org.id)).toBe(20)
  })

  it('transient failures are asked again with backoff until found', async () => {
    const org = await organization({ credits: 5 })
    const visitorId = await person(org.id)
    const url = (await repos.visitors.get({ organization_id: org.id, id: visitorId }))!.linkedin_url
    answers.set(url, [
      { status: 'retry', reason: 'HTTP 500' },
      { status: 'retry', reason: 'HTTP 429', retryAfterMs: 50 },
      { status: 'found', phone: '+442071838750' },
    ])
    const deps = depsWith()
    await startPhoneSearch(deps, { organization: org, visitorId })
    expect(await code(startPhoneSearch(deps, { organization: org, visitorId }))).toBe('search_ongoing')
    expect(await settle(org.id, visitorId)).toMatchObject({ status: 'found', phone: '+442071838750' })
    expect(asked.filter((lookup) => lookup.visitorId === visitorId)).toHaveLength(3)
    expect(await creditBalance(store, org.id)).toBe(0)
  })

  it('a search past PHONE_SEARCH_TIMEOUT expires (free), and may be retried once', async () => {
    const org = await organization({ credits: 5 })
    const visitorId = await person(org.id)
    const url = (await repos.visitors.get({ organization_id: org.id, id: visitorId }))!.linkedin_url
    answers.set(url, [{ status: 'pending' }])
    // A callback provider's search: nothing comes back.
    const slow = depsWith({ timeoutMs: 1000 })
    await startPhoneSearch(slow, { organization: org, visitorId })
    await new Promise((resolve) => setTimeout(resolve, 1100))
    expect(await sweepPhoneSearches(slow)).toMatchObject({ expired: 1 })
    expect(await readPhoneSearch(store, org.id, visitorId)).toMatchObject({ status: 'expired', tries: 1 })
    expect(await creditBalance(store, org.id)).toBe(5)
    answers.set(url, [{ status: 'found', phone: '+14155552671' }])
    await startPhoneSearch(slow, { organization: org, visitorId })
    expect((await settle(org.id, visitorId)).status).toBe('found')
  })
})

describe('credits under concurrency', () => {
  /** 50 searches at once for 50 visitors of an organization holding 12 credits. */
  async function fiftyAtOnce(coordinations: Coordination[]) {
    const org = await organization({ credits: 12 })
    const visitors = await Promise.all(Array.from({ length: 50 }, () => person(org.id)))
    const results = await Promise.all(
      visitors.map((visitorId, i) =>
        code(
          startPhoneSearch(depsWith({ coordination: coordinations[i % coordinations.length]! }), {
            organization: org,
            visitorId,
          }),
        ),
      ),
    )
    return { org, visitors, results }
  }

  it('in one process: exactly 2 start, 48 get insufficient_credits, the balance ends at 2', async () => {
    const { org, visitors, results } = await fiftyAtOnce([coordination])
    expect(results.filter((r) => r === 'started')).toHaveLength(2)
    expect(results.filter((r) => r === 'insufficient_credits')).toHaveLength(48)
    for (const [i, visitorId] of visitors.entries()) {
      if (results[i] === 'started') expect((await settle(org.id, visitorId)).status).toBe('found')
    }
    expect(await creditBalance(store, org.id)).toBe(2)
  })

  it('with Redis, two coordinations (as two processes): the same', async () => {
    const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
    const prefix = `vid-test-phone-${randomUUID().slice(0, 8)}:`
    const two = [createRedisCoordination({ url, prefix }), createRedisCoordination({ url, prefix })]
    try {
      for (const each of two) {
        each.jobs.process<PhoneSearchJob>(phoneSearchJobName, (job) =>
          runPhoneSearchJob(depsWith({ coordination: each }), job.data),
        )
      }
      const { org, visitors, results } = await fiftyAtOnce(two)
      expect(results.filter((r) => r === 'started')).toHaveLength(2)
      expect(results.filter((r) => r === 'insufficient_credits')).toHaveLength(48)
      for (const [i, visitorId] of visitors.entries()) {
        if (results[i] === 'started') expect((await settle(org.id, visitorId)).status).toBe('found')
      }
      expect(await creditBalance(store, org.id)).toBe(2)
    } finally {
      await Promise.all(two.map((each) => each.close()))
    }
  }, 30_000)
})

describe('callbacks, restarts and auto enrichment', () => {
  it('a callback with the search token applies its answer; any other is ignored', async () => {
    const org = await organization({ credits: 5 })
    const visitorId = await person(org.id)
    const url = (await repos.visitors.get({ organization_id: org.id, id: visitorId }))!.linkedin_url
    answers.set(url, [{ status: 'pending' }])
    const deps = depsWith()
    await startPhoneSearch(deps, { organization: org, visitorId })
    await timeUntil(async () => asked.some((lookup) => lookup.visitorId === visitorId), 5000)
    const lookup = asked.find((each) => each.visitorId === visitorId)!
    const [, , , , , organizationId, visitor, searchId, token] = lookup.callbackUrl!.split('/')
    expect(lookup.callbackUrl).toMatch(/^https:\/\/vid\.example\/phone-search\/callback\//)
    const target = {
      organizationId: organizationId!,
      visitorId: visitor!,
      searchId: searchId!,
      token: token!,
    }
    expect(
      await acceptPhoneCallback(deps, { ...target, token: 'f'.repeat(48) }, { phone: '+14155552671' }),
    ).toBe(false)
    expect(
      await acceptPhoneCallback(deps, { ...target, searchId: 'ps_other' }, { phone: '+14155552671' }),
    ).toBe(false)
    expect(await acceptPhoneCallback(deps, target, { phone: '+14155552671' })).toBe(true)
    expect(await readPhoneSearch(store, org.id, visitorId)).toMatchObject({ status: 'found' })
    expect(await acceptPhoneCallback(deps, target, { phone: '+14155552671' })).toBe(false)
    expect(await creditBalance(store, org.id)).toBe(0)
  })

  it('after a restart, ongoing searches are asked again; overdue ones expire', async () => {
    const org = await organization({ credits: 10 })
    const [waiting, overdue] = [await person(org.id), await person(org.id)]
    // Searches left ongoing by a process that stopped: started, with no job anywhere.
    const quiet = depsWith({
      coordination: { ...coordination, jobs: { ...coordination.jobs, add: async () => 'lost' } },
    })
    await startPhoneSearch(quiet, { organization: org, visitorId: waiting })
    await startPhoneSearch(quiet, { organization: org, visitorId: overdue })
    const row = (await readPhoneSearch(store, org.id, overdue))!
    await store.insert('phone_searches', [
      { ...row, started_at: new Date(Date.now() - 120_000).toISOString(), version: Date.now() * 1000 },
    ])
    expect(
      await sweepPhoneSearches(depsWith(), { resumeStartedBefore: new Date().toISOString() }),
    ).toMatchObject({ expired: 1, resumed: 1 })
    expect((await settle(org.id, waiting)).status).toBe('found')
    expect(await readPhoneSearch(store, org.id, overdue)).toMatchObject({ status: 'expired' })
    expect(await creditBalance(store, org.id)).toBe(5)
  })

  it('auto enrichment searches a newly identified visitor of an organization that enabled it', async () => {
    const enabled = await organization({ credits: 10, auto: true })
    const visitorId = await person(enabled.id)
    const event = (org: OrganizationRow, id: string) => ({
      eventId: randomUUID(),
      type: 'visitor.identified' as const,
      organizationId: org.id,
      visitorId: id,
    })
    expect(await autoEnrichPhone(depsWith(), event(enabled, visitorId))).toBe(true)
    expect((await settle(enabled.id, visitorId)).status).toBe('found')
    // Never twice, never without a LinkedIn URL, never without the setting, never below 5 credits.
    expect(await autoEnrichPhone(depsWith(), event(enabled, visitorId))).toBe(false)
    expect(
      await autoEnrichPhone(depsWith(), event(enabled, await person(enabled.id, { linkedin_url: '' }))),
    ).toBe(false)
    const disabled = await organization({ credits: 10 })
    expect(await autoEnrichPhone(depsWith(), event(disabled, await person(disabled.id)))).toBe(false)
    const poor = await organization({ credits: 4, auto: true })
    expect(await autoEnrichPhone(depsWith(), event(poor, await person(poor.id)))).toBe(false)
    const notFound = await person(enabled.id)
    answers.set((await repos.visitors.get({ organization_id: enabled.id, id: notFound }))!.linkedin_url, [
      { status: 'not_found' },
    ])
    expect(await autoEnrichPhone(depsWith(), event(enabled, notFound))).toBe(true)
    expect((await settle(enabled.id, notFound)).status).toBe('not_found')
    expect(await autoEnrichPhone(depsWith(), event(enabled, notFound))).toBe(false)
  })
})

describe('profilePhoneFields', () => {
  const startedAt = '2026-11-20T09:00:00.000Z'
  const row = (status: PhoneSearchRow['status'], phone = ''): PhoneSearchRow => ({
    organization_id: randomUUID(),
    visitor_id: randomUUID(),
    search_id: 'ps_fixture',
    status,
    tries: 1,
    provider: 'dataset',
    auto: false,
    phone,
    reason: '',
    callback_token_sha256: '',
    started_at: startedAt,
    finished_at: null,
  })
  const b2b = { product_type: 'plus_employee' } as const
  const standard = { product_type: 'standard' } as const
  const minute = 60_000
  const before = Date.parse(startedAt) + minute

  it('B2B: always a status, the phone only with found; ongoing past the timeout reads expired', () => {
    expect(profilePhoneFields(undefined, b2b, 10 * minute)).toEqual({
      phoneNumberSearchStatus: 'not_started',
    })
    expect(profilePhoneFields(row('ongoing'), b2b, 10 * minute, before)).toEqual({
      phoneNumberSearchStatus: 'ongoing',
    })
    expect(profilePhoneFields(row('ongoing'), b2b, 10 * minute, before + 10 * minute)).toEqual({
      phoneNumberSearchStatus: 'expired',
    })
    for (const status of ['not_found', 'error', 'expired'] as const) {
      expect(profilePhoneFields(row(status), b2b, 10 * minute, before)).toEqual({
        phoneNumberSearchStatus: status,
      })
    }
    expect(profilePhoneFields(row('found', '+14155552671'), b2b, 10 * minute)).toEqual({
      phoneNumber: '+14155552671',
      phoneNumberSearchStatus: 'found',
    })
  })

  it('standard: nothing, unless a phone was unlocked while the organization was B2B', () => {
    expect(profilePhoneFields(undefined, standard, minute)).toEqual({})
    expect(profilePhoneFields(row('error'), standard, minute)).toEqual({})
    expect(profilePhoneFields(row('found', '+14155552671'), standard, minute)).toEqual({
      phoneNumber: '+14155552671',
      phoneNumberSearchStatus: 'found',
    })
  })
})

describe('the dataset provider', () => {
  it('finds the phone of the contact by id, else by LinkedIn URL, in E.164', async () => {
    await store.insert('contacts', [
      {
        id: 'ph-1',
        phone: '(415) 555-2671',
        country: 'US',
        linkedin_url: 'https://www.linkedin.com/in/ada/',
        created_at: at(),
        updated_at: at(),
        version: 1,
      },
      {
        id: 'ph-2',
        phone: '020 7183 8750',
        country: 'GB',
        linkedin_url: 'linkedin.com/in/grace',
        created_at: at(),
        updated_at: at(),
        version: 1,
      },
      {
        id: 'ph-3',
        phone: 'call me',
        country: 'US',
        linkedin_url: 'https://linkedin.com/in/nobody',
        created_at: at(),
        updated_at: at(),
        version: 1,
      },
    ])
    const provider = createDatasetPhoneProvider(store)
    const lookup = (fields: Partial<PhoneLookup>): PhoneLookup => ({
      searchId: 'ps_x',
      organizationId: randomUUID(),
      visitorId: randomUUID(),
      linkedinUrl: '',
      email: '',
      firstName: '',
      lastName: '',
      contactId: '',
      ...fields,
    })
    expect(
      await provider.lookup(lookup({ contactId: 'ph-1', linkedinUrl: 'https://linkedin.com/in/other' })),
    ).toEqual({
      status: 'found',
      phone: '+14155552671',
    })
    expect(await provider.lookup(lookup({ linkedinUrl: 'HTTPS://LinkedIn.com/in/grace/?trk=x' }))).toEqual({
      status: 'found',
      phone: '+442071838750',
    })
    expect(await provider.lookup(lookup({ linkedinUrl: 'https://linkedin.com/in/nobody' }))).toEqual({
      status: 'not_found',
    })
    expect(await provider.lookup(lookup({ linkedinUrl: 'https://linkedin.com/in/unknown' }))).toEqual({
      status: 'not_found',
    })
  })
})
