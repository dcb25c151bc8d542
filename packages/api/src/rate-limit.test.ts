// Rate limiting with the in-process coordination (no REDIS_URL); rate-limit-redis.test.ts runs the
// same behaviour across processes through Redis.

import { errorBody, type Harness, startHarness } from '@visitor-id/testing/harness'
import { expectRateLimiting } from '@visitor-id/testing/rate-limit-checks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

let h: Harness

beforeAll(async () => {
  h = await startHarness({ API_RATE_LIMIT: '5', PUBLIC_URL: 'https://t.example.com/' })
})

afterAll(async () => {
  await h?.stop()
})

describe('rate limit (in-process)', () => {
  it('allows API_RATE_LIMIT requests per minute per key, then 429 with Retry-After', async () => {
    await expectRateLimiting(h, 5)
  })

  it('puts the headers on 4xx answers after authentication, and none on 401', async () => {
    const { plainKey } = await h.createKey(h.boot.organizationId, ['read'])
    const forbidden = await h.request({
      method: 'PUT',
      url: `/api/v1/organization/${h.boot.organizationId}`,
      key: plainKey,
      payload: { name: 'x' },
    })
    expect(forbidden.statusCode).toBe(403)
    expect(forbidden.headers['x-ratelimit-remaining']).toBe('4')
    const notFound = await h.request({
      method: 'GET',
      url: '/api/v1/organization/00000000-0000-4000-8000-000000000000',
      key: plainKey,
    })
    expect(notFound.statusCode).toBe(404)
    expect(notFound.headers['x-ratelimit-remaining']).toBe('3')
    const invalid = await h.request({
      method: 'GET',
      url: `/api/v1/visitor-tracking/${h.boot.organizationId}/installation/script/x`,
      key: plainKey,
    })
    expect(invalid.statusCode).toBe(400)
    expect(invalid.headers['x-ratelimit-remaining']).toBe('2')
    const anonymous = await h.request({ method: 'GET', url: '/api/v1/ping', key: null })
    expect(anonymous.json()).toEqual(errorBody(401, 'unauthorized'))
    expect(anonymous.headers['x-ratelimit-limit']).toBeUndefined()
  })

  it('treats HEAD like GET: authenticated and counted', async () => {
    const { plainKey } = await h.createKey(h.boot.organizationId, ['read'])
    expect((await h.request({ method: 'HEAD', url: '/api/v1/ping', key: null })).statusCode).toBe(401)
    const head = await h.request({ method: 'HEAD', url: '/api/v1/ping', key: plainKey })
    expect(head.statusCode).toBe(200)
    expect(head.headers['x-ratelimit-remaining']).toBe('4')
  })

  it('uses PUBLIC_URL for install snippets', async () => {
    const response = await h.request({
      method: 'GET',
      url: `/api/v1/visitor-tracking/${h.boot.organizationId}`,
    })
    expect(response.json().pixelConfig.scriptTag.scriptUrl).toBe('https://t.example.com/p.js')
  })
})
