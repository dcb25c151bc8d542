// Two server processes sharing one store, as in a deployment: both on `CLICKHOUSE_URL` (ClickHouse's
// HTTP interface in front of the real engine, packages/testing/src/clickhouse-http.ts) and on one Redis.
// Each keeps its own in-memory copies of keys and pixel configs; a change made through one must be
// seen by the other within a second (a removed member's access too). Both ingest: one visitor
// identified through both at the same moment costs one credit and stores one visitor.identified
// event. An import made beside them (the CLI on the same ClickHouse and Redis) applies in both
// within two seconds, not at their next periodic reload (COMPANY_IPS_REFRESH_MS, 5 minutes by default).
import { randomUUID } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { type ClickHouseHttp, startClickHouseHttp } from '@visitor-id/testing/clickhouse-http'
import { timeUntil } from '@visitor-id/testing/poll'
import { redisAnswers, redisUrl } from '@visitor-id/testing/redis'
import {
  killServerProcess,
  runCli,
  type ServerProcess,
  startServerProcess,
} from '@visitor-id/testing/server-process'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { collect, companyOfHit, eventually, pixelHit } from './fixtures/hits.js'

const reachable = await redisAnswers()
if (!reachable && process.env.CI !== 'true') {
  console.warn(
    `\n!!! Redis at ${redisUrl} is not reachable: the two-process test is SKIPPED (it runs in CI).\n`,
  )
}

const engineDir = tempDir('vid-two-engine-')
const dirA = tempDir('vid-two-a-')
const dirB = tempDir('vid-two-b-')
const dirCli = tempDir('vid-two-cli-')
let clickhouse: ClickHouseHttp | undefined
let a: ServerProcess | undefined
let b: ServerProcess | undefined
let keys: { apiKey: string; organizationId: string; userId: string; trackingKey: string }
let shared: Record<string, string>

