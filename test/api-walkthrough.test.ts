import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { type ServerProcess, startServerProcess } from '@visitor-id/testing/server-process'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

// The README's "API walkthrough" over real HTTP against a real server process: from the bootstrap
// key to a visitor profile, then revocation.
const data = tempDir('vid-api-e2e-')
let server: ServerProcess
let api: string
let boot: { organizationId: string; apiKey: string }

beforeAll(async () => {
  server = await startServerProcess({ DATA_DIR: data.dir })
  api = `${server.url}/api/v1`
  boot = JSON.parse(readFileSync(path.join(data.dir, 'bootstrap.json'), 'utf8'))
})

afterAll(async () => {
  if (server?.child.exitCode === null) {
    server.child.kill('SIGTERM')
    await server.exit
  }
  data.remove()
})

// Replies are checked field by field below; a loose type keeps that readable.
// biome-ignore lint/suspicious/noExplicitAny: JSON replies of several shapes
type Reply = Record<string, any>

const call = async (method: string, url: string, key: string, body?: unknown) => {
  const response = await fetch(url, {
    method,
    headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  return { status: response.status, headers: response.headers, body: (await response.json()) as Reply }
}

describe('API walkthrough over HTTP', () => {
  it('goes from the bootstrap key to a visitor profile, then revokes a key', async () => {
    const ping = await call('GET', `${api}/ping`, boot.apiKey)
    expect(ping.status).toBe(200)
    expect(ping.headers.get('x-ratelimit-limit')).toBe('1000')

    const created = await call('POST', `${api}/organization/${boot.organizationId}/api-keys`, boot.apiKey, {
      name: 'reporting',
      scopes: ['read'],
    })
    expect(created.status).toBe(200)
    const readKey: string = created.body.plainKey
    const readKeyId: string = created.body.apiKey.id

    const pixel = await call('GET', `${api}/visitor-tracking/${boot.organizationId}`, readKey)
    expect(pixel.status).toBe(200)
    const updated = await call(
      'PUT',
      `${api}/visitor-tracking/${boot.organizationId}/pixel-config`,
      boot.apiKey,
      {
        verifiedDomains: ['example.com'],
      },
    )
    expect(updated.body.pixelConfig.verifiedDomains).toEqual(['example.com'])
    const snippet = await call(
      'GET',
      `${api}/visitor-tracking/${boot.organizationId}/installation/script/jsSnippet`,
      readKey,
    )
    expect(snippet.body.script).toContain(pixel.body.pixelConfig.trackingKey)
    expect(snippet.body.script).toContain(`${server.url}/p.js`)

    const visitorId = randomUUID()
    const hit = await fetch(`${server.url}/collect`, {
      method: 'POST',
      headers: {
        'content-type': 'text/plain',
        origin: 'https://example.com',
        'user-agent':
          'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36',
      },
      body: JSON.stringify({
        k: pixel.body.pixelConfig.trackingKey,
        e: 'pv',
        v: visitorId,
        s: randomUUID(),
        u: 'https://example.com/pricing?utm_source=ad',
      }),
    })
    expect(hit.status).toBe(202)

    const profile = await call(
      'GET',
      `${api}/visitor-tracking/${boot.organizationId}/visitors/${visitorId}`,
      readKey,
    )
    expect(profile.status).toBe(200)
    expect(profile.body.sessions).toHaveLength(1)
    expect(profile.body.sessions[0]).toMatchObject({ utmSource: 'ad', exitPage: '/pricing' })
    expect(profile.body).not.toHaveProperty('phoneNumber')

    // An audience: a list over the (here empty) contacts dataset; its export says why it is empty.
    const list = await call('POST', `${api}/lists/save`, boot.apiKey, {
      organizationId: boot.organizationId,
      listName: 'CTOs',
      contacts_found: 0,
      filter: { contact: { job_titles: ['CTO'] } },
    })
    expect(list.body).toMatchObject({ name: 'CTOs', contactsNum: 0, autoUpdateStatus: 'disabled' })
    const audience = await call(
      'GET',
      `${api}/lists/${list.body.id}/chat-ads-export?organizationId=${boot.organizationId}`,
      readKey,
    )
    expect(audience.status).toBe(409)
    expect(audience.body.code).toBe('no_enriched_emails')

    const revoked = await call(
      'DELETE',
      `${api}/organization/${boot.organizationId}/api-keys/${readKeyId}`,
      boot.apiKey,
    )
    expect(revoked.body).toEqual({ success: true })
    const after = await call('GET', `${api}/ping`, readKey)
    expect(after.status).toBe(401)
    expect(after.body.code).toBe('unauthorized')
  })

  it('serves /docs and /openapi.json', async () => {
    const document = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
      openapi: string
      paths: object
    }
    expect(document.openapi).toBe('3.1.0')
    const docs = await fetch(`${server.url}/docs`)
    expect(docs.headers.get('content-type')).toMatch(/text\/html/)
    const page = await docs.text()
    for (const path of Object.keys(document.paths)) expect(page).toContain(path)
  })
})
