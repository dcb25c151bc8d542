import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { createStore } from '@visitor-id/core/store'
import { killServerProcess, type ServerProcess, startServerProcess } from '@visitor-id/testing/server-process'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, describe, expect, it } from 'vitest'
import { type BootstrapKeys, collect, eventually, pixelHit } from './fixtures/hits.js'

// Identification runs after the acknowledgement, from the identification queue in DATA_DIR. A
// kill -9 while acknowledged identify hits wait there loses none of them: the restarted server
// identifies each visitor once (one visitor.identified event each), and a second restart adds none.
const data = tempDir('vid-identify-crash-')
let server: ServerProcess | undefined

afterAll(async () => {
  await killServerProcess(server)
  data.remove()
})

const countEvents = async (visitors: string[]) => {
  const store = createStore({ database: 'default', dataDir: data.dir })
  try {
    // Events are keyed by id (the dispatcher writes a later version of each when it hands it on):
    // one event per visitor means one id per visitor, however many versions are stored.
    const [row] = await store.query<{ n: string; visitors: string }>(
      `SELECT uniqExact(event_id) AS n, uniqExact(visitor_id) AS visitors FROM events
       WHERE type = 'visitor.identified' AND visitor_id IN {visitors:Array(UUID)}`,
      { visitors },
    )
    return { events: Number(row!.n), visitors: Number(row!.visitors) }
  } finally {
    await store.close()
  }
}

describe('kill -9 with identify hits waiting', () => {
  it('identifies every acknowledged identify hit after the restart, once', { timeout: 120_000 }, async () => {
    // Identification waits a minute: the kill comes first.
    server = await startServerProcess({
      DATA_DIR: data.dir,
      INGEST_BATCH_MS: '20',
      IDENTIFY_BATCH_MS: '60000',
    })
    const keys = JSON.parse(readFileSync(path.join(data.dir, 'bootstrap.json'), 'utf8')) as BootstrapKeys
    const visitors = Array.from({ length: 20 }, () => randomUUID())
    const answers = await Promise.all(
      visitors.map((visitor, n) =>
        collect(
          server!.url,
          pixelHit(keys.trackingKey, { v: visitor, e: 'id', em: `person${n}@crash.test` }),
        ),
      ),
    )
    expect(answers.map((answer) => answer.status)).toEqual(visitors.map(() => 202))
    server.child.kill('SIGKILL')
    await server.exit

    server = await startServerProcess({ DATA_DIR: data.dir, IDENTIFY_BATCH_MS: '20' })
    const profile = (visitor: string) =>
      fetch(`${server!.url}/api/v1/visitor-tracking/${keys.organizationId}/visitors/${visitor}`, {
        headers: { 'x-api-key': keys.apiKey },
      }).then((response) => response.json() as Promise<{ contact?: { email: string } | null }>)
    for (const [n, visitor] of visitors.entries()) {
      const found = await eventually(async () =>
        (await profile(visitor)).contact ? profile(visitor) : undefined,
      )
      expect(found.contact).toMatchObject({ email: `person${n}@crash.test` })
    }
    server.child.kill('SIGTERM')
    expect((await server.exit).code).toBe(0)
    expect(await countEvents(visitors)).toEqual({ events: 20, visitors: 20 })

    // Nothing is identified twice: another start finds the queue empty.
    server = await startServerProcess({ DATA_DIR: data.dir, IDENTIFY_BATCH_MS: '20' })
    server.child.kill('SIGTERM')
    expect((await server.exit).code).toBe(0)
    expect(await countEvents(visitors)).toEqual({ events: 20, visitors: 20 })
  })
})
