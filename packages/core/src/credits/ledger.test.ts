// The credit ledger on the real embedded store.

import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AppError } from '../errors.js'
import { newId } from '../ids.js'
import { createOrganization, createUser } from '../organizations/tenancy.js'
import { createRepositories, type Repositories } from '../repositories.js'
import { createStore, type Store } from '../store/client.js'
import { migrate } from '../store/migrate.js'
import {
  adjustCredits,
  chargeIdentification,
  creditBalance,
  creditBalances,
  creditThresholdsCrossed,
  grantCredits,
  mayIdentifyPerson,
} from './ledger.js'

const tmp = tempDir('vid-credits-')
let store: Store
let repos: Repositories

beforeAll(async () => {
  store = createStore({ database: 'default', dataDir: tmp.dir })
  await migrate(store)
  repos = createRepositories(store)
})

afterAll(async () => {
  await store?.close()
  tmp.remove()
})

/** Live entries of an organization, oldest first. */
async function entries(organizationId: string) {
  return store.query<{ entry_id: string; kind: string; amount: number; reason: string }>(
    `SELECT entry_id, kind, amount, reason FROM credit_ledger FINAL
     WHERE organization_id = {organizationId:UUID} ORDER BY version`,
    { organizationId },
  )
}

/** The error a call is refused with. */
async function refusal(work: Promise<unknown>) {
  const error = await work.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(AppError)
  return error as AppError
}

describe('grants, charges and adjustments', () => {
  it('an organization without entries has 0', async () => {
    expect(await creditBalance(store, newId())).toBe(0)
  })

  it('the balance is the sum of the entries; each write returns it', async () => {
    const org = newId()
    expect(await grantCredits(store, { organizationId: org, amount: 100, reason: 'plan' })).toBe(100)
    expect(await grantCredits(store, { organizationId: org, amount: 50 })).toBe(150)
    expect(await adjustCredits(store, { organizationId: org, amount: -30, reason: 'correction' })).toBe(120)
    expect(await adjustCredits(store, { organizationId: org, amount: 5 })).toBe(125)
    const visitor = newId()
    expect(await chargeIdentification(store, { organizationId: org, visitorId: visitor })).toEqual({
      charged: true,
      balance: 124,
    })
    expect(await creditBalance(store, org)).toBe(124)
    const rows = await entries(org)
    expect(rows.map((row) => [row.kind, row.amount])).toEqual([
      ['grant', 100],
      ['grant', 50],
      ['adjustment', -30],
      ['adjustment', 5],
      ['charge', -1],
    ])
    expect(rows.find((row) => row.kind === 'charge')?.entry_id).toBe(`identify:${visitor}`)
    expect(rows[0]?.reason).toBe('plan')
    expect(rows[1]?.entry_id).toMatch(/^grant:[0-9a-f-]{36}$/)
  })

  it('an entry written twice counts once (the latest version wins)', async () => {
    const org = newId()
    await grantCredits(store, { organizationId: org, amount: 10, entryId: 'invoice-7' })
    expect(await grantCredits(store, { organizationId: org, amount: 10, entryId: 'invoice-7' })).toBe(10)
    expect(await adjustCredits(store, { organizationId: org, amount: -3, entryId: 'fix-1' })).toBe(7)
    expect(await adjustCredits(store, { organizationId: org, amount: -4, entryId: 'fix-1' })).toBe(6)
    expect(await entries(org)).toHaveLength(2)
  })

  it('balances of many organizations in one query; unknown ones have 0', async () => {
    const [a, b, c] = [newId(), newId(), newId()]
    await grantCredits(store, { organizationId: a, amount: 3 })
    await grantCredits(store, { organizationId: b, amount: 7 })
    await adjustCredits(store, { organizationId: b, amount: -9 })
    const queries: string[] = []
    const counting: Store = {
      ...store,
      query: (sql, params) => {
        queries.push(sql)
        return store.query(sql, params)
      },
    }
    const balances = await creditBalances(counting, [a, b.toUpperCase(), c])
    expect(queries).toHaveLength(1)
    expect(Object.fromEntries(balances)).toEqual({ [a]: 3, [b.toUpperCase()]: -2, [c]: 0 })
    expect(await creditBalances(counting, [])).toEqual(new Map())
    expect(queries).toHaveLength(1)
  })

  it.each([
    ['zero', 0],
    ['negative', -5],
    ['fractional', 1.5],
    ['too large', 1_000_000_001],
    ['not a number', Number.NaN],
  ])('refuses a %s grant', async (_, amount) => {
    const org = newId()
    const error = await refusal(grantCredits(store, { organizationId: org, amount }))
    expect(error.code).toBe('invalid_request')
    expect(await entries(org)).toHaveLength(0)
  })

  it('refuses a zero or fractional adjustment, a malformed organization id and a long reason', async () => {
    const org = newId()
    expect((await refusal(adjustCredits(store, { organizationId: org, amount: 0 }))).code).toBe(
      'invalid_request',
    )
    expect((await refusal(adjustCredits(store, { organizationId: org, amount: -0.5 }))).code).toBe(
      'invalid_request',
    )
    expect((await refusal(grantCredits(store, { organizationId: 'acme', amount: 1 }))).code).toBe(
      'invalid_request',
    )
    expect(
      (await refusal(grantCredits(store, { organizationId: org, amount: 1, reason: 'x'.repeat(501) }))).code,
    ).toBe('invalid_request')
    expect((await refusal(creditBalances(store, ['acme']))).code).toBe('invalid_request')
    expect(await entries(org)).toHaveLength(0)
  })
})

