// The API with REDIS_URL set: rate limits, key revocation and pixel config changes shared across
// processes. "Another process" is a second coordination on the same Redis prefix with a read model of
// its own, next to the server.
import { randomUUID } from 'node:crypto'
import { createKeyAuthenticator } from '@visitor-id/core/api-keys'
import { type Coordination, createRedisCoordination } from '@visitor-id/core/coordination'
import { createRepositories, type Repositories } from '@visitor-id/core/repositories'
import { createReadModel, type ReadModel } from '@visitor-id/core/store'
import { type Harness, startHarness } from '@visitor-id/testing/harness'
import { timeUntil } from '@visitor-id/testing/poll'
import { expectRateLimiting } from '@visitor-id/testing/rate-limit-checks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const prefix = `vid-test-${randomUUID().slice(0, 8)}:`

async function redisReachable(): Promise<boolean> {
  const probe = createRedisCoordination({ url: redisUrl, prefix, onError: () => {} })
  try {
    return await probe.ping()
  } finally {
    await probe.close()
  }
}

const reachable = await redisReachable()
if (!reachable && process.env.CI !== 'true') {
  console.warn(
    `\n!!! SKIPPING the API's Redis tests: Redis at ${redisUrl} is unreachable.\n` +
      '!!! Start Redis or set REDIS_URL to run them; with CI=true this is a failure instead of a skip.\n',
  )
}

describe.skipIf(!reachable && process.env.CI !== 'true')('the API on Redis', () => {
  let h: Harness
  let other: Coordination

  beforeAll(async () => {
    if (!reachable) throw new Error(`Redis at ${redisUrl} is unreachable; CI must run the Redis tests`)
    h = await startHarness({ API_RATE_LIMIT: '5', REDIS_URL: redisUrl, REDIS_PREFIX: prefix })
    other = createRedisCoordination({ url: redisUrl, prefix })
  })

  afterAll(async () => {
    await other?.close()
    await h?.stop()
  })

  it('limits each key, with the same headers and 429', async () => {
    await expectRateLimiting(h, 5)
  })

  it('counts one key across processes', async () => {
    const { id, plainKey } = await h.createKey(h.boot.organizationId, ['read'])
    const limiter = other.createRateLimiter({ limit: 5, windowMs: 60_000 })
    for (let i = 0; i < 3; i++) await limiter.hit(`api:${id}`)
    const remaining: string[] = []
    for (let i = 0; i < 3; i++) {
      const response = await h.request({ method: 'GET', url: '/api/v1/ping', key: plainKey })
      remaining.push(`${response.statusCode}:${response.headers['x-ratelimit-remaining']}`)
    }
    expect(remaining).toEqual(['200:1', '200:0', '429:0'])
  })

  /** The repositories of another process: its own read model, told of changes through Redis only. */
  async function otherProcess(): Promise<{ repos: Repositories; readModel: ReadModel }> {
    const readModel = createReadModel({ pubsub: other.pubsub })
    await readModel.start()
    return { repos: createRepositories(h.store, readModel), readModel }
  }

  it('revokes a key in every process at once', async () => {
    const { id, plainKey } = await h.createKey(h.boot.organizationId, ['read'])
    // The other process has the key in memory (for 30 s), so only the announcement can make it refuse now.
    const { repos, readModel } = await otherProcess()
    const keys = createKeyAuthenticator({ repos })
    try {
      expect((await keys.authenticate('organization', plainKey)).keyId).toBe(id)
      const revoked = await h.request({
        method: 'DELETE',
        url: `/api/v1/organization/${h.boot.organizationId}/api-keys/${id}`,
      })
      expect(revoked.json()).toEqual({ success: true })
      expect((await h.request({ method: 'GET', url: '/api/v1/ping', key: plainKey })).statusCode).toBe(401)
      const refusedAfter = await timeUntil(
        () =>
          keys.authenticate('organization', plainKey).then(
            () => false,
            () => true,
          ),
        1000,
      )
      expect(refusedAfter).toBeLessThan(1000)
    } finally {
      await readModel.close()
    }
  })

  it('shows a changed pixel config to ingest in every process at once', async () => {
    const { repos, readModel } = await otherProcess()
    const byTrackingKey = async () =>
      (await repos.pixelConfigs.find({ tracking_key: h.boot.trackingKey }, { limit: 1 }))[0]
    try {
      expect((await byTrackingKey())?.form_capture).toBe(false)
      const response = await h.request({
        method: 'PUT',
        url: `/api/v1/visitor-tracking/${h.boot.organizationId}/pixel-config`,
        payload: { formCapture: true },
      })
      expect(response.statusCode).toBe(200)
      await timeUntil(async () => (await byTrackingKey())?.form_capture === true, 1000)
    } finally {
      await readModel.close()
    }
  })
})
