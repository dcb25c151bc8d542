import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { gunzipSync } from 'node:zlib'
import { tempDir } from '@visitor-id/testing/temp-dir'
import Fastify, { type FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { dashboardCsp, dashboardPlugin } from './dashboard.js'

// The dashboard's static serving on its own: a fake build in a temporary directory, and none.
const built = tempDir('vid-dashboard-dist-')
const script = 'app-0123456789.js'
let app: FastifyInstance
let bare: FastifyInstance

beforeAll(async () => {
  mkdirSync(path.join(built.dir, 'types'))
  writeFileSync(path.join(built.dir, 'index.html'), `<!doctype html><script src="/app/${script}"></script>`)
  writeFileSync(path.join(built.dir, script), `console.log(${JSON.stringify('x'.repeat(2000))})`)
  writeFileSync(path.join(built.dir, 'types', 'main.d.ts'), 'export {}')
  app = Fastify()
  await app.register(async (scope) => dashboardPlugin(scope, { dir: built.dir }))
  bare = Fastify()
  await bare.register(async (scope) => dashboardPlugin(scope, { dir: path.join(built.dir, 'nothing-here') }))
})

afterAll(async () => {
  await app.close()
  await bare.close()
  built.remove()
})

describe('dashboard serving', () => {
  it('serves the page at /app, /app/ and any deep link, revalidated, with a self-only CSP', async () => {
    for (const url of ['/app', '/app/', '/app/companies', '/app/settings']) {
      const response = await app.inject({ url })
      expect(response.statusCode, url).toBe(200)
      expect(response.headers['content-type']).toBe('text/html; charset=utf-8')
      expect(response.headers['cache-control']).toBe('no-cache')
      expect(response.headers['content-security-policy']).toBe(dashboardCsp)
      expect(response.headers['x-frame-options']).toBe('DENY')
      expect(response.body).toContain(script)
    }
    expect(dashboardCsp).not.toContain('unsafe')
  })

  it('serves hashed assets for a year, compressed when accepted, and 304 on a matching ETag', async () => {
    const plain = await app.inject({ url: `/app/${script}` })
    expect(plain.statusCode).toBe(200)
    expect(plain.headers['content-type']).toBe('text/javascript; charset=utf-8')
    expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable')
    const gzip = await app.inject({ url: `/app/${script}`, headers: { 'accept-encoding': 'gzip' } })
    expect(gzip.headers['content-encoding']).toBe('gzip')
    expect(gunzipSync(gzip.rawPayload).toString()).toBe(plain.body)
    expect(gzip.rawPayload.length).toBeLessThan(plain.rawPayload.length)
    const cached = await app.inject({
      url: `/app/${script}`,
      headers: { 'if-none-match': String(plain.headers.etag) },
    })
    expect(cached.statusCode).toBe(304)
  })

  it('answers 404 for a file the build lacks, and serves nothing below the top level', async () => {
    const stale = await app.inject({ url: '/app/app-ffffffffff.js' })
    expect(stale.statusCode).toBe(404)
    expect(stale.json()).toMatchObject({ code: 'route_not_found' })
    expect((await app.inject({ url: '/app/types/main.d.ts' })).statusCode).toBe(404)
    expect((await app.inject({ url: '/app/..%2Fpackage.json' })).statusCode).toBe(404)
  })

  it('says how to build the dashboard when there is no build', async () => {
    const response = await bare.inject({ url: '/app' })
    expect(response.statusCode).toBe(200)
    expect(response.body).toContain('npm run build')
    expect((await bare.inject({ url: '/app/companies' })).body).toContain('npm run build')
  })
})
