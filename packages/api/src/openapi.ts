// The OpenAPI 3.1 document, generated from the route table: the same zod schemas that validate
// requests and shape replies. Never edited by hand.
import { type ErrorCode, errorCatalogue } from '@visitor-id/core'
import { z } from 'zod'
import type { Route } from './route-definition.js'
import { errorBodySchema } from './schemas/common.js'

type JsonSchema = Record<string, unknown>

export interface OpenApiOperation {
  operationId: string
  tags: string[]
  summary: string
  description: string
  security: Record<string, string[]>[]
  'x-required-scope': string
  parameters: {
    name: string
    in: 'path' | 'query'
    required: boolean
    description?: string
    schema: JsonSchema
  }[]
  requestBody?: { required: true; content: { 'application/json': { schema: JsonSchema; example?: unknown } } }
  responses: Record<string, { description: string; headers?: Record<string, unknown>; content?: unknown }>
}

export interface OpenApiDocument {
  openapi: '3.1.0'
  info: { title: string; version: string; description: string }
  servers: { url: string }[]
  tags: { name: string }[]
  paths: Record<string, Record<string, OpenApiOperation>>
  components: { securitySchemes: Record<string, unknown>; schemas: Record<string, JsonSchema> }
}

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema
  return rest
}

function parameters(
  schema: z.ZodType | undefined,
  location: 'path' | 'query',
): OpenApiOperation['parameters'] {
  if (!schema) return []
  const object = jsonSchema(schema, 'input') as {
    properties?: Record<string, JsonSchema>
    required?: string[]
  }
  return Object.entries(object.properties ?? {}).map(([name, property]) => {
    const { description, ...rest } = property
    return {
      name,
      in: location,
      required: location === 'path' || (object.required ?? []).includes(name),
      ...(typeof description === 'string' ? { description } : {}),
      schema: rest,
    }
  })
}

const rateLimitHeaders = {
  'X-RateLimit-Limit': { description: 'Requests allowed per minute', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Requests left in this window', schema: { type: 'integer' } },
  'X-RateLimit-Reset': {
    description: 'Unix time (seconds) when the window resets',
    schema: { type: 'integer' },
  },
}

/** Every error code a route may answer, the implied ones included. */
export function routeErrorCodes(route: Route): ErrorCode[] {
  const codes: ErrorCode[] = ['unauthorized', 'forbidden', 'rate_limited', 'internal_error']
  if (route.params || route.query || route.body) codes.push('invalid_request')
  if (route.body) codes.push('invalid_json', 'payload_too_large', 'unsupported_media_type')
  if (route.tenancy === 'organization-param') codes.push('resource_not_found')
  codes.push(...route.errors)
  return [...new Set(codes)]
}

function errorResponses(route: Route): OpenApiOperation['responses'] {
  const byStatus = new Map<number, ErrorCode[]>()
  for (const code of routeErrorCodes(route)) {
    const status = errorCatalogue[code].statusCode
    byStatus.set(status, [...(byStatus.get(status) ?? []), code])
  }
  const responses: OpenApiOperation['responses'] = {}
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    responses[String(status)] = {
      description: codes.map((code) => `\`${code}\`: ${errorCatalogue[code].message}`).join('; '),
      ...(status === 401 ? {} : { headers: rateLimitHeaders }),
      ...(status === 429
        ? {
            headers: {
              ...rateLimitHeaders,
              'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' } },
            },
          }
        : {}),
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    }
  }
  return responses
}

function operation(route: Route): OpenApiOperation {
  const example = route.example({
    organizationId: '3f1c2a4e-0000-4000-8000-000000000001',
    memberUserId: '3f1c2a4e-0000-4000-8000-000000000002',
    visitorId: '3f1c2a4e-0000-4000-8000-000000000003',
    keyId: 'key_0123456789abcdef0123456789abcdef',
  })
  return {
    operationId: route.operationId,
    tags: [route.tag],
    summary: route.summary,
    description: `${route.description ? `${route.description}\n\n` : ''}Required scope: \`${route.scope}\`.`,
    security: [{ [route.auth === 'organization' ? 'ApiKey' : 'PartnerApiKey']: [] }],
    'x-required-scope': route.scope,
    parameters: [...parameters(route.params, 'path'), ...parameters(route.query, 'query')],
    ...(route.body
      ? {
          requestBody: {
            required: true as const,
            content: {
              'application/json': {
                schema: jsonSchema(route.body, 'input'),
                ...(example.body === undefined ? {} : { example: example.body }),
              },
            },
          },
        }
      : {}),
    responses: {
      [String(route.response.status)]: {
        description: route.response.description,
        headers: rateLimitHeaders,
        content: { 'application/json': { schema: jsonSchema(route.response.schema, 'output') } },
      },
      ...errorResponses(route),
    },
  }
}

/**
 * Builds the OpenAPI 3.1 document of a route table.
 * @example const document = buildOpenApiDocument(routes)
 */
export function buildOpenApiDocument(routes: readonly Route[]): OpenApiDocument {
  const paths: OpenApiDocument['paths'] = {}
  for (const route of routes) {
    const path = `/api/v1${route.path}`
    paths[path] = { ...paths[path], [route.method.toLowerCase()]: operation(route) }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'visitor-id API',
      version: '1.0.0',
      description:
        'Organization routes take `X-API-Key` (`bsk_live_` + 32 hex), partner routes (`/partner`) take ' +
        '`X-Partner-API-Key` (`bsk_partner_` + 32 hex). 1,000 requests per minute per key. Every error ' +
        'has the body `{ statusCode, error, code, message, details? }`.',
    },
    servers: [{ url: '/' }],
    tags: [...new Set(routes.map((route) => route.tag))].map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: {
        ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        PartnerApiKey: { type: 'apiKey', in: 'header', name: 'X-Partner-API-Key' },
      },
      schemas: { Error: jsonSchema(errorBodySchema, 'output') },
    },
  }
}
