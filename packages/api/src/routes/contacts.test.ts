// POST /contacts/count over HTTP: the count, the vocabulary's validation, bad input. The counts
// themselves are checked against an independent count in core (lists/contact-count.test.ts); the
// tenant/scope matrix (matrix.test.ts) covers 401/403.

import { errorBody, type Harness, startHarness } from '@visitor-id/testing/harness'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

let h: Harness

beforeAll(async () => {
  h = await startHarness()
  const at = new Date().toISOString()
  const acme = await h.seedCompany({ industry: 'SaaS', domain: 'acme.test', country: 'US' })
  await h.store.insert(
    'contacts',
    [
      { id: 'a', email: 'a@acme.test', job_title: 'CTO', seniority: 'c-level', company_id: acme },
      { id: 'b', email: 'b@acme.test', job_title: 'Engineer', seniority: 'senior', company_id: acme },
      { id: 'c', email: 'c@other.test', job_title: 'Chief Technology Officer', company_domain: 'other.test' },
    ].map((row) => ({ ...row, created_at: at, updated_at: at, version: 1 })),
  )
})

afterAll(async () => {
  await h?.stop()
})

const count = (payload: unknown) =>
  h.request({ method: 'POST', url: '/api/v1/contacts/count', payload: payload as object })

describe('POST /contacts/count', () => {
  it('counts the contacts a filter matches; no filter counts them all', async () => {
    expect((await count({})).json()).toEqual({ count: 3 })
    expect((await count({ company: { industries: ['saas'] } })).json()).toEqual({ count: 2 })
    expect((await count({ contact: { job_titles: ['cto', 'chief'] } })).json()).toEqual({ count: 2 })
    expect(
      (
        await count({
          company: { industries: ['SaaS'], countries: ['US'] },
          contact: { seniorities: ['C-Level'] },
        })
      ).json(),
    ).toEqual({ count: 1 })
    expect((await count({ company: { domains: ['other.test'] } })).json()).toEqual({ count: 1 })
  })

  it('unknown keys and wrong types are a 400 naming the key', async () => {
    for (const [payload, path] of [
      [{ company: { industry: ['SaaS'] } }, 'company'],
      [{ people: {} }, ''],
      [{ contact: { seniorities: 'vp' } }, 'contact.seniorities'],
      [{ contact: { job_titles: [42] } }, 'contact.job_titles.0'],
      [{ company: { domains: ['x'.repeat(201)] } }, 'company.domains.0'],
      [{ contact: { job_titles: Array.from({ length: 51 }, (_, i) => `t${i}`) } }, 'contact.job_titles'],
      [[], ''],
    ] as const) {
      const response = await count(payload)
      expect(response.statusCode, JSON.stringify(payload)).toBe(400)
      const body = response.json()
      expect(body).toMatchObject(errorBody(400, 'invalid_request'))
      expect(JSON.stringify(body.details), JSON.stringify(payload)).toContain(path)
    }
    const unknown = (await count({ company: { industry: ['SaaS'] } })).json()
    expect(JSON.stringify(unknown)).toMatch(/industry/)
  })
})
