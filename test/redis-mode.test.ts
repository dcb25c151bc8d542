import { redisAnswers, redisUrl } from '@visitor-id/testing/redis'
import { startServerProcess } from '@visitor-id/testing/server-process'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, describe, expect, it } from 'vitest'

const reachable = await redisAnswers()
if (!reachable && process.env.CI !== 'true') {
  console.warn(
    `\n!!! Redis at ${redisUrl} is not reachable: the Redis-mode server test is SKIPPED (it runs in CI).\n`,
  )
}
const data = tempDir('vid-redis-mode-')
afterAll(() => data.remove())

describe.skipIf(!reachable && process.env.CI !== 'true')('server with REDIS_URL', () => {
  it('starts on Redis coordination, is ready, and exits 0 on SIGTERM without hanging on connections', async () => {
    const server = await startServerProcess({
      DATA_DIR: data.dir,
      REDIS_URL: redisUrl,
      REDIS_PREFIX: `vid-test-${process.pid}-${Date.now()}:`,
    })
    try {
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200)
      const started = Date.now()
      server.child.kill('SIGTERM')
      const { code } = await server.exit
      expect(code).toBe(0)
      expect(Date.now() - started).toBeLessThan(10_000)
    } finally {
      if (server.child.exitCode === null) server.child.kill('SIGKILL')
    }
  })
})
