import { randomUUID } from 'node:crypto'
import { readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import type { BootstrapFile as BootstrapKeys } from '@visitor-id/core/organizations'
import {
  killServerProcess,
  runCli,
  type ServerProcess,
  startServerProcess,
} from '@visitor-id/testing/server-process'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

// The walking skeleton over real HTTP: a started server, the pixel, a hit, the stored visitor.
const data = tempDir('vid-e2e-')
let server: ServerProcess

beforeAll(async () => {
  server = await startServerProcess({ DATA_DIR: data.dir })
  console.log(`time to ready: ${server.readyAfterMs} ms`)
})

afterAll(async () => {
  await killServerProcess(server)
  data.remove()
})

function bootstrap() {
  return JSON.parse(readFileSync(path.join(data.dir, 'bootstrap.json'), 'utf8')) as BootstrapKeys
}

describe('walking skeleton', () => {
  it('is ready and healthy', async () => {
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200)
    const ready = await fetch(`${server.url}/readyz`)
    expect(ready.status).toBe(200)
    expect(await ready.json()).toEqual({ status: 'ready' })
  })

  it('writes bootstrap.json with mode 0600 and never logs full keys', () => {
    const file = path.join(data.dir, 'bootstrap.json')
    expect(statSync(file).mode & 0o777).toBe(0o600)
    const keys = bootstrap()
    expect(Object.keys(keys).sort()).toEqual(
      ['apiKey', 'organizationId', 'partnerId', 'partnerKey', 'trackingKey', 'userId'].sort(),
    )
    expect(keys.apiKey).toMatch(/^bsk_live_[0-9a-f]{32}$/)
    expect(keys.partnerKey).toMatch(/^bsk_partner_[0-9a-f]{32}$/)
    expect(server.output()).not.toContain(keys.apiKey)
    expect(server.output()).not.toContain(keys.partnerKey)
  })

  it('serves the pixel, stores a page view and shows the visitor with one session', async () => {
    const pixel = await fetch(`${server.url}/p.js`)
    expect(pixel.status).toBe(200)
    expect(pixel.headers.get('content-type')).toMatch(/javascript/)
    expect((await pixel.text()).length).toBeGreaterThan(100)

    const { trackingKey, apiKey, organizationId } = bootstrap()
    const visitorId = randomUUID()
    const sessionId = randomUUID()
    const hit = (u: string, ts: number) => ({
      k: trackingKey,
      e: 'pv',
      v: visitorId,
      s: sessionId,
      u,
      ts,
      ti: 'Home',
    })
    const now = Date.now()
    for (const [url, ts] of [
      ['https://shop.test/?utm_source=newsletter', now - 60_000],
      ['https://shop.test/pricing', now - 1000],
    ] as const) {
      const sent = await fetch(`${server.url}/collect`, {
        method: 'POST',
        // A browser's user agent: ingest drops hits from bots and scripts (Node's fetch says "node").
        headers: {
          'content-type': 'text/plain',
          'user-agent':
            'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36',
        },
        body: JSON.stringify(hit(url, ts)),
      })
      expect(sent.status).toBe(202)
    }

    const response = await fetch(
      `${server.url}/api/v1/visitor-tracking/${organizationId}/visitors/${visitorId}`,
      {
        headers: { 'x-api-key': apiKey },
      },
    )
    expect(response.status).toBe(200)
    const profile = (await response.json()) as {
      id: string
      sessions: Record<string, unknown>[]
      pageViews: unknown[]
    }
    expect(profile.id).toBe(visitorId)
    expect(profile.sessions).toHaveLength(1)
    expect(profile.sessions[0]).toMatchObject({
      id: sessionId,
      pageViewCount: 2,
      landingPage: 'https://shop.test/?utm_source=newsletter',
      entryPage: '/',
      exitPage: '/pricing',
      utmSource: 'newsletter',
    })
    expect(profile.sessions[0]!.sessionDurationSeconds).toBeGreaterThanOrEqual(58)
    expect(profile.pageViews).toHaveLength(2)
  })

  it('answers 401 without a key and 404 for a visitor it never saw', async () => {
    const { apiKey, organizationId } = bootstrap()
    const url = `${server.url}/api/v1/visitor-tracking/${organizationId}/visitors/${randomUUID()}`
    const anonymous = await fetch(url)
    expect(anonymous.status).toBe(401)
    expect(await anonymous.json()).toMatchObject({ statusCode: 401, code: 'unauthorized' })
    const unknown = await fetch(url, { headers: { 'x-api-key': apiKey } })
    expect(unknown.status).toBe(404)
  })

  it('refuses a second server on the same data directory; the CLI hands its command to the running one', async () => {
    await expect(startServerProcess({ DATA_DIR: data.dir }, 30_000)).rejects.toThrow(
      /in use by another process/,
    )
    // No second process opens the data directory: the command runs in the server (admin socket).
    const cli = await runCli(['org', 'create', '--name', 'Other'], { DATA_DIR: data.dir })
    expect(cli.code, cli.stderr).toBe(0)
    expect(JSON.parse(cli.stdout)).toMatchObject({ organizationId: expect.any(String) })
  })

  it('exits 0 within 10 s of SIGTERM', async () => {
    const started = Date.now()
    server.child.kill('SIGTERM')
    const { code } = await server.exit
    expect(code).toBe(0)
    expect(Date.now() - started).toBeLessThan(10_000)
  })

  it('keeps the data and the bootstrap file across a restart, and the CLI works once the server is gone', async () => {
    const before = bootstrap()
    const cli = await runCli(['org', 'create', '--name', 'Second org', '--domain', 'second.test'], {
      DATA_DIR: data.dir,
    })
    expect(cli.code).toBe(0)
    const created = JSON.parse(cli.stdout) as { organizationId: string }
    const key = await runCli(['keys', 'create', '--org', created.organizationId, '--scopes', 'read'], {
      DATA_DIR: data.dir,
    })
    expect(key.code).toBe(0)
    expect(JSON.parse(key.stdout).plainKey).toMatch(/^bsk_live_[0-9a-f]{32}$/)

    server = await startServerProcess({ DATA_DIR: data.dir })
    expect(bootstrap()).toEqual(before)
    const ready = await fetch(`${server.url}/readyz`)
    expect(ready.status).toBe(200)
  })
})
