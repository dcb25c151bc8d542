import { readFileSync } from 'node:fs'
import { loadConfig } from '@visitor-id/core/config'
import { createMemoryCoordination } from '@visitor-id/core/coordination'
import { type ErrorCode, errorCatalogue, reservedFor } from '@visitor-id/core/errors'
import { createRepositories } from '@visitor-id/core/repositories'
import { createStore } from '@visitor-id/core/store'
import { errorBody, type Harness, startHarness } from '@visitor-id/testing/harness'
import Fastify from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { renderDocsPage } from './docs-page.js'
import { apiDocsPlugin } from './docs-plugin.js'
import {
  buildOpenApiDocument,
  type OpenApiDocument,
  type OpenApiOperation,
  routeErrorCodes,
  unroutedErrorCodes,
} from './openapi.js'
import { apiPlugin } from './plugin.js'
import { routes } from './routes/index.js'

let h: Harness
let served: OpenApiDocument
let page: string

beforeAll(async () => {
  h = await startHarness()
  // The custom domain of the examples, verified (as POST /partner/domain/verify leaves it), so
  // GET /tls/ask?domain=track.example.com answers as documented for a verified domain.
  const at = new Date().toISOString()
  await h.store.insert('partner_domains', [
    {
      partner_id: h.boot.partnerId,
      domain: 'track.example.com',
      cname_target: 'cname.visitor-id.test',
      status: 'verified',
      verified_at: at,
      checked_at: at,
      last_answer: 'CNAME cname.visitor-id.test',
      created_at: at,
      updated_at: at,
      version: 1,
      is_deleted: 0,
    },
  ])
  served = (await h.server.app.inject({ method: 'GET', url: '/openapi.json' })).json()
  page = (await h.server.app.inject({ method: 'GET', url: '/docs' })).body
})

afterAll(async () => {
  await h?.stop()
})

const operations = (document: OpenApiDocument) =>
  Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ path, method: method.toUpperCase(), operation })),
  )

const isApi = (path: string) => path.startsWith('/api/v1/')

/** The codes an error response of the document names (its schema narrows `code`). */
const codesOf = (operation: OpenApiOperation, status: string): string[] => {
  const schema = operation.responses[status]?.content?.['application/json']?.schema as
    | { allOf?: { properties?: { code?: { enum?: string[] } } }[] }
    | undefined
  return schema?.allOf?.[1]?.properties?.code?.enum ?? []
}

