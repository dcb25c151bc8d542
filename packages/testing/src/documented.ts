// Checks a reply against what the route table and the served OpenAPI document say it is.

import type { OpenApiDocument, Route } from '@visitor-id/api'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'
import type { LightMyRequestResponse } from 'fastify'
import { expect } from 'vitest'
import { z } from 'zod'

// ajv-formats is CommonJS: under NodeNext its default export arrives as the module object.
type FormatsPlugin = (ajv: Ajv2020) => Ajv2020
const formatsModule = addFormatsModule as unknown as FormatsPlugin | { default: FormatsPlugin }
const addFormats: FormatsPlugin = typeof formatsModule === 'function' ? formatsModule : formatsModule.default

/** A JSON Schema validator for the document's schemas (draft 2020-12, with formats). */
export function createValidator() {
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  addFormats(ajv)
  return ajv
}

/**
 * Asserts the reply has the documented status and a body that both the route's zod schema (exactly,
 * nothing stripped) and the document's JSON Schema accept.
 */
export function expectDocumented(
  route: Route,
  response: LightMyRequestResponse,
  document: OpenApiDocument,
  ajv = createValidator(),
): void {
  expect(response.statusCode, `${route.operationId}: ${response.body.slice(0, 300)}`).toBe(
    route.response.status,
  )
  const operation = document.paths[`/api/v1${route.path}`]?.[route.method.toLowerCase()]
  expect(operation, `${route.operationId} is not in the document`).toBeDefined()
  if (route.response.status === 204 || route.response.schema instanceof z.ZodUndefined) {
    expect(response.body, `${route.operationId}: a ${route.response.status} with no body`).toBe('')
    expect(operation!.responses[String(route.response.status)]?.content).toBeUndefined()
    return
  }
  expect(response.headers['content-type']).toMatch(/^application\/json/)
  const body: unknown = response.json()
  const parsed = route.response.schema.safeParse(body)
  expect(parsed.success, `${route.operationId} reply fails its schema`).toBe(true)
  expect(parsed.data, `${route.operationId} reply has undocumented fields`).toEqual(body)
  const content = operation!.responses[String(route.response.status)]?.content as
    | { 'application/json': { schema: object } }
    | undefined
  const validate = ajv.compile(content!['application/json'].schema)
  expect(validate(body), `${route.operationId}: ${ajv.errorsText(validate.errors)}`).toBe(true)
}

/** A request as the test sent it: enough to find the operation it reached. */
export interface SentRequest {
  method: string
  url: string
}

interface Operation {
  path: string
  method: string
  pattern: RegExp
  /** Path parameters: a static path wins over a templated one, as in the router. */
  parameters: number
  operation: OpenApiDocument['paths'][string][string]
}

/** JSON pointer escaping of one reference token (RFC 6901). */
const pointerToken = (token: string) => token.replaceAll('~', '~0').replaceAll('/', '~1')

/** Every operation of the document, with a pattern matching the request paths that reach it. */
function operationsOf(document: OpenApiDocument): Operation[] {
  return Object.entries(document.paths).flatMap(([path, methods]) => {
    // A parameter may be empty (`/organization//api-keys` reaches its route, which answers 400).
    const source = path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]*')
    return Object.entries(methods).map(([method, operation]) => ({
      path,
      method,
      pattern: new RegExp(`^${source}$`),
      parameters: (path.match(/\{/g) ?? []).length,
      operation,
    }))
  })
}

/** What a request reached: the operations at its path (static first) and the one of its method. */
function reachedBy(operations: readonly Operation[], request: SentRequest) {
  const method = request.method.toLowerCase()
  // As the server sees it: `.` and `..` segments resolved (`/a/./b` is `/a/b`), nothing decoded.
  const path = new URL(request.url.split('?')[0]!, 'http://localhost').pathname
  const atPath = operations.filter((o) => o.pattern.test(path)).sort((a, b) => a.parameters - b.parameters)
  const reached = atPath.find((o) => o.method === (method === 'head' ? 'get' : method))
  return { method, path, atPath, reached }
}

/**
 * The documented media type the answer has, or why it has none: parameters aside on both sides
 * (`text/plain; version=0.0.4` is text/plain). Undefined when the answer rightly has no body.
 */
function documentedType(
  documented: OpenApiDocument['paths'][string][string]['responses'][string],
  response: LightMyRequestResponse,
  where: string,
): string | undefined {
  const contentType = String(response.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim()
  const declared = Object.keys(documented.content ?? {})
  const media = declared.map((type) => type.split(';')[0]!.trim())
  if (media.length === 0) {
    if (response.body !== '') throw new Error(`${where}: documented with no body, answered ${contentType}`)
    return undefined
  }
  if (!media.includes(contentType)) {
    throw new Error(`${where}: answered ${contentType || 'no content type'}, documented ${media.join(', ')}`)
  }
  return declared[media.indexOf(contentType)]
}

/**
 * Checks every answer against the served OpenAPI document, as a client generated from it would read
 * it: the operation the request reached (or, for no operation, the documented `route_not_found` /
 * `method_not_allowed`), a status that operation documents, a body of a documented content type that
 * its JSON Schema accepts (Ajv, draft 2020-12 with formats, `$ref`s resolved in the document).
 * Throws with what differs: a test whose route answers off the document fails.
 */
export function createDocumentChecker(document: OpenApiDocument) {
  const ajv = createValidator()
  ajv.addSchema(document as object, 'openapi')
  const compiled = new Map<string, ReturnType<Ajv2020['compile']>>()
  const operations = operationsOf(document)
  const validatorAt = (pointer: string) => {
    let validate = compiled.get(pointer)
    if (!validate) {
      validate = ajv.compile({ $ref: `openapi#${pointer}` })
      compiled.set(pointer, validate)
    }
    return validate
  }

  return function check(request: SentRequest, response: LightMyRequestResponse): void {
    const { method, path, atPath, reached } = reachedBy(operations, request)
    const where = `${request.method} ${request.url.slice(0, 120)} -> ${response.statusCode}`
    // Pages outside the API (the dashboard, the checkout page) and CORS preflights are not in it.
    if ((atPath.length === 0 && !path.startsWith('/api/')) || method === 'options') return
    if (!reached) {
      // Nothing is served there (404 route_not_found), or not with this method (405).
      const code = atPath.length === 0 ? 'route_not_found' : 'method_not_allowed'
      const body = response.json() as { code?: string }
      if (body.code !== code && response.statusCode !== 401 && response.statusCode !== 429) {
        throw new Error(`${where}: no documented operation, and not ${code}: ${response.body.slice(0, 300)}`)
      }
      return
    }
    const status = String(response.statusCode)
    const documented = reached.operation.responses[status]
    if (!documented) {
      throw new Error(
        `${where}: ${reached.method.toUpperCase()} ${reached.path} does not document ${status} ` +
          `(documents ${Object.keys(reached.operation.responses).join(', ')}): ${response.body.slice(0, 300)}`,
      )
    }
    if (method === 'head') return
    const type = documentedType(documented, response, where)
    if (type?.split(';')[0] !== 'application/json') return
    const pointer = ['paths', reached.path, reached.method, 'responses', status, 'content', type, 'schema']
      .map(pointerToken)
      .join('/')
    const validate = validatorAt(`/${pointer}`)
    if (!validate(response.json())) {
      throw new Error(
        `${where}: the body fails the document's schema: ${ajv.errorsText(validate.errors)}; ${response.body.slice(0, 300)}`,
      )
    }
  }
}
