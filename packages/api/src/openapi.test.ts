import { readFileSync } from 'node:fs'
import {
  createMemoryCoordination,
  createRepositories,
  createStore,
  errorCatalogue,
  loadConfig,
} from '@visitor-id/core'
import Fastify from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiDocsPlugin } from './docs-plugin.js'
import { buildOpenApiDocument, type OpenApiDocument, routeErrorCodes } from './openapi.js'
import { apiPlugin } from './plugin.js'
import { routes } from './routes/index.js'
import { errorBody, type Harness, startHarness } from './testing/harness.js'

let h: Harness
let served: OpenApiDocument

beforeAll(async () => {
  h = await startHarness()
  served = (await h.server.app.inject({ method: 'GET', url: '/openapi.json' })).json()
})

afterAll(async () => {
  await h?.stop()
})

const operations = (document: OpenApiDocument) =>
  Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ path, method: method.toUpperCase(), operation })),
  )

describe('the route table, the registered routes and the document', () => {
  it('registers exactly the routes of the table, all of them in the document', async () => {
    // A separate instance only to list what the plugin registers; no request reaches its store.
    const registered: string[] = []
    const app = Fastify({ logger: false })
    app.addHook('onRoute', (route) => {
      for (const method of [route.method].flat()) {
        if (method !== 'HEAD') registered.push(`${method} ${route.url.replace(/:(\w+)/g, '{$1}')}`)
      }
    })
    const store = createStore({ url: 'http://127.0.0.1:9', database: 'default', dataDir: '/nonexistent' })
    const coordination = createMemoryCoordination()
    await app.register(apiPlugin, {
      prefix: '/api/v1',
      config: loadConfig({}),
      store,
      repos: createRepositories(store),
      coordination,
    })
    await app.register(apiDocsPlugin)
    await app.ready()
    await app.close()
    await coordination.close()
    await store.close()

    const api = registered.filter((r) => r.includes(' /api/v1')).sort()
    const table = routes.map((r) => `${r.method} /api/v1${r.path}`).sort()
    const documented = operations(served)
      .map((o) => `${o.method} ${o.path}`)
      .sort()
    expect(api).toEqual(table)
    expect(documented).toEqual(table)
    expect(registered.filter((r) => !r.includes(' /api/v1')).sort()).toEqual([
      'GET /docs',
      'GET /openapi.json',
    ])
  })

  it('serves the document the table builds', () => {
    expect(served).toEqual(JSON.parse(JSON.stringify(buildOpenApiDocument(routes))))
    expect(served.openapi).toBe('3.1.0')
  })

  it('documents every operation fully', () => {
    const ids = new Set<string>()
    for (const { path, method, operation } of operations(served)) {
      const label = `${method} ${path}`
      expect(ids.has(operation.operationId), label).toBe(false)
      ids.add(operation.operationId)
      const templated = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1])
      const inPath = operation.parameters.filter((p) => p.in === 'path').map((p) => p.name)
      expect(inPath.sort(), label).toEqual(templated.sort())
      expect(operation.security.length, label).toBe(1)
      expect(Object.keys(operation.responses), label).toEqual(
        expect.arrayContaining(['200', '401', '403', '429', '500']),
      )
      expect(JSON.stringify(operation), label).not.toContain('$defs')
      if (['POST', 'PUT', 'PATCH'].includes(method)) {
        expect(operation.requestBody, label).toBeDefined()
        expect(Object.keys(operation.responses), label).toEqual(expect.arrayContaining(['400', '413', '415']))
      }
    }
    expect(ids.size).toBe(routes.length)
  })

  it('documents route examples that pass their own schemas', () => {
    for (const route of routes) {
      const example = route.example({
        organizationId: '00000000-0000-4000-8000-000000000001',
        memberUserId: '00000000-0000-4000-8000-000000000002',
        visitorId: '00000000-0000-4000-8000-000000000003',
        keyId: 'key_x',
      })
      if (route.params) expect(route.params.safeParse(example.params).success, route.operationId).toBe(true)
      if (route.query) expect(route.query.safeParse(example.query).success, route.operationId).toBe(true)
      if (route.body) expect(route.body.safeParse(example.body).success, route.operationId).toBe(true)
      else expect(example.body, route.operationId).toBeUndefined()
    }
  })
})

describe('the error catalogue', () => {
  it('is the enum of the documented error body', () => {
    const error = served.components.schemas.Error as { properties: { code: { enum: string[] } } }
    expect(error.properties.code.enum.sort()).toEqual(Object.keys(errorCatalogue).sort())
  })

  it('is listed in the API README with its statuses', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
    for (const [code, { statusCode }] of Object.entries(errorCatalogue)) {
      expect(readme, code).toMatch(new RegExp(`\\|\\s*\`${code}\`\\s*\\|\\s*${statusCode}\\s*\\|`))
    }
  })

  it('gives every documented error status its codes', () => {
    for (const route of routes) {
      const responses = served.paths[`/api/v1${route.path}`]![route.method.toLowerCase()]!.responses
      for (const code of routeErrorCodes(route)) {
        expect(
          responses[String(errorCatalogue[code].statusCode)]?.description,
          `${route.operationId} ${code}`,
        ).toContain(code)
      }
    }
  })
})

describe('/docs', () => {
  it('shows every route, self-contained', async () => {
    const response = await h.server.app.inject({ method: 'GET', url: '/docs' })
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toMatch(/^text\/html/)
    expect(response.headers['content-security-policy']).toContain("default-src 'none'")
    for (const route of routes) {
      expect(response.body).toContain(`/api/v1${route.path}`)
      expect(response.body).toContain(`id="${route.operationId}"`)
    }
    expect(response.body).not.toMatch(/<script|src="http|href="http/)
  })
})

describe('errors outside the routes', () => {
  it('unknown /api/v1 routes and methods: 404 with the error body', async () => {
    for (const [method, url] of [
      ['GET', '/api/v1/nope'],
      ['PATCH', '/api/v1/organization/list'],
      ['POST', '/api/v1/ping'],
    ] as const) {
      const response = await h.request({ method, url })
      expect(response.statusCode).toBe(404)
      expect(response.json()).toEqual(errorBody(404, 'route_not_found'))
    }
  })
})
