// Checks a reply against what the route table and the served OpenAPI document say it is.
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'
import type { LightMyRequestResponse } from 'fastify'
import { expect } from 'vitest'
import { z } from 'zod'
import type { OpenApiDocument } from '../openapi.js'
import type { Route } from '../route-definition.js'

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