/** `METHOD /path/{param}` of every route a running app serves (from its printed tree), HEAD left out. */
function servedRoutes(printed: string): string[] {
  const prefixes: string[] = []
  return printed.split('\n').flatMap((line) => {
    const match = /^([│ ]*)[├└]── (\S+)(?: \(([A-Z, ]+)\))?/.exec(line)
    if (!match) return []
    const depth = match[1]!.length / 4
    prefixes.length = depth
    const url = prefixes.join('') + match[2]!
    prefixes.push(match[2]!)
    return (match[3] ?? '')
      .split(', ')
      .filter((method) => method !== '' && method !== 'HEAD')
      .map((method) => `${method} ${url.replace(/:(\w+)/g, '{$1}')}`)
  })
}

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
      phone: h.server.phone!,
      billing: h.billing,
      integrations: h.integrations,
    })
    await app.register(apiDocsPlugin, { config: loadConfig({}) })
    await app.ready()
    await app.close()
    await coordination.close()
    await store.close()

    const api = registered.filter((r) => r.includes(' /api/v1')).sort()
    const table = routes.map((r) => `${r.method} /api/v1${r.path}`).sort()
    const documented = operations(served)
      .filter((o) => isApi(o.path))
      .map((o) => `${o.method} ${o.path}`)
      .sort()
    expect(api).toEqual(table)
    expect(documented).toEqual(table)
    expect(registered.filter((r) => !r.includes(' /api/v1')).sort()).toEqual([
      'GET /docs',
      'GET /openapi.json',
    ])
  })

  it('documents every route the server serves outside /api/v1, and nothing it does not serve', () => {
    const outside = servedRoutes(h.server.app.printRoutes({ commonPrefix: false }))
      .filter((route) => !route.includes(' /api/v1/'))
      .filter((route) => !['GET /docs', 'GET /openapi.json'].includes(route))
      .sort()
    const documented = operations(served)
      .filter((o) => !isApi(o.path))
      .map((o) => `${o.method} ${o.path}`)
      .sort()
    expect(documented).toEqual(outside)
    expect(outside).toEqual(
      expect.arrayContaining(['POST /collect', 'GET /p.js', 'GET /i.gif', 'GET /healthz', 'GET /readyz']),
    )
    expect(outside).toContain('GET /metrics')
    expect(served.tags.map((tag) => tag.name)).toEqual(expect.arrayContaining(['Tracking', 'Operations']))
  })

  it('answers the example of every endpoint outside /api/v1 with a documented status', async () => {
    for (const { path, method, operation } of operations(served).filter((o) => !isApi(o.path))) {
      let url = path
      const query = new URLSearchParams()
      const headers: Record<string, string> = {}
      for (const parameter of operation.parameters) {
        const value = String(parameter.example ?? '')
        if (parameter.in === 'path') url = url.replace(`{${parameter.name}}`, encodeURIComponent(value))
        else if (parameter.in === 'query' && parameter.example !== undefined) query.set(parameter.name, value)
        else if (parameter.in === 'header' && parameter.example !== undefined) headers[parameter.name] = value
      }
      const content = Object.entries(operation.requestBody?.content ?? {})[0]
      if (content) headers['content-type'] = content[0]
      const response = await h.server.app.inject({
        method: method as 'GET' | 'POST',
        url: query.size > 0 ? `${url}?${query}` : url,
        headers,
        ...(content ? { payload: JSON.stringify(content[1].example) } : {}),
      })
      expect(Object.keys(operation.responses), `${method} ${path}: ${response.statusCode}`).toContain(
        String(response.statusCode),
      )
      expect(response.statusCode, `${method} ${path}`).toBeLessThan(400)
    }
  })

  it('serves the document the table builds', () => {
    const built = JSON.parse(JSON.stringify(buildOpenApiDocument(routes, { rateLimit: 1000 })))
    for (const path of Object.keys(built.paths)) expect(served.paths[path], path).toEqual(built.paths[path])
    expect(served.components.schemas).toEqual(built.components.schemas)
    expect(served['x-error-codes']).toEqual(built['x-error-codes'])
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
      expect(operation.summary, label).not.toBe('')
      expect(JSON.stringify(operation), label).not.toContain('$defs')
      // A route of the table documents a body exactly when it takes one (POST .../recalculate takes none).
      const route = routes.find((r) => r.operationId === operation.operationId)
      if (route ? route.body !== undefined : ['POST', 'PUT', 'PATCH'].includes(method)) {
        expect(operation.requestBody, label).toBeDefined()
        expect(Object.keys(operation.responses), label).toEqual(expect.arrayContaining(['400', '413', '415']))
      } else if (route) {
        expect(operation.requestBody, label).toBeUndefined()
      }
      if (!isApi(path)) continue
      // One requirement per key scope that passes the route's check, all of the route's key kind.
      expect(
        operation.security.map((r) => Object.values(r)[0]),
        label,
      ).toEqual(operation['x-required-scopes']!.map((scope) => [scope]))
      expect(new Set(operation.security.map((r) => Object.keys(r)[0])).size, label).toBe(1)
      expect(Object.keys(operation.responses), label).toEqual(
        expect.arrayContaining([String(route?.response.status ?? 200), '401', '403', '429', '500']),
      )
      expect(
        Object.keys(operation.responses).filter((status) => status.startsWith('2')),
        label,
      ).toHaveLength(1)
    }
    expect(ids.size).toBe(operations(served).length)
  })

  it('documents route examples that pass their own schemas', () => {
    for (const route of routes) {
      const example = route.example({
        organizationId: '00000000-0000-4000-8000-000000000001',
        memberUserId: '00000000-0000-4000-8000-000000000002',
        visitorId: '00000000-0000-4000-8000-000000000003',
        keyId: 'key_x',
        icpConfigSlug: 'enterprise-us',
        partnerIcpConfigSlug: 'enterprise-us-2',
        listId: 'list_0123456789abcdef01234567',
        personVisitorId: '00000000-0000-4000-8000-000000000004',
        webhookLogId: 'whl_x',
        checkoutSessionId: 'cs_x',
        flowId: 'flow_0123456789abcdef01234567',
        adsAccountId: 'acc_1',
      })
      if (route.params) expect(route.params.safeParse(example.params).success, route.operationId).toBe(true)
      if (route.query) expect(route.query.safeParse(example.query).success, route.operationId).toBe(true)
      if (route.body) expect(route.body.safeParse(example.body).success, route.operationId).toBe(true)
      else expect(example.body, route.operationId).toBeUndefined()
    }
  })
})

describe('the configured rate limit', () => {
  it('is the one the document and /docs state', async () => {
    const app = Fastify({ logger: false })
    await app.register(apiDocsPlugin, { config: loadConfig({ API_RATE_LIMIT: '50' }) })
    const document: OpenApiDocument = (await app.inject({ method: 'GET', url: '/openapi.json' })).json()
    const docs = (await app.inject({ method: 'GET', url: '/docs' })).body
    await app.close()
    expect(document.info.description).toContain('50 requests per minute')
    expect(document.info.description).not.toContain('1,000')
    expect(JSON.stringify(document.paths['/api/v1/ping'])).toContain('API_RATE_LIMIT: 50 on this server')
    expect(docs).toContain('50 requests per minute')
    expect(docs).not.toContain('1,000 requests')
    // And the default server states its own.
    expect(served.info.description).toContain('1,000 requests per minute')
  })
})

