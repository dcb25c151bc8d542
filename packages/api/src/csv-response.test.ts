// CSV downloads through registerRoutes, with probe routes: headers, body, BOM, errors before and
// after the first byte, HEAD, a client that leaves, and what the document says.
import { request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'
import { appError } from '@visitor-id/core/errors'
import { errorBody, type Harness, startHarness } from '@visitor-id/testing/harness'
import { type ProbeApp, startProbeApp } from '@visitor-id/testing/probe-app'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { bomParam, type CsvColumn, encodeCsv } from './csv.js'
import { renderDocsPage } from './docs-page.js'
import { buildOpenApiDocument } from './openapi.js'
import { registerRoutes } from './register-routes.js'
import { csvReply, csvResponse, defineRoute, type Route } from './route-definition.js'

type Company = { domain: string; visitors: number }
const columns: CsvColumn<Company>[] = [
  { header: 'domain', value: (row) => row.domain },
  { header: 'visitors', value: (row) => row.visitors },
]

/** Rows pulled by the last download, and whether its generator has finished (ended or stopped). */
const progress = { pulled: 0, finished: false }

const probe = (overrides: Partial<Route> = {}): Route => ({
  ...defineRoute({
    operationId: 'probeCsvExport',
    method: 'GET',
    path: '/probe/export',
    auth: 'organization',
    scope: 'read',
    tenancy: 'caller',
    tag: 'Test',
    summary: 'A CSV download',
    query: z.object({
      bom: bomParam,
      name: z.string().max(300).default('companies.csv'),
      rows: z.coerce.number().int().min(0).max(1_000_000).default(3),
      fail: z.enum(['handler', 'first-row', 'later']).optional(),
    }),
    response: csvResponse('The companies, one per line'),
    errors: ['conflict'],
    example: () => ({ query: {} }),
    async handler({ query }) {
      if (query.fail === 'handler') throw appError('conflict', 'Nothing to export')
      async function* rows(): AsyncGenerator<Company> {
        try {
          for (let i = 0; i < query.rows; i++) {
            if (query.fail === 'first-row') throw appError('not_plus_employee')
            if (query.fail === 'later' && i === 50_000) throw new Error('the store went away')
            progress.pulled++
            yield { domain: i === 0 ? '=evil.example' : `c${i}.example`, visitors: i - 1 }
          }
        } finally {
          progress.finished = true
        }
      }
      return { filename: query.name, body: encodeCsv(columns, rows(), { bom: query.bom }) }
    },
  }),
  ...overrides,
})

let h: Harness
let probes: ProbeApp

beforeAll(async () => {
  h = await startHarness()
  probes = await startProbeApp(h, [probe()], registerRoutes)
})

afterAll(async () => {
  await probes?.close()
  await h?.stop()
})

beforeEach(() => {
  progress.pulled = 0
  progress.finished = false
})

const download = (query = '', method: 'GET' | 'HEAD' = 'GET') =>
  probes.app.inject({ method, url: `/api/v1/probe/export${query}`, headers: { 'x-api-key': h.boot.apiKey } })

const until = async (condition: () => boolean) => {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10))
}

