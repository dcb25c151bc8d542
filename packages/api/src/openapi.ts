// The OpenAPI 3.1 document, generated at start-up from the route table and the endpoints the rest
// of the service documents (tracker, health, metrics): the same zod schemas that validate requests
// and shape replies. Never edited by hand, never committed: every server builds its own from its
// configuration (the rate limit, whether /metrics takes a token).
import { type Scope, scopesGranting } from '@visitor-id/core/access'
import type { EndpointDoc } from '@visitor-id/core/endpoint-doc'
import { type ErrorCode, errorCatalogue, reservedFor } from '@visitor-id/core/errors'
import { z } from 'zod'
import type { Route } from './route-definition.js'
import { errorBodySchema } from './schemas/common.js'

type JsonSchema = Record<string, unknown>

export interface OpenApiParameter {
  name: string
  in: 'path' | 'query' | 'header'
  required: boolean
  description?: string
  schema: JsonSchema
  example?: unknown
}

export interface OpenApiMediaType {
  schema: JsonSchema
  example?: unknown
}

export interface OpenApiResponse {
  description: string
  headers?: Record<string, { description: string; schema: JsonSchema }>
  content?: Record<string, OpenApiMediaType>
}

export interface OpenApiOperation {
  operationId: string
  tags: string[]
  summary: string
  description: string
  /**
   * `[]`: no credentials. For a route of the table, one requirement per scope that passes its check
   * (OpenAPI 3.1 lets an API key scheme list the roles it needs): `[{ ApiKey: ['read'] }, { ApiKey: ['admin'] }]`.
   */
  security: Record<string, string[]>[]
  /** The scope the route checks (`x-required-scope`) and every key scope that passes it, any one. */
  'x-required-scope'?: string
  'x-required-scopes'?: string[]
  parameters: OpenApiParameter[]
  requestBody?: { required: true; content: Record<string, OpenApiMediaType> }
  responses: Record<string, OpenApiResponse>
}

/** A row of the error catalogue, as the document lists it (`x-error-codes`). */
export interface ErrorCodeDoc {
  code: ErrorCode
  status: number
  message: string
  /** Set for a code no route returns yet: the feature that will. */
  reservedFor?: string
}

export interface OpenApiDocument {
  openapi: '3.1.0'
  info: { title: string; version: string; description: string }
  servers: { url: string }[]
  tags: { name: string; description?: string }[]
  paths: Record<string, Record<string, OpenApiOperation>>
  components: {
    securitySchemes: Record<string, Record<string, unknown>>
    schemas: Record<string, JsonSchema>
  }
  /** The whole error catalogue, reserved codes marked. */
  'x-error-codes': ErrorCodeDoc[]
}

export interface OpenApiOptions {
  /** API_RATE_LIMIT: requests per minute per key (default 1,000, the setting's default). */
  rateLimit?: number
  /** Endpoints outside /api/v1, documented after the API's own tags. */
  endpoints?: readonly EndpointDoc[]
  /** Descriptions of tags, by name. */
  tagDescriptions?: Record<string, string>
}

/** Codes any path may answer, outside every operation: no such path, or not with this method. */
export const unroutedErrorCodes: readonly ErrorCode[] = ['route_not_found', 'method_not_allowed']

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema
  return rest
}

function parameters(
  schema: z.ZodType | undefined,
  location: OpenApiParameter['in'],
  example: Record<string, string> | undefined,
): OpenApiParameter[] {
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
      ...(example?.[name] === undefined ? {} : { example: example[name] }),
    }
  })
}

const integer = { type: 'integer' }
const header = (description: string) => ({ description, schema: { type: 'string' } })

function rateLimitHeaders(limit: number) {
  return {
    'X-RateLimit-Limit': {
      description: `Requests allowed per minute (API_RATE_LIMIT: ${limit.toLocaleString('en')} on this server)`,
      schema: integer,
    },
    'X-RateLimit-Remaining': { description: 'Requests left in this window', schema: integer },
    'X-RateLimit-Reset': { description: 'Unix time (seconds) when the window resets', schema: integer },
  }
}

/** Every error code a route may answer, the implied ones included. */
export function routeErrorCodes(route: Route): ErrorCode[] {
  const codes: ErrorCode[] = ['unauthorized', 'forbidden', 'rate_limited', 'internal_error']
  if (route.params || route.query || route.body) codes.push('invalid_request')
  // The router refuses a path parameter over 100 characters before any hook runs.
  if (route.params) codes.push('uri_too_long')
  // Any request but a GET may carry a body, which is parsed (and refused) before any route code
  // runs, whether or not the route reads one.
  if (route.body || route.method !== 'GET')
    codes.push('invalid_json', 'payload_too_large', 'unsupported_media_type')
  // A checkout session the key may not address is as unknown as one that does not exist.
  if (route.tenancy === 'checkout-query') codes.push('checkout_not_found')
  else if (route.tenancy !== 'caller' && route.tenancy !== 'none') codes.push('resource_not_found')
  codes.push(...route.errors)
  return [...new Set(codes)]
}

