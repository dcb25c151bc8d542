import { networkInterfaces } from 'node:os'
import { toErrorBody } from '@visitor-id/core/http-errors'
import Fastify, { type FastifyInstance } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { createMetricsRegistry, metricsPlugin } from './metrics.js'

const token = 'scrape-token-0123456789abcdef'
let app: FastifyInstance | undefined

afterEach(async () => {
  await app?.close()
  app = undefined
})

async function build(options: { token?: string; trustProxy?: boolean } = {}) {
  const registry = createMetricsRegistry()
  registry.counter('vid_test_total', 'A test counter.')(3)
  app = Fastify({ logger: false, trustProxy: options.trustProxy ?? false })
  app.setErrorHandler((error, _request, reply) => {
    const body = toErrorBody(error)
    return reply.code(body.statusCode).send(body)
  })
  await app.register(metricsPlugin, { registry, token: options.token })
  return app
}

describe('GET /metrics without METRICS_TOKEN', () => {
  it('answers loopback clients (IPv4, IPv6, IPv4-mapped)', async () => {
    const server = await build()
    for (const remoteAddress of ['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1']) {
      const response = await server.inject({ method: 'GET', url: '/metrics', remoteAddress })
      expect(response.statusCode, remoteAddress).toBe(200)
      expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/)
      expect(response.body).toContain('vid_test_total 3')
    }
  })

  it('refuses every other client with 403', async () => {
    const server = await build()
    for (const remoteAddress of [
      '203.0.113.7',
      '10.0.0.1',
      '::ffff:192.168.1.2',
      '2001:db8::1',
      '128.0.0.1',
    ]) {
      const response = await server.inject({ method: 'GET', url: '/metrics', remoteAddress })
      expect(response.statusCode, remoteAddress).toBe(403)
      expect(response.json()).toMatchObject({ statusCode: 403, code: 'forbidden' })
      expect(response.body).not.toContain('vid_test_total')
    }
  })

  it('judges the socket, not X-Forwarded-For, even when the proxy is trusted', async () => {
    const server = await build({ trustProxy: true })
    // A remote client claiming to be local.
    const spoofed = await server.inject({
      method: 'GET',
      url: '/metrics',
      remoteAddress: '203.0.113.7',
      headers: { 'x-forwarded-for': '127.0.0.1' },
    })
    expect(spoofed.statusCode).toBe(403)
    // A proxy on this host relaying a remote client: loopback socket, but not a local request.
    for (const headers of [{ 'x-forwarded-for': '203.0.113.7' }, { forwarded: 'for=203.0.113.7' }]) {
      const relayed = await server.inject({
        method: 'GET',
        url: '/metrics',
        remoteAddress: '127.0.0.1',
        headers,
      })
      expect(relayed.statusCode, JSON.stringify(headers)).toBe(403)
    }
  })
})

/** An address of this machine that is not loopback, if it has one. */
const externalAddress = Object.values(networkInterfaces())
  .flat()
  .find((entry) => entry && entry.family === 'IPv4' && !entry.internal)?.address

describe('GET /metrics over real sockets', () => {
  it('answers a loopback connection', async () => {
    const server = await build()
    const url = await server.listen({ host: '0.0.0.0', port: 0 })
    const port = new URL(url.replace('0.0.0.0', '127.0.0.1')).port
    expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(200)
  })

  it.skipIf(!externalAddress)('refuses a connection to a non-loopback address of this machine', async () => {
    const server = await build()
    const url = await server.listen({ host: '0.0.0.0', port: 0 })
    const port = new URL(url.replace('0.0.0.0', '127.0.0.1')).port
    const response = await fetch(`http://${externalAddress}:${port}/metrics`)
    expect(response.status).toBe(403)
  })
})

describe('GET /metrics with METRICS_TOKEN', () => {
  it('answers the bearer of the token, from anywhere', async () => {
    const server = await build({ token })
    for (const remoteAddress of ['203.0.113.7', '127.0.0.1']) {
      const response = await server.inject({
        method: 'GET',
        url: '/metrics',
        remoteAddress,
        headers: { authorization: `Bearer ${token}` },
      })
      expect(response.statusCode, remoteAddress).toBe(200)
      expect(response.body).toContain('vid_test_total 3')
    }
  })

  it('answers 401 with WWW-Authenticate to anyone else, loopback included', async () => {
    const server = await build({ token })
    for (const authorization of [
      undefined,
      '',
      token,
      `Basic ${token}`,
      `Bearer ${token}x`,
      `Bearer ${token.slice(0, -1)}`,
      'Bearer ',
      `Bearer ${token} extra`,
    ]) {
      const response = await server.inject({
        method: 'GET',
        url: '/metrics',
        remoteAddress: '127.0.0.1',
        headers: authorization === undefined ? {} : { authorization },
      })
      expect(response.statusCode, String(authorization)).toBe(401)
      expect(response.headers['www-authenticate']).toBe('Bearer realm="metrics"')
      expect(response.json()).toMatchObject({ statusCode: 401, code: 'unauthorized' })
      expect(response.body).not.toContain(token)
    }
  })
})
