import { Readable } from 'node:stream'
import type { Principal, Scope } from '@visitor-id/core/access'
import type { OrganizationRow } from '@visitor-id/core/accounts'
import type { AnswerCache } from '@visitor-id/core/analytics'
import type { KeyAuthenticator, KeyUsageRecorder } from '@visitor-id/core/api-keys'
import type { BillingDeps } from '@visitor-id/core/billing'
import type { Config } from '@visitor-id/core/config'
import type { Coordination } from '@visitor-id/core/coordination'
import type { ErrorCode } from '@visitor-id/core/errors'
import type { FlowDeps } from '@visitor-id/core/integrations'
import type { ListRow } from '@visitor-id/core/lists'
import type { PhoneSearchDeps, PhoneSearchReader } from '@visitor-id/core/phone-search'
import type { ErasureDeps } from '@visitor-id/core/privacy'
import type { Repositories } from '@visitor-id/core/repositories'
import type { Store } from '@visitor-id/core/store'
import type { VisitorProfileReader } from '@visitor-id/core/visitor-tracking'
import type { FastifyBaseLogger, FastifyRequest } from 'fastify'
import { z } from 'zod'

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

/** Which key a route takes: `X-API-Key` (organization) or `X-Partner-API-Key` (partner). */
export type AuthKind = 'organization' | 'partner'

/**
 * Which organization a route acts on, resolved after the request is validated (a missing or
 * malformed id is 400 `invalid_request` naming the field) and before its handler runs:
 * - `organization-param`: the `{organizationId}` path parameter, if the organization key may
 *   address it (else 404);
 * - `organization-query`: the same, from the `organizationId` query parameter (endpoints such as
 *   `GET /companies?organizationId=...`);
 * - `organization-body`: the same, from the body's `organizationId` (`POST /lists/save`);
 * - `partner-organization-param` (partner routes only): the `{organizationId}` path parameter, if
 *   the key's partner manages it: an organization of the partner, or a sub-organization of one of
 *   its agencies (else 404);
 * - `list-param`: the `{id}` path parameter, a list (`list_` + 24 hex) of an organization the key
 *   may address; the route acts on the list's organization (else 404 `list_not_found`, ids of no
 *   list's form included: a path names a resource, and one that is not there is not found);
 * - `list-or-organization-param`: `{id}` is a list id (as `list-param`) or else an organization id
 *   (as `organization-param`): `GET /lists/{id}`, whose two meanings the spec gives one path;
 * - `checkout-query`: the `secret` query parameter, a checkout session (of the billing provider) of
 *   an organization the key may address; the route acts on that organization (else 404
 *   `checkout_not_found`, unknown sessions included);
 * - `caller`: the organization key's own organization;
 * - `none`: no organization (partner routes that act on the partner, the ping).
 */
export type Tenancy =
  | 'organization-param'
  | 'organization-query'
  | 'organization-body'
  | 'partner-organization-param'
  | 'list-param'
  | 'list-or-organization-param'
  | 'checkout-query'
  | 'caller'
  | 'none'

/** What every handler may use; built once by the plugin. */
export interface ApiServices {
  config: Config
  store: Store
  repos: Repositories
  coordination: Coordination
  keys: KeyAuthenticator
  usage: KeyUsageRecorder
  /** Phone searches: the configured provider and timeout (core phone/index.ts). */
  phone: PhoneSearchDeps
  /**
   * Per-visitor point reads that concurrent requests share: the reads asked for while one runs go
   * out together as the next (core store/batch-loader.ts).
   */
  reads: { profiles: VisitorProfileReader; phoneSearches: PhoneSearchReader }
  /** Statistics answers kept while the data is unchanged (core analytics/answer-cache.ts). */
  statistics: AnswerCache
  /** Subscription billing: the configured provider and plans (core billing/index.ts). */
  billing: BillingDeps
  /** Ad-platform integrations and flows (core integrations/index.ts). */
  integrations: FlowDeps
  /**
   * Privacy requests: this process's set of erased visitor ids (ingest's, when it serves ingest)
   * and how long an erasure waits for hits acknowledged before it (core privacy/erasure.ts).
   */
  privacy: Pick<ErasureDeps, 'erasedVisitors' | 'pendingHitsMs'>
  log: FastifyBaseLogger
}

export interface HandlerContext<P, Q, B> {
  principal: Principal
  /** Set unless the route's tenancy is `none`. */
  organization: OrganizationRow | undefined
  /** The list a `list-param` route (or a `list-or-organization-param` one given a list id) acts on. */
  list: ListRow | undefined
  params: P
  query: Q
  body: B
  request: FastifyRequest
  services: ApiServices
}

