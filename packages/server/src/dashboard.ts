// The web dashboard (packages/dashboard) at /app: its built files, read once at start-up and held
// in memory with their gzip and brotli forms. Hashed assets are cached for a year, the page is
// revalidated; every answer carries a self-only Content-Security-Policy. A deep link
// (/app/companies) gets the page, so the app's own router shows it. Without a build, /app says
// how to make one.
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { brotliCompressSync, constants, gzipSync } from 'node:zlib'
import type { EndpointDoc } from '@visitor-id/core/endpoint-doc'
import { appError } from '@visitor-id/core/errors'
import { toErrorBody } from '@visitor-id/core/http-errors'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { z } from 'zod'
import { page } from './html-page.js'

export const dashboardTag = 'Dashboard'

/** Where `npm run build` writes the dashboard, from this file's place in packages/server/dist. */
export const defaultDashboardDir = fileURLToPath(new URL('../../dashboard/dist/', import.meta.url))

export interface DashboardPluginOptions {
  /** The built dashboard (index.html and its assets); default `defaultDashboardDir`. */
  dir?: string
}

/** Self only: no inline script or style, no other origin, no framing. */
export const dashboardCsp =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

interface StaticFile {
  body: Buffer
  gzip: Buffer
  brotli: Buffer
  type: string
  etag: string
  cache: string
}

const types: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
}

const hashedName = /-[0-9a-f]{8,}\.[a-z]+$/

function staticFile(name: string, body: Buffer, cache: string): StaticFile {
  return {
    body,
    gzip: gzipSync(body, { level: 9 }),
    brotli: brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }),
    type: types[path.extname(name)] ?? 'application/octet-stream',
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
    cache,
  }
}

/** The files of a built dashboard by name (top level only), or undefined when there is no build. */
export function loadDashboardFiles(dir: string): Map<string, StaticFile> | undefined {
  if (!existsSync(path.join(dir, 'index.html'))) return undefined
  const files = new Map<string, StaticFile>()
  for (const name of readdirSync(dir)) {
    const file = path.join(dir, name)
    if (!statSync(file).isFile() || !types[path.extname(name)]) continue
    const cache = hashedName.test(name) ? 'public, max-age=31536000, immutable' : 'no-cache'
    files.set(name, staticFile(name, readFileSync(file), cache))
  }
  return files
}

const notBuilt = page(
  'The dashboard is not built',
  '<p>This server found no built dashboard. From the repository, run <code>npm run build</code> ' +
    '(or <code>npm start</code>, which builds first), then restart the server.</p>' +
    '<p>The API works without it: see <a href="/docs">/docs</a>.</p>',
)

function send(request: FastifyRequest, reply: FastifyReply, file: StaticFile) {
  reply
    .header('content-type', file.type)
    .header('cache-control', file.cache)
    .header('etag', file.etag)
    .header('vary', 'accept-encoding')
  if (request.headers['if-none-match'] === file.etag) return reply.code(304).send()
  const accepted = String(request.headers['accept-encoding'] ?? '')
  if (/\bbr\b/.test(accepted)) return reply.header('content-encoding', 'br').send(file.brotli)
  if (/\bgzip\b/.test(accepted)) return reply.header('content-encoding', 'gzip').send(file.gzip)
  return reply.send(file.body)
}

/**
 * Serves the dashboard at /app, /app/ and /app/{file}.
 * @example await app.register(async (scope) => dashboardPlugin(scope, {}))
 */
export async function dashboardPlugin(app: FastifyInstance, options: DashboardPluginOptions): Promise<void> {
  const files = loadDashboardFiles(options.dir ?? defaultDashboardDir)
  app.addHook('onSend', async (_request, reply) => {
    reply
      .header('content-security-policy', dashboardCsp)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('x-frame-options', 'DENY')
  })
  const index = async (request: FastifyRequest, reply: FastifyReply) => {
    const file = files?.get('index.html')
    if (!file)
      return reply.header('cache-control', 'no-store').type('text/html; charset=utf-8').send(notBuilt)
    return send(request, reply, file)
  }
  app.get('/app', index)
  app.get('/app/', index)
  app.get('/app/:file', async (request, reply) => {
    const name = (request.params as { file: string }).file
    if (name === 'index.html') return index(request, reply)
    const file = files?.get(name)
    if (file) return send(request, reply, file)
    // A name with an extension is a file this build does not have (an old hashed bundle):
    // a 404, not the page, so a stale tab fails loudly instead of running HTML as script.
    if (path.extname(name)) {
      const body = toErrorBody(appError('route_not_found', `No dashboard file ${name.slice(0, 100)}`))
      return reply.code(body.statusCode).send(body)
    }
    return index(request, reply)
  })
}

const html = (description: string) => ({ status: 200, description, contentType: 'text/html' })

/** The dashboard's routes in /docs and /openapi.json. */
export const dashboardDocs: EndpointDoc[] = [
  {
    operationId: 'dashboard',
    method: 'GET',
    path: '/app',
    tag: dashboardTag,
    summary: 'The web dashboard',
    description:
      'The single-page app (packages/dashboard): sign in with an API key, then overview, companies, ' +
      'visitors, ICP configs, lists and settings, all through `/api/v1`. Served by roles `all` and ' +
      '`api`. Without a build (`npm run build`), a page saying how to make one.',
    responses: [html('The app, or the page saying to build it')],
    errors: [],
    example: {},
  },
  {
    operationId: 'dashboardSlash',
    method: 'GET',
    path: '/app/',
    tag: dashboardTag,
    summary: 'The web dashboard (same as /app)',
    description: 'The same page as `/app`.',
    responses: [html('The app, or the page saying to build it')],
    errors: [],
    example: {},
  },
  {
    operationId: 'dashboardFile',
    method: 'GET',
    path: '/app/{file}',
    tag: dashboardTag,
    summary: "A dashboard asset, or a page of the app's (deep link)",
    description:
      'A built asset (`app-<hash>.js`, `app-<hash>.css`: cached for a year, immutable), gzip or brotli ' +
      'when accepted; a name without an extension (`/app/companies`) is a page of the app and gets ' +
      'the app. Every answer carries a self-only Content-Security-Policy.',
    params: z.object({ file: z.string().max(200).describe('An asset name, or a page of the app') }),
    responses: [
      {
        status: 200,
        description: 'The asset, or the app for a page',
        // Whatever the build holds: every type the table above serves.
        contentType: [...new Set(Object.values(types).map((type) => type.split(';')[0]!))],
      },
      { status: 304, description: 'Not modified (If-None-Match)' },
    ],
    errors: ['route_not_found'],
    example: { params: { file: 'companies' } },
  },
]