/** The error body restricted to some codes, so clients and the docs see which codes a status has. */
const errorSchema = (codes: ErrorCode[]): JsonSchema => ({
  allOf: [{ $ref: '#/components/schemas/Error' }, { properties: { code: { enum: codes } } }],
})

function errorResponses(
  codes: readonly ErrorCode[],
  headersOf: (status: number) => OpenApiResponse['headers'] | undefined,
): Record<string, OpenApiResponse> {
  const byStatus = new Map<number, ErrorCode[]>()
  for (const code of codes) {
    const status = errorCatalogue[code].statusCode
    byStatus.set(status, [...(byStatus.get(status) ?? []), code])
  }
  const responses: Record<string, OpenApiResponse> = {}
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    const headers = headersOf(status)
    responses[String(status)] = {
      description: list.map((code) => `\`${code}\`: ${errorCatalogue[code].message}`).join('; '),
      ...(headers ? { headers } : {}),
      content: { 'application/json': { schema: errorSchema(list) } },
    }
  }
  return responses
}

const placeholderIds = {
  organizationId: '3f1c2a4e-0000-4000-8000-000000000001',
  memberUserId: '3f1c2a4e-0000-4000-8000-000000000002',
  visitorId: '3f1c2a4e-0000-4000-8000-000000000003',
  keyId: 'key_0123456789abcdef0123456789abcdef',
  icpConfigSlug: 'enterprise-us',
  partnerIcpConfigSlug: 'enterprise-us',
  listId: 'list_0123456789abcdef01234567',
  personVisitorId: '3f1c2a4e-0000-4000-8000-000000000004',
  webhookLogId: 'whl_0123456789abcdef01234567',
  checkoutSessionId: 'cs_test_a1b2c3d4e5f6g7h8i9j0',
  flowId: 'flow_0123456789abcdef01234567',
  adsAccountId: '1234567890',
}

/** JSON shaped by the response schema, nothing (204), or a CSV download (a string). */
function successResponse(route: Route, limitHeaders: OpenApiResponse['headers']): OpenApiResponse {
  const { description, schema, status, contentType } = route.response
  if (contentType === 'text/csv') {
    const declared = Object.entries(route.response.headers ?? {}).map(([name, text]) => [name, header(text)])
    return {
      description,
      headers: {
        ...limitHeaders,
        'Content-Disposition': header('`attachment; filename="<name>.csv"`'),
        ...Object.fromEntries(declared),
      },
      content: { 'text/csv': { schema: { type: 'string' } } },
    }
  }
  // 204, or a 200 the spec gives no body (DELETE /lists/{id}).
  if (status === 204 || schema instanceof z.ZodUndefined) return { description, headers: limitHeaders }
  return {
    description,
    headers: limitHeaders,
    content: { 'application/json': { schema: jsonSchema(schema, 'output') } },
  }
}

/** The description's last line: which key scopes pass the route's check. */
export function scopeLine(scope: Scope): string {
  const [needed, ...others] = scopesGranting(scope)
  const also = others.length > 0 ? ` (or ${others.map((s) => `\`${s}\``).join(', ')}, which grants it)` : ''
  return `Required scope: \`${needed}\`${also}.`
}

function routeOperation(route: Route, limit: number): OpenApiOperation {
  const example = route.example(placeholderIds)
  const limitHeaders = rateLimitHeaders(limit)
  const scheme = route.auth === 'organization' ? 'ApiKey' : 'PartnerApiKey'
  const granting = scopesGranting(route.scope)
  return {
    operationId: route.operationId,
    tags: [route.tag],
    summary: route.summary,
    description: `${route.description ? `${route.description}\n\n` : ''}${scopeLine(route.scope)}`,
    security: granting.map((scope) => ({ [scheme]: [scope] })),
    'x-required-scope': route.scope,
    'x-required-scopes': granting,
    parameters: [
      ...parameters(route.params, 'path', example.params),
      ...parameters(route.query, 'query', example.query),
    ],
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
      [String(route.response.status)]: successResponse(route, limitHeaders),
      ...errorResponses(routeErrorCodes(route), (status) => {
        if (status === 401) return undefined
        if (status === 429) return { ...limitHeaders, 'Retry-After': header('Seconds to wait') }
        return limitHeaders
      }),
    },
  }
}