const call = async (server: ServerProcess, route: string, key: string, init: RequestInit = {}) => {
  const response = await fetch(`${server.url}/api/v1${route}`, {
    ...init,
    headers: { 'x-api-key': key, 'content-type': 'application/json', ...init.headers },
  })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

/** Runs SQL on the shared engine, as an operator would. */
const sql = async (query: string) => {
  const response = await fetch(clickhouse!.url, { method: 'POST', body: query })
  if (!response.ok) throw new Error(await response.text())
  return response.text()
}

/** Resolves once the process has identified every identify hit it acknowledged (its queue gauge is 0). */
const identificationDone = (server: ServerProcess) =>
  eventually(async () => {
    const text = await (await fetch(`${server.url}/metrics`)).text()
    return /^vid_ingest_identify_queue_bytes 0$/m.test(text) ? true : undefined
  })

describe.skipIf(!reachable && process.env.CI !== 'true')('two processes on one store and one Redis', () => {
  beforeAll(async () => {
    if (!reachable) throw new Error(`Redis at ${redisUrl} is unreachable; CI must run this test`)
    clickhouse = await startClickHouseHttp(engineDir.dir)
    shared = {
      CLICKHOUSE_URL: clickhouse.url,
      REDIS_URL: redisUrl,
      REDIS_PREFIX: `vid-test-${randomUUID().slice(0, 8)}:`,
      ROLE: 'all',
      IDENTIFY_BATCH_MS: '20',
      INGEST_BATCH_MS: '20',
      // The tests speak for a visitor's address with X-Forwarded-For.
      TRUST_PROXY: '1',
    }
    // The first one migrates and bootstraps the empty store; the second finds it ready.
    a = await startServerProcess({ ...shared, DATA_DIR: dirA.dir })
    b = await startServerProcess({ ...shared, DATA_DIR: dirB.dir, BOOTSTRAP: 'false' })
    keys = JSON.parse(readFileSync(path.join(dirA.dir, 'bootstrap.json'), 'utf8'))
  }, 120_000)

  afterAll(async () => {
    await killServerProcess(a)
    await killServerProcess(b)
    await clickhouse?.close()
    for (const dir of [engineDir, dirA, dirB, dirCli]) dir.remove()
  })

  it('a key revoked through one process is refused by the other within a second', async () => {
    const created = await call(a!, `/organization/${keys.organizationId}/api-keys`, keys.apiKey, {
      method: 'POST',
      body: JSON.stringify({ name: 'two-process', scopes: ['read'] }),
    })
    expect(created.status).toBe(200)
    const plainKey = created.body.plainKey as string
    const keyId = (created.body.apiKey as { id: string }).id
    // The other process now holds the key in memory (for 30 s).
    expect((await call(b!, '/ping', plainKey)).status).toBe(200)
    expect((await call(b!, '/ping', plainKey)).status).toBe(200)

    const revoked = await call(a!, `/organization/${keys.organizationId}/api-keys/${keyId}`, keys.apiKey, {
      method: 'DELETE',
    })
    expect(revoked.body).toEqual({ success: true })
    const after = await timeUntil(async () => (await call(b!, '/ping', plainKey)).status === 401, 1000)
    expect(after).toBeLessThan(1000)
  })

  it('a user removed from an organization through one process: the other refuses their admin key there within a second', async () => {
    const created = await call(a!, `/organization/${keys.organizationId}/api-keys`, keys.apiKey, {
      method: 'POST',
      body: JSON.stringify({ name: 'acts for its user', scopes: ['admin'] }),
    })
    expect(created.status).toBe(200)
    const adminKey = created.body.plainKey as string
    // Another organization, of which the key's user is a member (not the owner), written straight
    // into the shared store as the admin CLI or a dashboard would.
    const team = randomUUID()
    await sql(
      `INSERT INTO organizations (id, name, created_at, updated_at, version) VALUES ('${team}', 'Team', now64(3), now64(3), 1)`,
    )
    await sql(
      `INSERT INTO memberships (organization_id, user_id, role, created_at, updated_at, version) VALUES ('${team}', '${keys.userId}', 'member', now64(3), now64(3), 1)`,
    )
    // The other process now holds the membership in memory (for 30 s).
    expect((await call(b!, `/organization/${team}`, adminKey)).status).toBe(200)
    expect((await call(b!, `/organization/${team}`, adminKey)).status).toBe(200)

    const removed = await call(a!, `/organization/${team}/member/${keys.userId}`, adminKey, {
      method: 'DELETE',
    })
    expect(removed.status).toBe(200)
    const after = await timeUntil(
      async () => (await call(b!, `/organization/${team}`, adminKey)).status === 404,
      1000,
    )
    expect(after).toBeLessThan(1000)
  })

  it('a pixel config changed through one process is served by the other within a second', async () => {
    const route = `/visitor-tracking/${keys.organizationId}`
    const formCapture = async () =>
      ((await call(b!, route, keys.apiKey)).body.pixelConfig as { formCapture: boolean }).formCapture
    expect(await formCapture()).toBe(false)
    const changed = await call(a!, `${route}/pixel-config`, keys.apiKey, {
      method: 'PUT',
      body: JSON.stringify({ formCapture: true }),
    })
    expect(changed.status).toBe(200)
    expect(await timeUntil(async () => (await formCapture()) === true, 1000)).toBeLessThan(1000)
  })

  it('one visitor identified through both processes at once: one credit, one visitor.identified', async () => {
    const email = `ada-${randomUUID().slice(0, 8)}@acme.test`
    const at = new Date().toISOString()
    await sql(
      `INSERT INTO contacts (id, email, first_name, created_at, updated_at, version) VALUES ('${email}', '${email}', 'Ada', '${at}', '${at}', 1)`,
    )
    const credits = async () =>
      (
        (await call(a!, `/organization/${keys.organizationId}`, keys.apiKey)).body as {
          identificationCredits: number
        }
      ).identificationCredits
    const before = await credits()
    const visitor = randomUUID()
    const session = randomUUID()
    await collect(a!.url, pixelHit(keys.trackingKey, { v: visitor, s: session }))
    const identify = (server: ServerProcess) =>
      collect(server.url, pixelHit(keys.trackingKey, { v: visitor, s: session, e: 'id', em: email }))
    const answers = await Promise.all([identify(a!), identify(b!), identify(a!), identify(b!)])
    expect(answers.map((answer) => answer.status)).toEqual([202, 202, 202, 202])
    await identificationDone(a!)
    await identificationDone(b!)
    const profile = await call(
      b!,
      `/visitor-tracking/${keys.organizationId}/visitors/${visitor}`,
      keys.apiKey,
    )
    expect(profile.body.contact).toMatchObject({ email, firstName: 'Ada' })
    expect(await credits()).toBe(before - 1)
    const events = await sql(
      `SELECT count() FROM events FINAL WHERE visitor_id = '${visitor}' AND type = 'visitor.identified' FORMAT TSV`,
    )
    expect(events.trim()).toBe('1')
  })

  it('company IP ranges imported beside them apply in both processes within two seconds', async () => {
    const ip = '198.51.100.42'
    expect(await companyOfHit(a!.url, keys, ip)).toBe('')
    expect(await companyOfHit(b!.url, keys, ip)).toBe('')
    const ranges = path.join(dirCli.dir, 'ranges.csv')
    writeFileSync(ranges, 'cidr,company_id\n198.51.100.0/24,umbrella\n')
    // On CLICKHOUSE_URL the CLI imports itself and announces the import through Redis.
    const result = await runCli(['import', 'company-ips', ranges], { ...shared, DATA_DIR: dirCli.dir })
    expect(result.code, result.stderr).toBe(0)
    expect(JSON.parse(result.stdout)).toMatchObject({ kind: 'company-ips', imported: 1 })
    for (const server of [b!, a!]) {
      const after = await timeUntil(
        async () => (await companyOfHit(server.url, keys, ip)) === 'umbrella',
        2000,
      )
      expect(after).toBeLessThan(2000)
    }
  })
})