describe('the error codes: catalogue, README, /docs and behaviour in sync', () => {
  const catalogue = Object.keys(errorCatalogue) as ErrorCode[]
  const reserved = catalogue.filter((code) => reservedFor(code) !== undefined)
  const inUse = catalogue.filter((code) => reservedFor(code) === undefined)

  /** Every code some operation of the served document answers, and the codes of any path. */
  const returned = () => {
    const codes = new Set<string>(unroutedErrorCodes)
    for (const { operation } of operations(served)) {
      for (const status of Object.keys(operation.responses))
        for (const code of codesOf(operation, status)) codes.add(code)
    }
    return codes
  }

  it('every code is returned by some route, or reserved, never both', () => {
    const codes = returned()
    for (const code of catalogue) {
      const label = `${code}: ${reservedFor(code) ? `reserved for ${reservedFor(code)}` : 'in use'}`
      expect(codes.has(code), label).toBe(reservedFor(code) === undefined)
    }
    for (const code of codes) expect(catalogue, code).toContain(code)
  })

  it('every error response states its codes, under their own status', () => {
    for (const route of routes) {
      const operation = served.paths[`/api/v1${route.path}`]![route.method.toLowerCase()]!
      for (const code of routeErrorCodes(route)) {
        const status = String(errorCatalogue[code].statusCode)
        expect(codesOf(operation, status), `${route.operationId} ${code}`).toContain(code)
        expect(operation.responses[status]?.description, `${route.operationId} ${code}`).toContain(code)
      }
    }
    for (const { path, operation } of operations(served)) {
      for (const status of Object.keys(operation.responses)) {
        for (const code of codesOf(operation, status)) {
          expect(String(errorCatalogue[code as ErrorCode].statusCode), `${path} ${code}`).toBe(status)
        }
      }
    }
  })

  it('the error body enumerates the codes in use; the document lists the whole catalogue', () => {
    const error = served.components.schemas.Error as { properties: { code: { enum: string[] } } }
    expect(error.properties.code.enum.slice().sort()).toEqual(inUse.slice().sort())
    expect(served['x-error-codes'].map((row) => row.code).sort()).toEqual(catalogue.slice().sort())
    for (const row of served['x-error-codes']) {
      expect(row.status, row.code).toBe(errorCatalogue[row.code].statusCode)
      expect(row.reservedFor, row.code).toBe(reservedFor(row.code))
    }
  })

  it("the API README's route table is the route table: each route once, its key kind and scope", () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
    const table = readme.slice(readme.indexOf('## Routes'), readme.indexOf('Field by field'))
    const rows = [
      ...table.matchAll(/^\| (GET|POST|PUT|PATCH|DELETE) \| `([^`?]+)[^`]*` \| (\w+) \| ([\w:]+) \|/gm),
    ]
    const listed = rows.map(([, method, path, key, scope]) => `${method} ${path} ${key} ${scope}`).sort()
    const declared = routes.map((r) => `${r.method} ${r.path} ${r.auth} ${r.scope}`).sort()
    expect(listed).toEqual(declared)
  })

  it('the API README lists the codes in use, and the reserved ones apart', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
    const errors = readme.slice(
      readme.indexOf('## Errors'),
      readme.indexOf('\n## ', readme.indexOf('## Errors') + 1),
    )
    const [main, reservedPart] = errors.split('### Reserved codes')
    expect(reservedPart, 'README: a "### Reserved codes" table under ## Errors').toBeDefined()
    const rows = (text: string) =>
      [...text.matchAll(/^\|\s*`(\w+)`\s*\|\s*(\d{3})\s*\|/gm)]
        .map(([, code, status]) => `${code} ${status}`)
        .sort()
    const expected = (codes: ErrorCode[]) =>
      codes.map((code) => `${code} ${errorCatalogue[code].statusCode}`).sort()
    expect(rows(main!)).toEqual(expected(inUse))
    expect(rows(reservedPart!)).toEqual(expected(reserved))
  })

  it('/docs lists the codes in use, and the reserved ones apart', () => {
    const errors = page.slice(page.indexOf('<section id="errors">'))
    const [main, reservedPart] = errors.split('id="reserved-codes"')
    const rows = (html: string) => [...html.matchAll(/<tr id="error-(\w+)">/g)].map(([, code]) => code).sort()
    expect(rows(main!)).toEqual(inUse.slice().sort())
    expect(rows(reservedPart ?? '')).toEqual(reserved.slice().sort())
  })

  it('answers the codes of any path: no such path, or not with this method (with Allow)', async () => {
    const missing = await h.request({ method: 'GET', url: '/api/v1/nope' })
    expect(missing.statusCode).toBe(404)
    expect(missing.json()).toEqual(errorBody(404, 'route_not_found'))
    for (const [method, url, allow] of [
      ['DELETE', '/api/v1/ping', 'GET, HEAD'],
      ['POST', '/api/v1/ping', 'GET, HEAD'],
      ['PATCH', '/api/v1/organization/list', 'GET, HEAD, PUT'],
      ['DELETE', `/api/v1/visitor-tracking/${h.boot.organizationId}`, 'GET, HEAD'],
      ['GET', '/collect', 'POST'],
      ['POST', '/metrics', 'GET, HEAD'],
    ] as const) {
      for (const key of [undefined, null]) {
        const response = await h.request({ method, url, key })
        expect(response.statusCode, `${method} ${url}`).toBe(405)
        expect(response.headers.allow, `${method} ${url}`).toBe(allow)
        expect(response.json()).toEqual(errorBody(405, 'method_not_allowed'))
      }
    }
  })
})

