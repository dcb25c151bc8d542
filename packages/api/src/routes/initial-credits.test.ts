// INITIAL_CREDITS: the grant every new organization's credit ledger opens with.

import { type Harness, startHarness } from '@visitor-id/testing/harness'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

let h: Harness

beforeAll(async () => {
  h = await startHarness({ INITIAL_CREDITS: '5' })
})

afterAll(async () => {
  await h?.stop()
})

describe('INITIAL_CREDITS=5', () => {
  it('the bootstrap organization and every new one start with 5 identification credits', async () => {
    const boot = await h.request({ method: 'GET', url: `/api/v1/organization/${h.boot.organizationId}` })
    expect(boot.json().identificationCredits).toBe(5)
    const created = await h.request({
      method: 'POST',
      url: '/api/v1/organization',
      payload: { organizationName: 'Five' },
    })
    expect(created.statusCode).toBe(200)
    expect(created.json().identificationCredits).toBe(5)
    const list = (await h.request({ method: 'GET', url: '/api/v1/organization/list' })).json()
    expect(list.map((o: { identificationCredits: number }) => o.identificationCredits)).toEqual(
      list.map(() => 5),
    )
  })
})
