// The five email preference routes: partner defaults, organization overrides and their inheritance,
// omitted keys kept, unknown keys refused by name, DELETE reverting, other partners. Every key,
// `integration_reconnect` (beyond the spec's list) included.
import { createPartner } from '@visitor-id/core/organizations'
import { errorBody, type Harness, startHarness } from '@visitor-id/testing/harness'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

let h: Harness

beforeAll(async () => {
  h = await startHarness()
})

afterAll(async () => {
  await h?.stop()
})

const call = (
  method: 'GET' | 'PUT' | 'DELETE',
  url: string,
  payload?: object,
  partnerKey = h.boot.partnerKey,
) =>
  h.request({ method, url: `/api/v1/partner${url}`, key: null, partnerKey, ...(payload ? { payload } : {}) })

const keys = [
  'credits_exhausted',
  'credits_low',
  'first_visitor_identified',
  'subscription_activated',
  'subscription_canceled',
  'payment_failed',
  'renewal_receipt',
  'integration_reconnect',
]

describe('email preferences', () => {
  it('partner defaults: every key enabled at first; a PUT changes the keys it names only', async () => {
    expect((await call('GET', '/email-preferences')).json()).toEqual({
      preferences: Object.fromEntries(keys.map((key) => [key, true])),
    })
    const saved = await call('PUT', '/email-preferences', { preferences: { credits_low: false } })
    expect(saved.statusCode).toBe(200)
    expect(saved.json()).toEqual({ message: expect.any(String) })
    await call('PUT', '/email-preferences', { preferences: { renewal_receipt: false } })
    const after = (await call('GET', '/email-preferences')).json().preferences
    expect(after).toMatchObject({ credits_low: false, renewal_receipt: false, credits_exhausted: true })
    // A key beyond the spec's list: the integration reconnect reminder.
    expect(
      (await call('PUT', '/email-preferences', { preferences: { integration_reconnect: false } })).statusCode,
    ).toBe(200)
    expect((await call('GET', '/email-preferences')).json().preferences.integration_reconnect).toBe(false)
    await call('PUT', '/email-preferences', { preferences: { integration_reconnect: true } })
  })

  it('an organization inherits the defaults, overrides win, DELETE reverts', async () => {
    const url = `/organizations/${h.boot.organizationId}/email-preferences`
    const inherited = (await call('GET', url)).json().preferences
    expect(inherited.credits_low).toEqual({ enabled: false, inherited: true })
    expect(inherited.payment_failed).toEqual({ enabled: true, inherited: true })
    await call('PUT', url, {
      preferences: { credits_low: true, payment_failed: false, integration_reconnect: false },
    })
    const own = (await call('GET', url)).json().preferences
    expect(own.credits_low).toEqual({ enabled: true, inherited: false })
    expect(own.payment_failed).toEqual({ enabled: false, inherited: false })
    expect(own.renewal_receipt).toEqual({ enabled: false, inherited: true })
    expect(own.integration_reconnect).toEqual({ enabled: false, inherited: false })
    const reverted = await call('DELETE', url)
    expect(reverted.statusCode).toBe(200)
    expect(reverted.json()).toEqual({ message: expect.any(String) })
    const back = (await call('GET', url)).json().preferences
    expect(back.credits_low).toEqual({ enabled: false, inherited: true })
    expect(back.integration_reconnect).toEqual({ enabled: true, inherited: true })
  })

  it('unknown keys and wrong types are 400 naming them; other partners get 404 or their own', async () => {
    for (const [payload, path] of [
      [{ preferences: { newsletter: false } }, 'newsletter'],
      [{ preferences: { credits_low: 'no' } }, 'credits_low'],
      [{ preferences: [] }, 'preferences'],
      [{}, 'preferences'],
    ] as const) {
      for (const url of ['/email-preferences', `/organizations/${h.boot.organizationId}/email-preferences`]) {
        const response = await call('PUT', url, payload)
        expect(response.statusCode, JSON.stringify(payload)).toBe(400)
        expect(JSON.stringify(response.json())).toContain(path)
      }
    }
    const other = await createPartner(h.repos, { name: 'Other partner' })
    expect(
      (await call('GET', '/email-preferences', undefined, other.plainKey)).json().preferences.credits_low,
    ).toBe(true)
    const url = `/organizations/${h.boot.organizationId}/email-preferences`
    for (const method of ['GET', 'PUT', 'DELETE'] as const) {
      const response = await call(
        method,
        url,
        method === 'PUT' ? { preferences: {} } : undefined,
        other.plainKey,
      )
      expect(response.json()).toEqual(errorBody(404, 'resource_not_found'))
    }
  })
})