describe('chargeIdentification', () => {
  it('charges a visitor once, however often it is identified', async () => {
    const org = newId()
    await grantCredits(store, { organizationId: org, amount: 10 })
    const visitorId = newId()
    expect(await chargeIdentification(store, { organizationId: org, visitorId })).toEqual({
      charged: true,
      balance: 9,
    })
    expect(await chargeIdentification(store, { organizationId: org, visitorId })).toEqual({
      charged: false,
      balance: 9,
    })
    expect(
      await chargeIdentification(store, { organizationId: org, visitorId: visitorId.toUpperCase() }),
    ).toEqual({ charged: false, balance: 9 })
  })

  it('50 concurrent calls for one visitor charge once; one of them says so', async () => {
    const org = newId()
    await grantCredits(store, { organizationId: org, amount: 100 })
    const visitorId = newId()
    const results = await Promise.all(
      Array.from({ length: 50 }, () => chargeIdentification(store, { organizationId: org, visitorId })),
    )
    expect(results.filter((result) => result.charged)).toHaveLength(1)
    expect(new Set(results.map((result) => result.balance))).toEqual(new Set([99]))
    expect(await creditBalance(store, org)).toBe(99)
  })

  it('racing "processes" may each write the charge, and the balance still counts it once', async () => {
    const org = newId()
    await grantCredits(store, { organizationId: org, amount: 100 })
    const visitorId = newId()
    // Two Store objects over one engine: each is a process of its own to chargeIdentification.
    const processes: Store[] = [{ ...store }, { ...store }]
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        chargeIdentification(processes[i % 2]!, { organizationId: org, visitorId }),
      ),
    )
    const charged = results.filter((result) => result.charged).length
    expect(charged).toBeGreaterThanOrEqual(1)
    expect(charged).toBeLessThanOrEqual(2)
    expect(await creditBalance(store, org)).toBe(99)
    expect((await entries(org)).filter((row) => row.kind === 'charge')).toHaveLength(1)
  })

  it('two visitors cost two credits, also at once', async () => {
    const org = newId()
    await grantCredits(store, { organizationId: org, amount: 5 })
    const [first, second] = [newId(), newId()]
    const results = await Promise.all(
      [first, second, first, second].map((visitorId) =>
        chargeIdentification(store, { organizationId: org, visitorId: visitorId! }),
      ),
    )
    expect(results.filter((result) => result.charged)).toHaveLength(2)
    expect(await creditBalance(store, org)).toBe(3)
  })

  it('charges past zero (whether a person may be identified is the caller’s check)', async () => {
    const org = newId()
    expect(await chargeIdentification(store, { organizationId: org, visitorId: newId() })).toEqual({
      charged: true,
      balance: -1,
    })
  })

  it('refuses malformed ids', async () => {
    expect(
      (await refusal(chargeIdentification(store, { organizationId: newId(), visitorId: 'v1' }))).code,
    ).toBe('invalid_request')
  })
})