function endpointOperation(endpoint: EndpointDoc): OpenApiOperation {
  const { example } = endpoint
  const headersOf = (named: Record<string, string> | undefined) =>
    named
      ? Object.fromEntries(Object.entries(named).map(([name, description]) => [name, header(description)]))
      : undefined
  const responses: Record<string, OpenApiResponse> = {}
  for (const response of endpoint.responses) {
    const headers = headersOf(response.headers)
    responses[String(response.status)] = {
      description: response.description,
      ...(headers ? { headers } : {}),
      // A page or a file (a content type with no schema) is a string of that type.
      ...(response.schema || response.contentType
        ? {
            content: Object.fromEntries(
              [response.contentType ?? 'application/json']
                .flat()
                .map((type) => [
                  type,
                  { schema: response.schema ? jsonSchema(response.schema, 'output') : { type: 'string' } },
                ]),
            ),
          }
        : {}),
    }
  }
  return {
    operationId: endpoint.operationId,
    tags: [endpoint.tag],
    summary: endpoint.summary,
    description: endpoint.description,
    security: endpoint.bearer ? [{ [endpoint.bearer.scheme]: [] }] : [],
    parameters: [
      ...parameters(endpoint.params, 'path', example.params),
      ...parameters(endpoint.query, 'query', example.query),
      ...parameters(endpoint.headers, 'header', example.headers),
    ],
    ...(endpoint.body
      ? {
          requestBody: {
            required: true as const,
            content: Object.fromEntries(
              endpoint.body.contentTypes.map((type, i) => [
                type,
                {
                  schema: jsonSchema(endpoint.body!.schema, 'input'),
                  ...(i === 0 && example.body !== undefined ? { example: example.body } : {}),
                },
              ]),
            ),
          },
        }
      : {}),
    responses: {
      ...responses,
      ...errorResponses(endpoint.errors, (status) => headersOf(endpoint.errorHeaders?.[status])),
    },
  }
}

/**
 * Builds the OpenAPI 3.1 document of a route table and of the endpoints around it.
 * @example const document = buildOpenApiDocument(routes, { rateLimit: config.apiRateLimit, endpoints })
 */
export function buildOpenApiDocument(
  routes: readonly Route[],
  options: OpenApiOptions = {},
): OpenApiDocument {
  const limit = options.rateLimit ?? 1000
  const endpoints = options.endpoints ?? []
  const paths: OpenApiDocument['paths'] = {}
  for (const route of routes) {
    const path = `/api/v1${route.path}`
    paths[path] = { ...paths[path], [route.method.toLowerCase()]: routeOperation(route, limit) }
  }
  const securitySchemes: OpenApiDocument['components']['securitySchemes'] = {
    ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
    PartnerApiKey: { type: 'apiKey', in: 'header', name: 'X-Partner-API-Key' },
  }
  for (const endpoint of endpoints) {
    paths[endpoint.path] = {
      ...paths[endpoint.path],
      [endpoint.method.toLowerCase()]: endpointOperation(endpoint),
    }
    if (endpoint.bearer) {
      securitySchemes[endpoint.bearer.scheme] = {
        type: 'http',
        scheme: 'bearer',
        description: endpoint.bearer.description,
      }
    }
  }
  const tagNames = [...new Set([...routes.map((route) => route.tag), ...endpoints.map((e) => e.tag)])]
  const codes = (Object.keys(errorCatalogue) as ErrorCode[]).filter((code) => reservedFor(code) === undefined)
  return {
    openapi: '3.1.0',
    info: {
      title: 'visitor-id API',
      version: '1.0.0',
      description:
        'Organization routes take `X-API-Key` (`bsk_live_` + 32 hex), partner routes (`/partner`) take ' +
        `\`X-Partner-API-Key\` (\`bsk_partner_\` + 32 hex). ${limit.toLocaleString('en')} requests per ` +
        'minute per key (`API_RATE_LIMIT`), fixed window. Every error has the body ' +
        '`{ statusCode, error, code, message, details? }`. Any path answers `route_not_found` (404) ' +
        'when nothing is served there, and `method_not_allowed` (405, with an `Allow` header) when ' +
        'it is served with other methods.',
    },
    servers: [{ url: '/' }],
    tags: tagNames.map((name) => {
      const description = options.tagDescriptions?.[name]
      return description ? { name, description } : { name }
    }),
    paths,
    components: {
      securitySchemes,
      schemas: { Error: errorDocumentSchema(codes) },
    },
    'x-error-codes': (Object.keys(errorCatalogue) as ErrorCode[]).map((code) => {
      const reserved = reservedFor(code)
      return {
        code,
        status: errorCatalogue[code].statusCode,
        message: errorCatalogue[code].message,
        ...(reserved ? { reservedFor: reserved } : {}),
      }
    }),
  }
}

/** The error body, its `code` an enum of the codes in use (reserved ones are listed in the docs). */
function errorDocumentSchema(codes: ErrorCode[]): JsonSchema {
  const schema = jsonSchema(errorBodySchema, 'output') as { properties: { code: JsonSchema } }
  return { ...schema, properties: { ...schema.properties, code: { ...schema.properties.code, enum: codes } } }
}
