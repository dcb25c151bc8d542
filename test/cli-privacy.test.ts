import { readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import type { BootstrapFile } from '@visitor-id/core/organizations'
import { createStore } from '@visitor-id/core/store'
import {
  killServerProcess,
  runCli,
  type ServerProcess,
  startServerProcess,
} from '@visitor-id/testing/server-process'
import { tablesNaming } from '@visitor-id/testing/store-search'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { until } from '@visitor-id/testing/until'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

// `privacy export | erase` through a running server's admin socket (its ingest learns the erased
// visitor at once), then the store searched with the server stopped.
const data = tempDir('vid-cli-privacy-')
let server: ServerProcess | undefined
let boot: BootstrapFile
const email = 'grace.cli@example.com'
const visitorId = crypto.randomUUID()
const sessionId = crypto.randomUUID()

const cli = (args: string[]) => runCli(args, { DATA_DIR: data.dir })

const hit = (extra: object) =>
  fetch(`${server!.url}/collect`, {
    method: 'POST',
    headers: {
      'content-type': 'text/plain;charset=UTF-8',
      'user-agent':
        'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
    },
    body: JSON.stringify({ k: boot.trackingKey, v: visitorId, s: sessionId, ts: Date.now(), ...extra }),
  })

beforeAll(async () => {
  server = await startServerProcess({ DATA_DIR: data.dir })
  boot = JSON.parse(readFileSync(path.join(data.dir, 'bootstrap.json'), 'utf8')) as BootstrapFile
  expect((await hit({ e: 'pv', u: 'https://shop.test/' })).status).toBe(202)
  expect((await hit({ e: 'id', u: 'https://shop.test/', em: email })).status).toBe(202)
  // Identified once the profile shows the email.
  await until(async () => {
    const response = await fetch(
      `${server!.url}/api/v1/visitor-tracking/${boot.organizationId}/visitors/${visitorId}`,
      {
        headers: { 'x-api-key': boot.apiKey },
      },
    )
    return response.status === 200 && (await response.text()).includes(email) ? true : undefined
  })
}, 60_000)

afterAll(async () => {
  await killServerProcess(server)
  data.remove()
})

describe('privacy', () => {
  it('export writes what is held about the person to a file only its owner reads', async () => {
    const result = await cli([
      'privacy',
      'export',
      '--org',
      boot.organizationId,
      '--email',
      email,
      '--out',
      'grace.json',
    ])
    expect(result.code, result.stderr).toBe(0)
    const file = path.join(process.cwd(), 'grace.json')
    try {
      expect(statSync(file).mode & 0o777).toBe(0o600)
      const exported = JSON.parse(readFileSync(file, 'utf8'))
      expect(exported.found.visitorIds).toEqual([visitorId])
      expect(exported.tables.visitors.rows).toMatchObject([{ email }])
    } finally {
      const { rmSync } = await import('node:fs')
      rmSync(file, { force: true })
    }
  })

  it('refuses bad arguments with one line', async () => {
    for (const [args, message] of [
      [['privacy', 'forget'], /erase or export/],
      [['privacy', 'erase', '--email', email], /needs --org/],
      [['privacy', 'erase', '--org', boot.organizationId], /exactly one of/],
      [
        ['privacy', 'erase', '--org', boot.organizationId, '--email', email, '--visitor-id', visitorId],
        /exactly one of/,
      ],
      [['privacy', 'erase', '--org', boot.organizationId, '--email', 'nope'], /--email must be an email/],
      [['privacy', 'erase', '--org', crypto.randomUUID(), '--email', email], /No organization/],
    ] as const) {
      const result = await cli([...args])
      expect(result.code, result.stderr).toBe(2)
      expect(result.stderr).toMatch(message)
      expect(result.stderr).not.toMatch(/\n\s+at /)
    }
  })

  it('erase removes the person; the running server stores their browser as a new visitor; the store holds nothing of them', async () => {
    const result = await cli(['privacy', 'erase', '--org', boot.organizationId, '--email', email])
    expect(result.code, result.stderr).toBe(0)
    expect(JSON.parse(result.stdout)).toMatchObject({
      keyKind: 'email',
      visitors: 1,
      rows: { visitors: expect.any(Number) },
    })
    expect((await hit({ e: 'pv', u: 'https://shop.test/after' })).status).toBe(202)
    server!.child.kill('SIGTERM')
    await server!.exit
    server = undefined
    const store = createStore({ database: 'default', dataDir: data.dir })
    try {
      const [after] = await store.query<{ visitor_id: string }>(
        "SELECT toString(visitor_id) AS visitor_id FROM page_views WHERE path = '/after'",
      )
      expect(after?.visitor_id).toMatch(/^[0-9a-f-]{36}$/)
      expect(after?.visitor_id).not.toBe(visitorId)
      expect(await tablesNaming(store, [email])).toEqual({})
    } finally {
      await store.close()
    }
  }, 60_000)
})
