import { readFileSync } from 'node:fs'
import path from 'node:path'
import { createStore } from '@visitor-id/core/store'
import { killServerProcess, type ServerProcess, startServerProcess } from '@visitor-id/testing/server-process'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, describe, expect, it } from 'vitest'
import { type BootstrapKeys, collect, pixelHit } from './fixtures/hits.js'

// kill -9 of the real server (embedded store) while hits pour in: every hit it acknowledged
// (202) is in ClickHouse after a restart, exactly once.
const dirs: ReturnType<typeof tempDir>[] = []
let server: ServerProcess | undefined

afterAll(async () => {
  await killServerProcess(server)
  for (const dir of dirs) dir.remove()
})

describe('kill -9 under load', () => {
  it('loses no acknowledged hit', { timeout: 120_000 }, async () => {
    await killUnderLoad({ INGEST_ACK: 'store', INGEST_BATCH_MS: '20' })
  })

  it('loses no hit acknowledged once spooled (the default)', { timeout: 120_000 }, async () => {
    await killUnderLoad({ INGEST_ACK: 'spool', INGEST_BATCH_MS: '20' })
  })

  it('loses no hit acknowledged from the spool before ClickHouse had it', { timeout: 120_000 }, async () => {
    // Inserts wait for 100,000 rows or a minute: every acknowledged hit is only in the spool when
    // the server dies, and the restart inserts them.
    const spooled = await killUnderLoad({
      INGEST_ACK: 'spool',
      INGEST_BATCH_MS: '60000',
      INGEST_BATCH_ROWS: '100000',
    })
    expect(spooled).toBe(0)
  })
})

/**
 * Sends hits from 32 clients until 1,500 are acknowledged, kills the server, restarts it, and
 * checks each acknowledged hit is stored once. Returns how many were stored before the restart.
 */
async function killUnderLoad(env: Record<string, string>): Promise<number> {
  const data = tempDir('vid-crash-')
  dirs.push(data)
  server = await startServerProcess({ DATA_DIR: data.dir, ...env })
  console.log(`ready after ${server.readyAfterMs} ms`)
  const { trackingKey } = JSON.parse(
    readFileSync(path.join(data.dir, 'bootstrap.json'), 'utf8'),
  ) as BootstrapKeys
  const url = server.url
  const acknowledged = new Set<number>()
  let next = 0
  let stop = false
  const worker = async () => {
    while (!stop) {
      const n = next++
      try {
        const response = await collect(url, pixelHit(trackingKey, { u: `https://crash.test/n/${n}` }))
        if (response.status === 202) acknowledged.add(n)
      } catch {
        // The server is gone: this hit was never acknowledged.
      }
    }
  }
  const workers = Array.from({ length: 32 }, worker)
  const started = Date.now()
  while (acknowledged.size < 1500 && Date.now() - started < 30_000) {
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  server.child.kill('SIGKILL')
  await server.exit
  stop = true
  await Promise.all(workers)
  console.log(`load phase: ${Date.now() - started} ms`)
  expect(acknowledged.size).toBeGreaterThanOrEqual(1500)
  const storedBeforeRestart = await countCrashHits(data.dir)

  // It starts again on the same data (the stale lock is taken over) and stops cleanly.
  server = await startServerProcess({ DATA_DIR: data.dir, ...env })
  expect((await fetch(`${server.url}/readyz`)).status).toBe(200)
  server.child.kill('SIGTERM')
  expect((await server.exit).code).toBe(0)

  const store = createStore({ database: 'default', dataDir: data.dir })
  try {
    const rows = await store.query<{ path: string; n: number }>(
      "SELECT path, count() AS n FROM page_views WHERE hostname = 'crash.test' GROUP BY path",
    )
    const counts = new Map(rows.map((row) => [row.path, Number(row.n)]))
    const lost = [...acknowledged].filter((n) => counts.get(`/n/${n}`) !== 1)
    console.log(
      `kill -9: ${next} sent, ${acknowledged.size} acknowledged, ${counts.size} stored, ${lost.length} lost`,
    )
    expect(lost).toEqual([])
    expect([...counts.values()].every((count) => count === 1)).toBe(true)
  } finally {
    await store.close()
  }
  return storedBeforeRestart
}

/** The crash test's hits in the store of `dataDir` (no server running on it). */
async function countCrashHits(dataDir: string): Promise<number> {
  const store = createStore({ database: 'default', dataDir })
  try {
    const rows = await store.query<{ n: number }>(
      "SELECT count() AS n FROM page_views WHERE hostname = 'crash.test'",
    )
    return Number(rows[0]!.n)
  } finally {
    await store.close()
  }
}
