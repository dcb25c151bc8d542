// Generated requests against every route of the table: whatever the params, query, body, content
// type or key, the API answers below 500 with the documented error body and never a stack trace.
import { errorCatalogue } from '@visitor-id/core/errors'
import { type Harness, startHarness } from '@visitor-id/testing/harness'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Route } from './route-definition.js'
import { routes } from './routes/index.js'

let h: Harness
let pools: { ids: string[]; keys: string[] }

beforeAll(async () => {
  // A high limit: this file is about input handling, not rate limiting.
  h = await startHarness({ API_RATE_LIMIT: '1000000' })
  const { visitorId } = await h.seedVisitor(h.boot.organizationId)
  const sacrificial = await h.createKey(h.boot.organizationId, ['read'])
  const member = await h.addMember(h.boot.organizationId)
  const listId = await h.createList(h.boot.organizationId)
  pools = {
    // Real ids reach deep into the handlers; the bootstrap key's own id is left out so it survives.
    ids: [
      h.boot.organizationId,
      h.boot.userId,
      visitorId,
      sacrificial.id,
      member,
      listId,
      'jsSnippet',
      'tagManager',
    ],
    keys: [h.boot.apiKey, h.boot.partnerKey],
  }
})

afterAll(async () => {
  await h?.stop()
})

const text = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', minLength: 90, maxLength: 400 }),
)

const segment = () => fc.oneof(fc.constantFrom(...pools.ids), fc.uuid(), text)

/** Bodies near the example (its keys with other values, plus extras) and anything at all. */
function body(route: Route) {
  const example = route.example({
    organizationId: '',
    memberUserId: '',
    visitorId: '',
    keyId: '',
    icpConfigSlug: '',
    partnerIcpConfigSlug: '',
    listId: '',
    personVisitorId: '',
    webhookLogId: '',
    checkoutSessionId: '',
    flowId: '',
    adsAccountId: '',
  }).body
  const near =
    example && typeof example === 'object' && !Array.isArray(example)
      ? fc
          .tuple(
            fc.record(
              Object.fromEntries(
                Object.entries(example).map(([key, value]) => [
                  key,
                  fc.oneof(fc.constant(value), fc.jsonValue({ maxDepth: 2 }), text),
                ]),
              ),
              { requiredKeys: [] },
            ),
            fc.dictionary(text, fc.jsonValue({ maxDepth: 1 }), { maxKeys: 2 }),
          )
          .map(([known, extra]) => ({ ...extra, ...known }))
      : fc.jsonValue({ maxDepth: 2 })
  return fc.oneof(
    near.map((value) => JSON.stringify(value)),
    fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)),
    text,
    fc.constant(''),
  )
}

function request(route: Route) {
  const names = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!)
  return fc.record({
    params: fc.tuple(...names.map(() => segment())),
    query: fc.dictionary(
      fc.oneof(fc.constantFrom('page', 'limit'), text),
      fc.oneof(text, fc.integer().map(String)),
      {
        maxKeys: 3,
      },
    ),
    payload: body(route),
    contentType: fc.constantFrom(
      'application/json',
      'application/json; charset=utf-8',
      'text/plain',
      'application/x-www-form-urlencoded',
      undefined,
    ),
    key: fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...pools.keys) }, { weight: 1, arbitrary: text }),
  })
}

describe.each(routes.map((route) => [`${route.method} ${route.path}`, route] as const))(
  '%s',
  (_name, route) => {
    it('never answers 5xx', async () => {
      const names = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!)
      await fc.assert(
        fc.asyncProperty(request(route), async (input) => {
          let url = `/api/v1${route.path}`
          names.forEach((name, i) => {
            url = url.replace(`{${name}}`, encodeURIComponent(input.params[i]!))
          })
          const query = new URLSearchParams(input.query).toString()
          const headers: Record<string, string> = {
            [route.auth === 'organization' ? 'x-api-key' : 'x-partner-api-key']: input.key,
          }
          if (input.contentType) headers['content-type'] = input.contentType
          const hasBody = route.method !== 'GET' && input.payload !== ''
          const response = await h.server.app.inject({
            method: route.method,
            url: query ? `${url}?${query}` : url,
            headers,
            ...(hasBody ? { payload: input.payload } : {}),
          })
          expect(response.statusCode, response.body.slice(0, 500)).toBeLessThan(500)
          if (response.statusCode >= 400) {
            const error = response.json()
            expect(error.statusCode).toBe(response.statusCode)
            expect(Object.keys(errorCatalogue)).toContain(error.code)
            expect(typeof error.message).toBe('string')
          }
          expect(response.body).not.toMatch(/\n\s+at |node_modules|\.ts:\d+/)
        }),
        // fast-check prints the seed and the shrunk input of a failure, so a failure replays exactly.
        { numRuns: 100 },
      )
    })
  },
)