/** Ids of a prepared store that route examples refer to (docs use placeholders, tests real ones). */
export interface ExampleIds {
  organizationId: string
  /** A member who is not the owner. */
  memberUserId: string
  visitorId: string
  /** An organization key other than the caller's. */
  keyId: string
  /** An organization-level ICP config of the organization. */
  icpConfigSlug: string
  /** A partner-level ICP config of the organization. */
  partnerIcpConfigSlug: string
  /** A saved list of the organization. */
  listId: string
  /** A visitor of the organization identified as a person with a LinkedIn URL, never searched. */
  personVisitorId: string
  /** An entry of the partner's webhook delivery log. */
  webhookLogId: string
  /** A completed (not yet processed) checkout session of the organization. */
  checkoutSessionId: string
  /** A flow of the organization. */
  flowId: string
  /** An ads account its connected `searchAds` integration lists. */
  adsAccountId: string
}

/** A valid request for the route; the tenant/scope matrix and the docs use it. */
export interface RouteExample {
  params?: Record<string, string>
  query?: Record<string, string>
  body?: unknown
}

type Output<S> = S extends z.ZodType ? z.output<S> : undefined

/** What the handler of a CSV route returns: the download's file name and its text, streamed. */
export interface CsvReply {
  /** Sent in `Content-Disposition`, reduced to `[A-Za-z0-9._-]`. */
  filename: string
  /** CSV text, usually from `encodeCsv` (src/csv.ts). */
  body: Readable
  /** More response headers; each must be declared by `csvResponse` (the frame checks). */
  headers?: Record<string, string>
}

/** The handler result of a CSV route, checked by the frame; declare the response with `csvResponse`. */
export const csvReply = z.object({
  filename: z.string(),
  body: z.instanceof(Readable),
  headers: z.record(z.string(), z.string()).optional(),
})

/**
 * The success of a route that streams a CSV download (`text/csv; charset=utf-8`, as an attachment):
 * its handler returns a `CsvReply`, sent as is, without JSON shaping. `headers` documents the
 * headers the download carries besides the usual ones (name -> description).
 * @example response: csvResponse('The companies, one per line')
 */
export function csvResponse(description: string, headers?: Record<string, string>) {
  return {
    status: 200,
    description,
    contentType: 'text/csv',
    schema: csvReply,
    ...(headers ? { headers } : {}),
  } as const
}

/**
 * One route, declared once: everything the auth, scope and tenancy hooks, the OpenAPI document and
 * the tenant/scope matrix test need comes from here.
 */
export interface RouteDefinition<
  P extends z.ZodType | undefined = undefined,
  Q extends z.ZodType | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
  R extends z.ZodType = z.ZodType,
> {
  operationId: string
  method: HttpMethod
  /** OpenAPI style, relative to /api/v1: `/organization/{organizationId}`. */
  path: string
  auth: AuthKind
  scope: Scope
  tenancy: Tenancy
  tag: string
  summary: string
  description?: string
  params?: P
  query?: Q
  body?: B
  /** Largest accepted body in bytes (default 64 KB). */
  bodyLimit?: number
  /**
   * What success answers: JSON shaped by `schema`; a 204 has no body (its schema is `z.undefined()`);
   * `contentType: 'text/csv'` (see `csvResponse`) a streamed CSV download.
   */
  response: {
    status: 200 | 201 | 202 | 204
    description: string
    schema: R
    contentType?: 'text/csv'
    /** CSV routes: headers sent besides the usual ones (name -> description). */
    headers?: Record<string, string>
  }
  /** Error codes specific to this route; authentication, scope, rate limit and 500 are implied. */
  errors: readonly ErrorCode[]
  example(ids: ExampleIds): RouteExample
  handler(context: HandlerContext<Output<P>, Output<Q>, Output<B>>): Promise<z.input<R>>
}

/** A route of the table, whatever its schemas. */
export type Route = RouteDefinition<
  z.ZodType | undefined,
  z.ZodType | undefined,
  z.ZodType | undefined,
  z.ZodType
>

/**
 * Declares a route with its types inferred from its schemas.
 * @example export const ping = defineRoute({ operationId: 'ping', method: 'GET', path: '/ping', ... })
 */
export function defineRoute<
  P extends z.ZodType | undefined = undefined,
  Q extends z.ZodType | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
  R extends z.ZodType = z.ZodType,
>(route: RouteDefinition<P, Q, B, R>): Route {
  return route as unknown as Route
}

/** `/a/{b}/c` -> `/a/:b/c` (Fastify's syntax). */
export function toFastifyPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ':$1')
}
