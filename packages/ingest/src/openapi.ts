// What ingest serves, described for the service's OpenAPI document and /docs, from the same zod
// schemas that validate hits. The API package renders these (the server hands them over).
import type { EndpointDoc } from '@visitor-id/core/endpoint-doc'
import { kFormCapture, kRespectPrivacy, wire, wireEvents } from '@visitor-id/pixel'
import { z } from 'zod'
import { hitBatchSchema, hitSchema } from './collect-schema.js'

export const trackingTag = 'Tracking'
export const operationsTag = 'Operations'

/** What each wire key of a hit means. */
const hitFields: Record<keyof typeof wire, string> = {
  trackingKey: 'Tracking key of the organization (`pk_` + 24 hex)',
  event: `Event: ${Object.entries(wireEvents)
    .map(([code, name]) => `\`${code}\` ${name}`)
    .join(', ')}`,
  visitorId: 'Visitor id (UUID), kept in a first-party cookie',
  sessionId: 'Session id (UUID), renewed after 30 idle minutes',
  url: 'Page URL (http or https)',
  referrer: 'document.referrer',
  title: 'Page title',
  screenWidth: 'Screen width (CSS pixels)',
  screenHeight: 'Screen height (CSS pixels)',
  language: 'Browser language',
  timezone: 'IANA time zone',
  clientTime: 'Client clock (Unix milliseconds)',
  engagedMs: 'Engaged time on the page in milliseconds (engagement events)',
  maxScroll: 'Deepest scroll, percent of the page (engagement events)',
  email: 'Email of an identify event, or the lowercase hex SHA-256 of the trimmed, lowercased email',
  webdriver: '`navigator.webdriver`: such hits are dropped and counted as `automation`',
  consent:
    'Consent the visitor denied, as bits: 1 `analytics_storage` (the pixel stored nothing), 2 `ad_user_data` ' +
    '(identify no one: an identify hit is dropped as `consent`, no email is stored). Absent or 0: all granted',
}

/** The hit schema with a description per wire key (a copy for the docs; validation uses the original). */
function describedHit() {
  const names = Object.fromEntries(Object.entries(wire).map(([name, key]) => [key, name])) as Record<
    string,
    keyof typeof wire
  >
  return z.object(
    Object.fromEntries(
      Object.entries(hitSchema.shape).map(([key, schema]) => [key, schema.describe(hitFields[names[key]!])]),
    ),
  )
}

const exampleKey = 'pk_0123456789abcdef01234567'
const retryAfter = { 503: { 'Retry-After': 'Seconds to wait before retrying (30)' } }

/** GET /p.js: the tracker script. */
const trackerDoc: EndpointDoc = {
  operationId: 'getTracker',
  method: 'GET',
  path: '/p.js',
  tag: trackingTag,
  summary: 'The tracker script',
  description:
    'The pixel that the install snippet loads (about 1.5 KB compressed). Cached by browsers for a ' +
    'day; gzip or brotli by `Accept-Encoding`; 304 on a matching `If-None-Match`.',
  responses: [
    {
      status: 200,
      description: 'The script',
      contentType: 'application/javascript',
      schema: z.string(),
      headers: {
        ETag: 'Version of the script',
        'Cache-Control': '`public, max-age=86400, stale-while-revalidate=604800`',
        'Content-Encoding': '`br` or `gzip` when accepted',
      },
    },
    { status: 304, description: 'Not modified (`If-None-Match` matched the ETag)' },
  ],
  errors: ['internal_error'],
  example: {},
}

/** GET /c/{trackingKey}: the tracker's run-time flags. */
const trackerConfigDoc: EndpointDoc = {
  operationId: 'getTrackerConfig',
  method: 'GET',
  path: '/c/{trackingKey}',
  tag: trackingTag,
  summary: "The tracker's run-time flags",
  description:
    'Flags of the pixel configuration that the tracker needs in the browser. An unknown key ' +
    'answers `{}`, like a known key with every flag off. Cached for 60 seconds.',
  params: z.object({ trackingKey: z.string().describe('Tracking key (`pk_` + 24 hex)') }),
  responses: [
    {
      status: 200,
      description: 'The flags that are on',
      schema: z.object({
        [kRespectPrivacy]: z
          .literal(1)
          .optional()
          .describe('Honour Global Privacy Control and Do Not Track: send nothing'),
        [kFormCapture]: z
          .literal(1)
          .optional()
          .describe("Form capture: a submitted form's email identifies the visitor"),
      }),
    },
  ],
  errors: ['uri_too_long', 'internal_error'],
  example: { params: { trackingKey: exampleKey } },
}

/** POST /collect: the hits the pixel sends. */
const collectDoc: EndpointDoc = {
  operationId: 'collect',
  method: 'POST',
  path: '/collect',
  tag: trackingTag,
  summary: 'Send hits',
  description:
    'What the pixel sends: one hit, or an array of up to 20. `text/plain` (no CORS preflight) or ' +
    '`application/json`, at most 16 KB. The answer is 202 once the hits are durable (in ClickHouse, ' +
    'or in the spool while ClickHouse fails). A hit from an unknown key, a foreign origin, a bot ' +
    "(curl's own user agent included), a browser under automation or a visitor whose privacy signal " +
    'the site honours is dropped and counted (by organization, day and reason: the `filtered` ' +
    'figures of the totals), and answered exactly like a stored one, so the answer never tells ' +
    'whether a key exists.',
  headers: z.object({
    origin: z.string().optional().describe('Checked against `allowedReferrers` / `verifiedDomains`'),
    'user-agent': z.string().optional().describe('Bots and headless browsers are dropped'),
  }),
  body: {
    contentTypes: ['text/plain', 'application/json'],
    schema: z.union([describedHit(), hitBatchSchema]),
  },
  responses: [{ status: 202, description: 'Accepted: stored, or dropped and counted' }],
  errors: [
    'invalid_request',
    'invalid_json',
    'payload_too_large',
    'unsupported_media_type',
    'service_unavailable',
    'internal_error',
  ],
  errorHeaders: retryAfter,
  example: {
    headers: {
      origin: 'https://example.com',
      'user-agent':
        'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36',
    },
    body: {
      [wire.trackingKey]: exampleKey,
      [wire.event]: 'pv',
      [wire.visitorId]: '3f1c2a4e-0000-4000-8000-000000000003',
      [wire.sessionId]: '3f1c2a4e-0000-4000-8000-000000000004',
      [wire.url]: 'https://example.com/pricing?utm_source=ad',
    },
  },
}

/** GET /i.gif: the page view of the `<noscript>` image. */
const noscriptDoc: EndpointDoc = {
  operationId: 'noscriptPixel',
  method: 'GET',
  path: '/i.gif',
  tag: trackingTag,
  summary: 'Page view without JavaScript',
  description:
    'The `<noscript>` image of the install snippet. The page URL comes from the `Referer` header; the visitor id is derived from the request and the day. Answers a 1x1 GIF, also when the hit is dropped.',
  query: z.object({ [wire.trackingKey]: z.string().describe('Tracking key (`pk_` + 24 hex)') }),
  headers: z.object({
    referer: z.string().optional().describe('The page (without it the hit is dropped)'),
  }),
  responses: [
    {
      status: 200,
      description: 'A transparent 1x1 GIF',
      contentType: 'image/gif',
      schema: z.string().meta({ format: 'binary' }),
      headers: { 'Cache-Control': '`no-store`' },
    },
  ],
  errors: ['service_unavailable', 'internal_error'],
  errorHeaders: retryAfter,
  example: {
    query: { [wire.trackingKey]: exampleKey },
    headers: { referer: 'https://example.com/pricing' },
  },
}

/**
 * The tracker's endpoints: /p.js, /c/{trackingKey}, /collect and /i.gif.
 * @example await app.register(apiDocsPlugin, { config, endpoints: trackingEndpointDocs() })
 */
export function trackingEndpointDocs(): EndpointDoc[] {
  return [trackerDoc, trackerConfigDoc, collectDoc, noscriptDoc]
}

/**
 * GET /metrics as this server protects it: with a token (METRICS_TOKEN), or loopback only.
 * @example metricsEndpointDoc({ token: config.metricsToken !== undefined })
 */
export function metricsEndpointDoc(options: { token: boolean }): EndpointDoc {
  return {
    operationId: 'metrics',
    method: 'GET',
    path: '/metrics',
    tag: operationsTag,
    summary: 'Prometheus metrics',
    description: options.token
      ? 'Ingest counters and the spool size in the Prometheus text format. This server has ' +
        '`METRICS_TOKEN` set: send it as `Authorization: Bearer <token>`.'
      : 'Ingest counters and the spool size in the Prometheus text format. This server has no ' +
        '`METRICS_TOKEN`, so it answers loopback clients only (the socket address, never ' +
        '`X-Forwarded-For`; a forwarded request is refused even from loopback).',
    ...(options.token
      ? { bearer: { scheme: 'MetricsToken', description: 'The `METRICS_TOKEN` setting' } }
      : {}),
    responses: [
      {
        status: 200,
        description: 'The metrics',
        contentType: 'text/plain; version=0.0.4',
        schema: z.string(),
      },
    ],
    errors: [options.token ? 'unauthorized' : 'forbidden', 'internal_error'],
    ...(options.token ? { errorHeaders: { 401: { 'WWW-Authenticate': '`Bearer realm="metrics"`' } } } : {}),
    example: {},
  }
}
