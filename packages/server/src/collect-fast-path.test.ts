import { loadConfig } from '@visitor-id/core/config'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type RunningServer, startServer } from './runtime.js'

// POST /collect over HTTP takes the lean path (collect-fast-path.ts) for the pixel's usual request;
// with a query string the same request goes through Fastify's route. Both must answer alike.
const data = tempDir('vid-fast-path-')
let server: RunningServer

beforeAll(async () => {
  server = await startServer(
    loadConfig({ DATA_DIR: data.dir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', TRUST_PROXY: '1' }),
  )
})

afterAll(async () => {
  await server.stop()
  data.remove()
})

const hit = (overrides: Record<string, unknown> = {}) => ({
  k: 'pk_000000000000000000000000',
  e: 'pv',
  v: '00000000-0000-4000-8000-000000000001',
  s: '00000000-0000-4000-8000-000000000002',
  u: 'https://x.test/',
  ...overrides,
})

const compared = ['access-control-allow-origin', 'content-type', 'content-length', 'retry-after', 'allow']

async function answer(path: string, contentType: string, body: string) {
  const response = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': contentType, 'x-forwarded-for': '203.0.113.9' },
    body,
  })
  const headers = Object.fromEntries(compared.map((name) => [name, response.headers.get(name)]))
  return { status: response.status, headers, body: await response.text() }
}

describe('POST /collect: the lean path answers as the Fastify route does', () => {
  it.each([
    ['a hit', 'text/plain;charset=UTF-8', JSON.stringify(hit())],
    ['a batch', 'application/json', JSON.stringify([hit(), hit({ e: 'en' })])],
    ['invalid JSON', 'text/plain', '{"k":'],
    ['a hit that fails validation', 'text/plain', JSON.stringify({ k: 1, e: 'pv' })],
    ['an empty batch', 'text/plain', '[]'],
    ['a body that is not a hit', 'application/json; charset=utf-8', '"text"'],
  ])('%s', async (_name, contentType, body) => {
    const lean = await answer('/collect', contentType, body)
    const routed = await answer('/collect?via=fastify', contentType, body)
    expect(lean).toEqual(routed)
    expect(lean.status).toBeGreaterThanOrEqual(200)
  })

  it('what the lean path leaves to Fastify is still answered: 415, 413', async () => {
    expect((await answer('/collect', 'application/xml', '<hit/>')).status).toBe(415)
    const large = await answer('/collect', 'text/plain', JSON.stringify({ k: 'x'.repeat(20_000) }))
    expect(large.status).toBe(413)
    expect(JSON.parse(large.body).code).toBe('payload_too_large')
  })
})
