// The rate-limit behaviour both coordination adapters must show (in-process and Redis).
import { expect } from 'vitest'
import { errorBody, type Harness } from './harness.js'

/** `limit` requests pass with falling X-RateLimit-Remaining, the next ones get 429; other keys are unaffected. */
export async function expectRateLimiting(h: Harness, limit: number): Promise<void> {
  const { plainKey } = await h.createKey(h.boot.organizationId, ['read'])
  const resets = new Set<string>()
  for (let i = 1; i <= limit; i++) {
    const response = await h.request({ method: 'GET', url: '/api/v1/ping', key: plainKey })
    expect(response.statusCode).toBe(200)
    expect(response.headers['x-ratelimit-limit']).toBe(String(limit))
    expect(response.headers['x-ratelimit-remaining']).toBe(String(limit - i))
    resets.add(String(response.headers['x-ratelimit-reset']))
  }
  // One fixed window: one reset time, a Unix timestamp in seconds within the next minute.
  expect(resets.size).toBe(1)
  const reset = Number([...resets][0])
  expect(reset).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000))
  expect(reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 60)

  const limited = await h.request({ method: 'GET', url: '/api/v1/ping', key: plainKey })
  expect(limited.statusCode).toBe(429)
  expect(limited.json()).toEqual(errorBody(429, 'rate_limited'))
  expect(limited.headers['x-ratelimit-remaining']).toBe('0')
  const retryAfter = Number(limited.headers['retry-after'])
  expect(retryAfter).toBeGreaterThanOrEqual(1)
  expect(retryAfter).toBeLessThanOrEqual(60)
  // Every route of the key is limited, not just the one that used it up.
  const other = await h.request({
    method: 'GET',
    url: `/api/v1/organization/${h.boot.organizationId}`,
    key: plainKey,
  })
  expect(other.statusCode).toBe(429)

  const { plainKey: fresh } = await h.createKey(h.boot.organizationId, ['read'])
  const unaffected = await h.request({ method: 'GET', url: '/api/v1/ping', key: fresh })
  expect(unaffected.statusCode).toBe(200)
  expect(unaffected.headers['x-ratelimit-remaining']).toBe(String(limit - 1))
}