describe('mayIdentifyPerson: the charge must keep the balance at or above -maxOverages', () => {
  it.each([
    // balance, maxOverages, allowed
    [1000, null, true],
    [1, null, true],
    [0, null, false],
    [-1, null, false],
    [1, 0, true],
    [0, 0, false],
    [0, 10, true],
    [-9, 10, true],
    [-10, 10, false],
    [-11, 10, false],
    [-1, 2.5, true],
    [-2, 2.5, false],
    [0, -5, false],
    [1, -5, true],
    [0, Number.NaN, false],
  ] as const)('balance %d, maxOverages %s: %s', (balance, maxOverages, allowed) => {
    expect(mayIdentifyPerson(balance, maxOverages)).toBe(allowed)
  })

  it('identifying while allowed stops exactly at -maxOverages', async () => {
    const org = newId()
    await grantCredits(store, { organizationId: org, amount: 2 })
    const maxOverages = 3
    let identified = 0
    let balance = await creditBalance(store, org)
    for (let i = 0; i < 10; i++) {
      if (!mayIdentifyPerson(balance, maxOverages)) break
      balance = (await chargeIdentification(store, { organizationId: org, visitorId: newId() })).balance
      identified++
    }
    expect(identified).toBe(5)
    expect(balance).toBe(-3)
    expect(await creditBalance(store, org)).toBe(-3)
    // Credits added: identification resumes.
    expect(
      mayIdentifyPerson(await grantCredits(store, { organizationId: org, amount: 1 }), maxOverages),
    ).toBe(true)
  })
})

describe('creditThresholdsCrossed', () => {
  it.each([
    // before, after, lastGrant, crossed
    [1000, 999, 1000, []],
    [101, 100, 1000, []],
    [100, 99, 1000, ['credits_low']],
    [99, 98, 1000, []],
    [1, 0, 1000, ['credits_exhausted']],
    [500, 0, 1000, ['credits_low', 'credits_exhausted']],
    [500, -3, 1000, ['credits_low', 'credits_exhausted']],
    [0, -1, 1000, []],
    [-1, 5, 1000, []],
    [99, 1000, 1000, []],
    [5, 4, 0, []],
    [1, 0, 0, ['credits_exhausted']],
    [1, 0, 5, ['credits_low', 'credits_exhausted']],
  ] as const)('%d -> %d with a last grant of %d: %j', (before, after, lastGrant, crossed) => {
    expect(creditThresholdsCrossed(before, after, lastGrant)).toEqual(crossed)
  })
})

describe('a new organization', () => {
  it('opens its ledger with the initial grant, counted once', async () => {
    const user = await createUser(repos, { email: 'owner@credits.test' })
    const { organization } = await createOrganization(repos, {
      name: 'Credited',
      ownerUserId: user.id,
      initialCredits: { store, amount: 1000 },
    })
    expect(await creditBalance(store, organization.id)).toBe(1000)
    expect(await entries(organization.id)).toEqual([
      { entry_id: 'initial', kind: 'grant', amount: 1000, reason: 'initial credits' },
    ])
    // Written again (a retried creation): still one grant.
    await grantCredits(store, { organizationId: organization.id, amount: 1000, entryId: 'initial' })
    expect(await creditBalance(store, organization.id)).toBe(1000)
  })

  it('has no entry without initial credits or with 0', async () => {
    const user = await createUser(repos, { email: 'owner2@credits.test' })
    for (const initialCredits of [undefined, { store, amount: 0 }]) {
      const { organization } = await createOrganization(repos, {
        name: 'Plain',
        ownerUserId: user.id,
        initialCredits,
      })
      expect(await entries(organization.id)).toEqual([])
    }
  })
})