describe('a CSV route', () => {
  it('streams text/csv as an attachment: header row, CRLF lines, formula-safe cells', async () => {
    const response = await download()
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toBe('text/csv; charset=utf-8')
    expect(response.headers['content-disposition']).toBe('attachment; filename="companies.csv"')
    expect(response.headers['x-ratelimit-limit']).toBe('1000')
    expect(response.body).toBe("domain,visitors\r\n'=evil.example,-1\r\nc1.example,0\r\nc2.example,1\r\n")
  })

  it('starts with a UTF-8 BOM with ?bom=1 only; another value is the JSON 400', async () => {
    const withBom = await download('?bom=1')
    expect([...withBom.rawPayload.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf])
    expect(withBom.rawPayload.subarray(3).toString('utf8')).toMatch(/^domain,visitors\r\n/)
    for (const query of ['', '?bom=0']) expect((await download(query)).rawPayload[0]).toBe(0x64)
    const invalid = await download('?bom=yes')
    expect(invalid.statusCode).toBe(400)
    expect(invalid.json()).toMatchObject({ code: 'invalid_request', details: { issues: [{ path: 'bom' }] } })
  })

  it('answers a 4xx thrown by the handler, or while the first rows are made, as the JSON error', async () => {
    for (const [fail, status, code] of [
      ['handler', 409, 'conflict'],
      ['first-row', 403, 'not_plus_employee'],
    ] as const) {
      const response = await download(`?fail=${fail}`)
      expect(response.statusCode, fail).toBe(status)
      expect(response.headers['content-type']).toMatch(/^application\/json/)
      expect(response.headers['content-disposition']).toBeUndefined()
      expect(response.json()).toEqual(errorBody(status, code))
    }
    expect(progress.finished).toBe(true)
  })

  it('cuts the download short when the rows fail after the first bytes', async () => {
    // The status and headers are gone: the connection is closed mid-body, which a client sees as
    // an incomplete response (no final chunk), not as a complete file.
    await expect(download('?rows=100000&fail=later')).rejects.toThrow()
    expect(progress.pulled).toBe(50_000)
    expect(progress.finished).toBe(true)
  })

  it('reduces the file name to [A-Za-z0-9._-]', async () => {
    const names: [string, string][] = [
      ['report-2026_01.csv', 'report-2026_01.csv'],
      ['../../etc/passwd', '_.._etc_passwd'],
      ['report "Q1"\r\nSet-Cookie: a=b.csv', 'report_Q1_Set-Cookie_a_b.csv'],
      ['Société générale.csv', 'Soci_t_g_n_rale.csv'],
      ['.hidden.csv', 'hidden.csv'],
      ['...', 'download.csv'],
      ['', 'download.csv'],
    ]
    for (const [name, safe] of names) {
      const response = await download(`?name=${encodeURIComponent(name)}`)
      expect(response.statusCode, name).toBe(200)
      expect(response.headers['content-disposition'], name).toBe(`attachment; filename="${safe}"`)
    }
  })

  it('answers HEAD with the headers alone, without making every row', async () => {
    const response = await download('?rows=1000000', 'HEAD')
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toBe('text/csv; charset=utf-8')
    expect(response.body).toBe('')
    await until(() => progress.finished)
    expect(progress.finished).toBe(true)
    expect(progress.pulled).toBeLessThan(10_000)
  })

  it('stops making rows when the client leaves mid-download', async () => {
    const address = await probes.app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = probes.app.server.address() as AddressInfo
    expect(address).toContain(String(port))
    const first = await new Promise<string>((resolve, reject) => {
      const request = httpRequest(
        {
          port,
          host: '127.0.0.1',
          path: '/api/v1/probe/export?rows=1000000',
          headers: { 'x-api-key': h.boot.apiKey },
        },
        (response) => {
          response.once('data', (chunk: Buffer) => {
            request.destroy()
            resolve(chunk.toString('utf8'))
          })
        },
      )
      request.on('error', reject)
      request.end()
    })
    expect(first).toMatch(/^domain,visitors\r\n/)
    await until(() => progress.finished)
    // Stopped early: what was made meanwhile sits in the sockets' buffers (a few MB on loopback).
    expect(progress.finished).toBe(true)
    expect(progress.pulled).toBeLessThan(1_000_000)
  })

  it('is refused unless declared with csvResponse and a bom query parameter', async () => {
    const rejected: [Route, RegExp][] = [
      [probe({ query: z.object({ name: z.string().default('x.csv') }) }), /bom/],
      [probe({ query: undefined }), /bom/],
      [
        probe({ response: { ...csvResponse('x'), schema: z.object({ filename: z.string() }) } }),
        /csvResponse/,
      ],
      [probe({ response: { ...csvResponse('x'), status: 201 } }), /csvResponse/],
    ]
    for (const [route, message] of rejected) await expect(probes.register([route])).rejects.toThrow(message)
  })

  it('is documented as a text/csv string, with the bom parameter and the attachment header', () => {
    const document = buildOpenApiDocument([probe()])
    const operation = document.paths['/api/v1/probe/export']!.get!
    const success = operation.responses['200']!
    expect(success.description).toBe('The companies, one per line')
    expect(success.content).toEqual({ 'text/csv': { schema: { type: 'string' } } })
    expect(Object.keys(success.headers ?? {})).toEqual(
      expect.arrayContaining(['Content-Disposition', 'X-RateLimit-Limit']),
    )
    expect(operation.parameters).toContainEqual(
      expect.objectContaining({
        name: 'bom',
        in: 'query',
        required: false,
        schema: expect.objectContaining({ enum: ['0', '1'] }),
      }),
    )
    expect(operation.responses['409']?.description).toContain('conflict')
    const page = renderDocsPage(document)
    expect(page).toContain('<code>text/csv</code>')
    expect(csvResponse('x').schema).toBe(csvReply)
  })
})