describe('/docs', () => {
  it('shows every operation, self-contained', async () => {
    const response = await h.server.app.inject({ method: 'GET', url: '/docs' })
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toMatch(/^text\/html/)
    expect(response.headers['content-security-policy']).toContain("default-src 'none'")
    for (const { path, operation } of operations(served)) {
      expect(page).toContain(path)
      expect(page).toContain(`id="${operation.operationId}"`)
      // In the table of contents.
      expect(page).toContain(`href="#${operation.operationId}"`)
    }
    expect(page).not.toMatch(/<script|src="http|href="http|@import|url\(/)
  })

  it("states each route's scopes, as the document does", () => {
    const sections = page.split('<section class="op"').slice(1)
    for (const route of routes) {
      const section = sections.find((s) => s.includes(`id="${route.operationId}"`))!
      const scopes = served.paths[`/api/v1${route.path}`]![route.method.toLowerCase()]!['x-required-scopes']!
      const shown = scopes.map((scope) => `<code>${scope}</code>`).join(' or ')
      expect(section, route.operationId).toContain(`scope ${shown}`)
    }
  })

  it('stays small and readable: curl first, parameters in a table, schemas folded', () => {
    // The page grows with the API (the spec has 70 endpoints); what must stay small is what each
    // operation costs: 4.6 KB on average today (the bound was 160 KB for 34 operations, 4.7 KB each).
    expect(Buffer.byteLength(page) / operations(served).length).toBeLessThan(5_500)
    // Nothing of a schema outside a <details> (closed by default).
    const unfolded = page.replace(/<details>[\s\S]*?<\/details>/g, '')
    expect(unfolded).not.toMatch(/class="schema"|class="json"/)
    expect(page).not.toContain('<details open')
    const sections = page.split('<section class="op"').slice(1)
    expect(sections.length).toBe(operations(served).length)
    for (const section of sections) {
      const curl = section.indexOf('<pre class="curl">curl ')
      expect(curl, section.slice(0, 120)).toBeGreaterThan(0)
      for (const later of ['<table class="params"', '<details>', '<table class="responses"']) {
        if (section.includes(later)) expect(section.indexOf(later), later).toBeGreaterThan(curl)
      }
    }
    // Every tag heads its operations, and the table of contents links to it.
    for (const tag of served.tags) expect(page).toMatch(new RegExp(`<a href="#tag-[a-z-]+">${tag.name}</a>`))
  })

  it("builds each curl example from the route's example", () => {
    const document = buildOpenApiDocument(routes)
    const html = renderDocsPage(document)
    const section = (id: string) =>
      html.slice(html.indexOf(`id="${id}"`), html.indexOf('</section>', html.indexOf(`id="${id}"`)))
    const update = section('updatePixelConfig')
    expect(update).toContain(
      'curl -s -X PUT &quot;$BASE/api/v1/visitor-tracking/3f1c2a4e-0000-4000-8000-000000000001/pixel-config&quot;',
    )
    expect(update).toContain('-H &quot;X-API-Key: $API_KEY&quot;')
    expect(update).toContain('-d &#39;{&quot;allowedReferrers&quot;:[&quot;https://www.example.com/&quot;]')
    expect(section('listPartnerOrganizations')).toContain('partner/organizations?page=1&amp;limit=25&quot;')
    expect(section('listPartnerOrganizations')).toContain('X-Partner-API-Key: $PARTNER_API_KEY')
  })
})
