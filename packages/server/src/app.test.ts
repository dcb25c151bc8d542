import { loadConfig } from '@visitor-id/core/config'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type RunningServer, startServer } from './runtime.js'

const data = tempDir('vid-app-')
let server: RunningServer

beforeAll(async () => {
  server = await startServer(
    loadConfig({ DATA_DIR: data.dir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent' }),
  )
})

afterAll(async () => {
  await server.stop()
  data.remove()
})

const errorShape = (statusCode: number, code: string) => ({
  statusCode,
  error: expect.any(String),
  code,
  message: expect.any(String),
})

describe('HTTP error bodies', () => {
  it('unknown routes: 404 with the error body', async () => {
    const response = await server.app.inject({ method: 'GET', url: '/nope?x=1' })
    expect(response.statusCode).toBe(404)
    expect(response.json()).toEqual(errorShape(404, 'route_not_found'))
    const api = await server.app.inject({ method: 'DELETE', url: '/api/v1/nothing-here' })
    expect(api.json()).toEqual(errorShape(404, 'route_not_found'))
    // The body is parsed before the not-found handler: a body the parser refuses does not hide the path.
    const emptyJson = await server.app.inject({
      method: 'POST',
      url: '/api/v1/partner/webhooks/logs/./redeliver',
      headers: { 'content-type': 'application/json' },
      payload: '',
    })
    expect(emptyJson.json()).toEqual(errorShape(404, 'route_not_found'))
  })

  it('a path served with other methods: 405 with Allow, for the API, ingest and operations alike', async () => {
    for (const [method, url, allow] of [
      ['DELETE', '/api/v1/ping', 'GET, HEAD'],
      ['PUT', '/api/v1/partner/organizations', 'GET, HEAD'],
      ['GET', '/collect', 'POST'],
      ['DELETE', '/p.js', 'GET, HEAD'],
      ['POST', '/i.gif?k=x', 'GET, HEAD'],
      ['POST', '/c/pk_000000000000000000000000', 'GET, HEAD'],
      ['POST', '/healthz', 'GET, HEAD'],
      ['PUT', '/metrics', 'GET, HEAD'],
    ] as const) {
      const response = await server.app.inject({ method, url })
      expect(response.statusCode, `${method} ${url}`).toBe(405)
      expect(response.headers.allow, `${method} ${url}`).toBe(allow)
      expect(response.json()).toEqual(errorShape(405, 'method_not_allowed'))
    }
    // Over HTTP too, and a path that is nowhere stays 404.
    const viaHttp = await fetch(`${server.url}/api/v1/ping`, { method: 'DELETE' })
    expect(viaHttp.status).toBe(405)
    expect(viaHttp.headers.get('allow')).toBe('GET, HEAD')
    expect((await server.app.inject({ method: 'DELETE', url: '/api/v1/ping/extra' })).statusCode).toBe(404)
  })

  it('invalid JSON: 400 invalid_json', async () => {
    for (const contentType of ['text/plain', 'application/json']) {
      const response = await server.app.inject({
        method: 'POST',
        url: '/collect',
        headers: { 'content-type': contentType },
        payload: '{"k":',
      })
      expect(response.statusCode).toBe(400)
      expect(response.json()).toEqual(errorShape(400, 'invalid_json'))
    }
  })

  it('wrong content type: 415', async () => {
    const response = await server.app.inject({
      method: 'POST',
      url: '/collect',
      headers: { 'content-type': 'application/xml' },
      payload: '<hit/>',
    })
    expect(response.statusCode).toBe(415)
    expect(response.json()).toEqual(errorShape(415, 'unsupported_media_type'))
  })

  it('oversized body: 413', async () => {
    const response = await server.app.inject({
      method: 'POST',
      url: '/collect',
      headers: { 'content-type': 'text/plain' },
      payload: JSON.stringify({ k: 'x'.repeat(20_000) }),
    })
    expect(response.statusCode).toBe(413)
    expect(response.json()).toEqual(errorShape(413, 'payload_too_large'))
  })

  it('a hit that fails validation: 400 with the failing fields', async () => {
    const response = await server.app.inject({
      method: 'POST',
      url: '/collect',
      headers: { 'content-type': 'text/plain' },
      payload: JSON.stringify({ k: 1, e: 'pv' }),
    })
    expect(response.statusCode).toBe(400)
    const body = response.json()
    expect(body).toMatchObject(errorShape(400, 'invalid_request'))
    expect(body.details.issues.map((i: { path: string }) => i.path)).toEqual(
      expect.arrayContaining(['k', 'v', 's', 'u']),
    )
  })

  it('an unknown tracking key is accepted and dropped, like a known one', async () => {
    const response = await server.app.inject({
      method: 'POST',
      url: '/collect',
      headers: { 'content-type': 'text/plain' },
      payload: JSON.stringify({
        k: 'pk_000000000000000000000000',
        e: 'pv',
        v: '00000000-0000-4000-8000-000000000001',
        s: '00000000-0000-4000-8000-000000000002',
        u: 'https://x.test/',
      }),
    })
    expect(response.statusCode).toBe(202)
  })

  it('malformed keys get 401, never 500', async () => {
    for (const key of ['', 'bsk_live_', 'bsk_live_ZZ', `bsk_live_${'a'.repeat(32)}`, 'x'.repeat(5000)]) {
      const response = await server.app.inject({
        method: 'GET',
        url: '/api/v1/visitor-tracking/00000000-0000-4000-8000-000000000001/visitors/00000000-0000-4000-8000-000000000002',
        headers: { 'x-api-key': key },
      })
      expect(response.statusCode).toBe(401)
      expect(response.json()).toEqual(errorShape(401, 'unauthorized'))
    }
  })
})

describe('GET /metrics without METRICS_TOKEN', () => {
  it('answers a loopback client, and no other', async () => {
    const local = await fetch(`${server.url}/metrics`)
    expect(local.status).toBe(200)
    expect(await local.text()).toContain('vid_ingest_hits_accepted_total')
    const remote = await server.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '203.0.113.9' })
    expect(remote.statusCode).toBe(403)
    expect(remote.json()).toEqual(errorShape(403, 'forbidden'))
  })

  it("exports the process's memory and the embedded engine's bounds", async () => {
    const text = await (await fetch(`${server.url}/metrics`)).text()
    const value = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1])
    const rss = value('vid_process_resident_memory_bytes')
    // This process holds the engine too: tens of MB at least, and the figure is the live one.
    expect(rss).toBeGreaterThan(30 * 1024 ** 2)
    expect(Math.abs(rss - process.memoryUsage.rss()) / rss).toBeLessThan(0.5)
    expect(value('vid_process_heap_used_bytes')).toBeGreaterThan(0)
    expect(value('vid_process_heap_used_bytes')).toBeLessThanOrEqual(value('vid_process_heap_total_bytes'))
    expect(value('vid_process_external_bytes')).toBeGreaterThan(0)
    expect(value('vid_store_memory_limit_bytes')).toBe(768 * 1024 ** 2)
    expect(value('vid_store_query_memory_limit_bytes')).toBe(384 * 1024 ** 2)
  })

  it('is documented as loopback-only, without a token', async () => {
    const document = (await server.app.inject({ method: 'GET', url: '/openapi.json' })).json()
    const operation = document.paths['/metrics'].get
    expect(operation.security).toEqual([])
    expect(operation.description).toContain('loopback')
    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['200', '403']))
  })
})
