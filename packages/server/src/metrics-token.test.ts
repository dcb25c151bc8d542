import { loadConfig } from '@visitor-id/core/config'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type RunningServer, startServer } from './runtime.js'

// METRICS_TOKEN from the environment to the /metrics guard and the served docs.
const token = 'metrics-token-for-the-test-0123'
const data = tempDir('vid-metrics-')
let server: RunningServer

beforeAll(async () => {
  server = await startServer(
    loadConfig({
      DATA_DIR: data.dir,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      METRICS_TOKEN: token,
    }),
  )
})

afterAll(async () => {
  await server.stop()
  data.remove()
})

describe('GET /metrics with METRICS_TOKEN set', () => {
  it('wants the token, from loopback too', async () => {
    const without = await fetch(`${server.url}/metrics`)
    expect(without.status).toBe(401)
    expect(without.headers.get('www-authenticate')).toBe('Bearer realm="metrics"')
    expect(await without.json()).toMatchObject({ statusCode: 401, code: 'unauthorized' })
    const wrong = await fetch(`${server.url}/metrics`, { headers: { authorization: 'Bearer nope' } })
    expect(wrong.status).toBe(401)
    const right = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${token}` } })
    expect(right.status).toBe(200)
    expect(await right.text()).toContain('vid_ingest_hits_dropped_total{reason="bot"}')
  })

  it('answers the token from a non-loopback client', async () => {
    const response = await server.app.inject({
      method: 'GET',
      url: '/metrics',
      remoteAddress: '203.0.113.9',
      headers: { authorization: `Bearer ${token}` },
    })
    expect(response.statusCode).toBe(200)
  })

  it('is documented with its bearer scheme, and the docs page shows how to send it', async () => {
    const document = (await server.app.inject({ method: 'GET', url: '/openapi.json' })).json()
    expect(document.paths['/metrics'].get.security).toEqual([{ MetricsToken: [] }])
    expect(document.components.securitySchemes.MetricsToken).toMatchObject({ type: 'http', scheme: 'bearer' })
    expect(Object.keys(document.paths['/metrics'].get.responses)).toEqual(['200', '401', '500'])
    const page = (await server.app.inject({ method: 'GET', url: '/docs' })).body
    expect(page).toContain('Authorization: Bearer $METRICS_TOKEN')
    expect(JSON.stringify(document)).not.toContain(token)
    expect(page).not.toContain(token)
  })
})
