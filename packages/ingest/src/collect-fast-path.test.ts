import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { BatchWriter } from './batch-writer.js'
import { createCollect, createIngest } from './collect.js'
import { createCollectFastPath, forwardedClient } from './collect-fast-path.js'
import { createIngestMetrics, createMetricsRegistry } from './metrics.js'
import type { PageViewRow } from './page-view-row.js'
import type { HitPipeline } from './pipeline/index.js'

describe('forwardedClient (the lean path reads the client as Fastify does with TRUST_PROXY)', () => {
  it('is the leftmost address, spaces around it ignored', () => {
    expect(forwardedClient('203.0.113.9')).toBe('203.0.113.9')
    expect(forwardedClient('203.0.113.9, 10.0.0.1, 10.0.0.2')).toBe('203.0.113.9')
    expect(forwardedClient('  2001:db8::1 ,10.0.0.1')).toBe('2001:db8::1')
  })

  it('skips empty entries; none at all leaves the socket address', () => {
    expect(forwardedClient(' , ,198.51.100.4')).toBe('198.51.100.4')
    expect(forwardedClient('')).toBeUndefined()
    expect(forwardedClient(' , ')).toBeUndefined()
    expect(forwardedClient(undefined)).toBeUndefined()
  })
})

describe('the lean path while the spool is full', () => {
  const registry = createMetricsRegistry()
  const metrics = createIngestMetrics(registry, () => 0)
  const silentLog = { warn() {}, error() {}, info() {} }
  // Overloaded: the hit is refused before the pipeline or the writer is asked.
  const ingest = createIngest(
    {
      pipeline: {} as HitPipeline,
      writer: {} as BatchWriter<PageViewRow>,
      metrics,
      isOverloaded: () => true,
    },
    () => silentLog,
  )
  const fastPath = createCollectFastPath({
    collect: createCollect(ingest, metrics),
    bodyLimit: 16 * 1024,
    trustProxy: false,
    log: () => silentLog,
    closing: () => false,
  })
  let server: Server
  let url: string
  beforeAll(async () => {
    server = createServer((request, response) => {
      if (!fastPath(request, response)) response.writeHead(404).end()
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/collect`
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  it('answers 503 with Retry-After, CORS and the error body', async () => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: JSON.stringify({
        k: 'pk_000000000000000000000000',
        e: 'pv',
        v: '00000000-0000-4000-8000-000000000001',
        s: '00000000-0000-4000-8000-000000000002',
        u: 'https://x.test/',
      }),
    })
    expect(response.status).toBe(503)
    expect(response.headers.get('retry-after')).toBe('30')
    expect(response.headers.get('access-control-allow-origin')).toBe('*')
    expect(await response.json()).toMatchObject({ statusCode: 503, code: 'service_unavailable' })
  })
})
