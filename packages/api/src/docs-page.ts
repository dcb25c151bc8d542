// `/docs`: a self-contained HTML rendering of the OpenAPI document (no scripts, no CDN: the service
// may run offline). Generated from the document at start-up. Each operation reads top-down: what it
// is, a curl command that works, its parameters; schemas are field tables, folded by default.
import type {
  ErrorCodeDoc,
  OpenApiDocument,
  OpenApiOperation,
  OpenApiParameter,
  OpenApiResponse,
} from './openapi.js'

type JsonSchema = Record<string, unknown>

const escapeHtml = (value: string) =>
  value.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  )

/** `code` spans for backticked text, everything else escaped. */
const inline = (text: string) =>
  escapeHtml(text).replace(/`([^`]+)`/g, (_, code: string) => `<code>${code}</code>`)

const paragraphs = (text: string) =>
  text
    .split(/\n\n+/)
    .filter(Boolean)
    .map((p) => `<p>${inline(p)}</p>`)
    .join('')

const anchor = (text: string) => text.toLowerCase().replace(/[^a-z0-9]+/g, '-')

// --- schemas as field tables -------------------------------------------------------------------

const asSchemas = (value: unknown) => (Array.isArray(value) ? (value as JsonSchema[]) : [])

/** A short, readable type: `string (uuid)`, `integer 1..500`, `one of a, b`, `array of string`. */
function typeText(schema: JsonSchema): string {
  if ('const' in schema) return `\`${JSON.stringify(schema.const)}\``
  if (Array.isArray(schema.enum)) {
    return `one of ${schema.enum.map((v) => `\`${typeof v === 'string' ? v : JSON.stringify(v)}\``).join(', ')}`
  }
  const variants = [...asSchemas(schema.anyOf), ...asSchemas(schema.oneOf)]
  if (variants.length > 0) return [...new Set(variants.map(typeText))].join(' or ')
  const type = Array.isArray(schema.type) ? schema.type.join(' or ') : String(schema.type ?? 'any')
  if (type === 'array') {
    const items = (schema.items ?? {}) as JsonSchema
    const bounds = [schema.minItems, schema.maxItems].some((b) => b !== undefined)
      ? ` (${schema.minItems ?? 0}..${schema.maxItems ?? ''} items)`
      : ''
    return `array of ${items.type === 'object' ? 'objects' : typeText(items)}${bounds}`
  }
  if (type === 'object' && !schema.properties && schema.additionalProperties) {
    const values = schema.additionalProperties
    return values === true ? 'object' : `map of ${typeText(values as JsonSchema)}`
  }
  const notes: string[] = []
  if (typeof schema.format === 'string') notes.push(schema.format)
  if (schema.minimum !== undefined || schema.maximum !== undefined) {
    notes.push(`${schema.minimum ?? ''}..${schema.maximum ?? ''}`)
  }
  if (typeof schema.maxLength === 'number' && schema.maxLength < 100_000)
    notes.push(`≤ ${schema.maxLength} chars`)
  return notes.length > 0 ? `${type} (${notes.join(', ')})` : type
}

interface FieldRow {
  name: string
  type: string
  required: boolean
  notes: string
}

/** The object behind a schema: itself, or the object branch of a nullable union. */
function objectOf(schema: JsonSchema): JsonSchema | undefined {
  if (schema.type === 'object' && schema.properties) return schema
  if (schema.type === 'array') return objectOf((schema.items ?? {}) as JsonSchema)
  for (const variant of [...asSchemas(schema.anyOf), ...asSchemas(schema.oneOf)]) {
    const found = objectOf(variant)
    if (found) return found
  }
  return undefined
}

function fieldRows(schema: JsonSchema, prefix = '', depth = 0): FieldRow[] {
  const object = objectOf(schema)
  if (!object || depth > 5) return []
  const required = new Set(Array.isArray(object.required) ? (object.required as string[]) : [])
  return Object.entries((object.properties ?? {}) as Record<string, JsonSchema>).flatMap(([key, field]) => {
    const name = `${prefix}${key}${field.type === 'array' ? '[]' : ''}`
    const notes = [
      typeof field.description === 'string' ? field.description : '',
      field.default !== undefined ? `default \`${JSON.stringify(field.default)}\`` : '',
    ]
      .filter(Boolean)
      .join('; ')
    return [
      { name, type: typeText(field), required: required.has(key), notes },
      ...fieldRows(field, `${name}.`, depth + 1),
    ]
  })
}

/** A field or parameter name, marked when required. */
const name = (text: string, required: boolean) =>
  `<code>${escapeHtml(text)}</code>${required ? ' <small class="req">required</small>' : ''}`

function schemaTable(schema: JsonSchema): string {
  const rows = fieldRows(schema)
  if (rows.length === 0) return `<p>${inline(typeText(schema))}</p>`
  return `<table class="schema"><tr><th>field</th><th>type</th><th>notes</th></tr>${rows
    .map(
      (row) =>
        `<tr><td>${name(row.name, row.required)}</td><td>${inline(row.type)}</td><td>${inline(row.notes)}</td></tr>`,
    )
    .join('')}</table>`
}

const json = (value: unknown) => `<pre class="json">${escapeHtml(JSON.stringify(value, null, 2))}</pre>`

// --- curl ---------------------------------------------------------------------------------------

/** `ApiKey` -> `API_KEY`: the shell variable a scheme's secret is read from. */
const variableOf = (scheme: string) => scheme.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase()

const singleQuoted = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`

function curlExample(method: string, path: string, op: OpenApiOperation, document: OpenApiDocument): string {
  const example = (p: OpenApiParameter) => (p.example === undefined ? undefined : String(p.example))
  let url = path
  for (const p of op.parameters.filter((p) => p.in === 'path')) {
    url = url.replace(`{${p.name}}`, encodeURIComponent(example(p) ?? `<${p.name}>`))
  }
  const query = op.parameters
    .filter((p) => p.in === 'query' && example(p) !== undefined)
    .map((p) => `${encodeURIComponent(p.name)}=${encodeURIComponent(example(p)!)}`)
    .join('&')
  const parts = [
    `curl -s${method === 'get' ? '' : ` -X ${method.toUpperCase()}`} "$BASE${url}${query ? `?${query}` : ''}"`,
  ]
  for (const requirement of op.security.slice(0, 1)) {
    for (const name of Object.keys(requirement)) {
      const scheme = document.components.securitySchemes[name] ?? {}
      if (scheme.type === 'apiKey') parts.push(`-H "${scheme.name}: $${variableOf(name)}"`)
      else if (scheme.type === 'http') parts.push(`-H "Authorization: Bearer $${variableOf(name)}"`)
    }
  }
  for (const p of op.parameters.filter((p) => p.in === 'header' && example(p) !== undefined)) {
    parts.push(`-H ${singleQuoted(`${p.name}: ${example(p)}`)}`)
  }
  const content = Object.entries(op.requestBody?.content ?? {}).find(
    ([, media]) => media.example !== undefined,
  )
  if (content) {
    parts.push(`-H 'content-type: ${content[0]}'`, `-d ${singleQuoted(JSON.stringify(content[1].example))}`)
  }
  const success = Object.entries(op.responses).find(([status]) => Number(status) < 300)?.[1]
  const type = Object.keys(success?.content ?? {})[0]
  if (!type) parts.push(`-w '%{http_code}\\n'`)
  else if (!/json|text|javascript/.test(type)) parts.push(`-o /dev/null -w '%{http_code} %{content_type}\\n'`)
  return parts.join(' \\\n  ')
}

// --- operations ---------------------------------------------------------------------------------

/** The key a route takes and, for the API's routes, the scopes that pass its check. */
function credentials(op: OpenApiOperation, document: OpenApiDocument): string {
  const names = [...new Set(op.security.flatMap((requirement) => Object.keys(requirement)))]
  const shown = names.map((name) => {
    const scheme = document.components.securitySchemes[name] ?? {}
    return scheme.type === 'apiKey' ? `\`${scheme.name}\`` : `\`Authorization: Bearer\` (${name})`
  })
  if (shown.length === 0) return 'No key'
  const scopes = op['x-required-scopes']
  const scope = scopes ? `, scope ${scopes.map((s) => `\`${s}\``).join(' or ')}` : ''
  return `Key: ${shown.join(' or ')}${scope}`
}

function parameterTable(op: OpenApiOperation): string {
  if (op.parameters.length === 0) return ''
  return `<table class="params"><tr><th>parameter</th><th>in</th><th>type</th><th>notes</th></tr>${op.parameters
    .map((p) => {
      const notes = [
        p.description ?? '',
        p.schema.default !== undefined ? `default \`${JSON.stringify(p.schema.default)}\`` : '',
      ]
        .filter(Boolean)
        .join('; ')
      return (
        `<tr><td>${name(p.name, p.required)}</td><td>${p.in}</td><td>${inline(typeText(p.schema))}</td>` +
        `<td>${inline(notes)}</td></tr>`
      )
    })
    .join('')}</table>`
}

function requestBody(op: OpenApiOperation): string {
  const entries = Object.entries(op.requestBody?.content ?? {})
  if (entries.length === 0) return ''
  const [, media] = entries[0]!
  const types = entries.map(([type]) => `<code>${escapeHtml(type)}</code>`).join(' or ')
  return `<details><summary>Request body: ${types}</summary>${schemaTable(media.schema)}${
    media.example === undefined ? '' : `<p>Example</p>${json(media.example)}`
  }</details>`
}

/** The codes of an error response (its schema narrows the error body's `code`), else undefined. */
function errorCodesOf(response: OpenApiResponse): string[] | undefined {
  const schema = response.content?.['application/json']?.schema as
    | { allOf?: { properties?: { code?: { enum?: string[] } } }[] }
    | undefined
  return schema?.allOf?.[1]?.properties?.code?.enum
}

function responses(op: OpenApiOperation): string {
  const entries = Object.entries(op.responses)
  const plain = entries.filter(([, response]) => !errorCodesOf(response))
  const errors = entries.filter(([, response]) => errorCodesOf(response))
  const plainHeaders = new Set(plain.flatMap(([, r]) => Object.keys(r.headers ?? {})))
  const rows = plain
    .map(([status, response]) => {
      const types = Object.keys(response.content ?? {})
      const headers = Object.keys(response.headers ?? {})
      const extra = [
        types.map((t) => `\`${t}\``).join(', '),
        headers.length > 0 ? `headers ${headers.map((h) => `\`${h}\``).join(', ')}` : '',
      ]
        .filter(Boolean)
        .join('; ')
      return `<tr><td class="${Number(status) < 400 ? 'ok' : 'err'}">${status}</td><td>${inline(response.description)}${
        extra ? `<br><small>${inline(extra)}</small>` : ''
      }</td></tr>`
    })
    .join('')
  // Errors on one line: each code links to its row in the catalogue at the end of the page.
  const errorLine = errors
    .map(([status, response]) => {
      const codes = errorCodesOf(response)!
        .map((code) => `<a href="#error-${escapeHtml(code)}"><code>${escapeHtml(code)}</code></a>`)
        .join(', ')
      const headers = Object.keys(response.headers ?? {}).filter((h) => !plainHeaders.has(h))
      return `<span class="e"><b class="err">${status}</b> ${codes}${
        headers.length > 0
          ? ` <small>(${headers.map((h) => `<code>${escapeHtml(h)}</code>`).join(', ')})</small>`
          : ''
      }</span>`
    })
    .join(' ')
  const schemas = plain
    .flatMap(([status, response]) =>
      Object.entries(response.content ?? {})
        .filter(([type]) => /json/.test(type))
        .slice(0, 1)
        .map(
          ([type, media]) =>
            `<details><summary>Response ${status}: <code>${escapeHtml(type)}</code></summary>${schemaTable(media.schema)}</details>`,
        ),
    )
    .join('')
  return `<table class="responses"><tr><th>status</th><th>meaning</th></tr>${rows}</table>${
    errorLine ? `<p class="errors">Errors: ${errorLine}</p>` : ''
  }${schemas}`
}

function renderOperation(method: string, path: string, op: OpenApiOperation, document: OpenApiDocument) {
  return `<section class="op" id="${escapeHtml(op.operationId)}">
<h3><span class="m ${method}">${method.toUpperCase()}</span> <code>${escapeHtml(path)}</code></h3>
<p class="summary">${inline(op.summary)}</p>
<pre class="curl">${escapeHtml(curlExample(method, path, op, document))}</pre>
${paragraphs(op.description)}<p class="meta">${inline(credentials(op, document))}</p>
${parameterTable(op)}${requestBody(op)}${responses(op)}</section>`
}

// --- page ---------------------------------------------------------------------------------------

function errorSection(document: OpenApiDocument): string {
  const rows = document['x-error-codes']
  const table = (list: ErrorCodeDoc[], reserved: boolean) =>
    `<table class="codes"><tr><th>code</th><th>status</th><th>meaning</th></tr>${list
      .map(
        (row) =>
          `<tr id="error-${escapeHtml(row.code)}"><td><code>${escapeHtml(row.code)}</code></td><td>${row.status}</td><td>${inline(row.message)}${
            reserved && row.reservedFor ? `<br><small>reserved for ${inline(row.reservedFor)}</small>` : ''
          }</td></tr>`,
      )
      .join('')}</table>`
  const inUse = rows.filter((row) => !row.reservedFor)
  const reserved = rows.filter((row) => row.reservedFor)
  return `<section id="errors"><h2>Errors</h2>
<p>Every error has the body <code>{ statusCode, error, code, message, details? }</code>;
<code>details.issues</code> lists every failing field of an <code>invalid_request</code>.</p>
${table(inUse, false)}
${
  reserved.length > 0
    ? `<h3 id="reserved-codes">Reserved codes</h3><p>In the catalogue for features not built yet: no route returns them today.</p>${table(reserved, true)}`
    : ''
}
<details><summary>Error body schema</summary>${schemaTable(document.components.schemas.Error ?? {})}</details></section>`
}

/**
 * The HTML page of the document: a table of contents by tag, then each operation with a curl
 * example, its parameters, and its schemas folded.
 * @example reply.type('text/html').send(renderDocsPage(document))
 */
export function renderDocsPage(document: OpenApiDocument): string {
  const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ path, method, op })),
  )
  const byTag = document.tags.map((tag) => ({
    tag,
    operations: operations.filter(({ op }) => op.tags.includes(tag.name)),
  }))
  const toc = byTag
    .map(
      ({ tag, operations }) =>
        `<li><a href="#tag-${anchor(tag.name)}">${escapeHtml(tag.name)}</a><ul>${operations
          .map(
            ({ path, method, op }) =>
              `<li><a href="#${escapeHtml(op.operationId)}" title="${escapeHtml(`${method.toUpperCase()} ${path}`)}"><span class="m ${method}">${method.toUpperCase()}</span> ${inline(op.summary)}</a></li>`,
          )
          .join('')}</ul></li>`,
    )
    .join('')
  const sections = byTag
    .map(
      ({ tag, operations }) =>
        `<h2 id="tag-${anchor(tag.name)}">${escapeHtml(tag.name)}</h2>${tag.description ? paragraphs(tag.description) : ''}${operations
          .map(({ path, method, op }) => renderOperation(method, path, op, document))
          .join('\n')}`,
    )
    .join('\n')
  const schemes = Object.keys(document.components.securitySchemes)
  const keyFields: Record<string, string> = { ApiKey: 'apiKey', PartnerApiKey: 'partnerKey' }
  const setup = [
    'BASE=http://127.0.0.1:8080   # the server (PUBLIC_URL)',
    ...schemes.map((name) =>
      keyFields[name]
        ? `${variableOf(name)}=$(node -p "require('./data/bootstrap.json').${keyFields[name]}")`
        : `${variableOf(name)}=...   # the server's ${variableOf(name)} setting`,
    ),
  ].join('\n')
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(document.info.title)}</title>
<style>
*{box-sizing:border-box}
body{font:15px/1.5 system-ui,sans-serif;margin:0;color:#1b1f24;background:#fff}
.layout{display:grid;grid-template-columns:minmax(0,1fr);max-width:1240px;margin:0 auto}
nav{padding:1rem 1.25rem;font-size:14px;border-bottom:1px solid #e3e6ea}
nav ul{list-style:none;margin:0;padding:0}nav li li{margin:.15rem 0 .15rem .5rem}nav li li a{display:flex;gap:.4rem}nav li li .m{flex:0 0 3.8em;padding-top:.15em}
nav>ul>li{margin-bottom:.5rem}nav>ul>li>a{font-weight:600}nav a{color:#1b1f24;text-decoration:none}nav a:hover{text-decoration:underline}
main{padding:0 1.25rem 4rem;min-width:0}
@media (min-width:980px){.layout{grid-template-columns:300px minmax(0,1fr)}
nav{position:sticky;top:0;height:100vh;overflow:auto;border-bottom:0;border-right:1px solid #e3e6ea}}
h1{margin:1.5rem 0 .25rem}h2{margin:2.5rem 0 .5rem;padding-top:.5rem;border-top:2px solid #1b1f24}
h3{margin:0;font-size:17px}h3 code{font-size:15px;overflow-wrap:anywhere}
pre{background:#f4f5f7;padding:.6rem .75rem;overflow:auto;font-size:13px;margin:.5rem 0;border-radius:4px}
pre.curl{background:#1f2430;color:#e6e9ef;white-space:pre-wrap;overflow-wrap:anywhere}
code{font-size:13px;font-family:ui-monospace,SFMono-Regular,Menlo,monospace}
table{border-collapse:collapse;margin:.5rem 0;font-size:14px;width:100%}
td,th{border-bottom:1px solid #e3e6ea;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{font-weight:600;color:#57606a}td code{overflow-wrap:anywhere}.req{color:#b70;white-space:nowrap}
.op{border:1px solid #e3e6ea;border-radius:6px;padding:.75rem 1rem;margin:1rem 0}
.summary{margin:.25rem 0;color:#57606a}.meta{font-size:14px;color:#57606a}
.m{font-weight:700;font-family:ui-monospace,monospace;font-size:11px;display:inline-block;min-width:3.2em}
.get{color:#0a7}.post{color:#06c}.put,.patch{color:#b70}.delete{color:#c22}
.ok{color:#0a7;font-weight:600}.err{color:#c22;font-weight:600}
.errors{font-size:14px}.errors a{color:inherit}.e{white-space:nowrap;margin-right:.6rem}.e code{white-space:normal}
details{margin:.5rem 0;border:1px solid #e3e6ea;border-radius:4px;padding:.25rem .75rem}
summary{cursor:pointer;font-weight:600;font-size:14px}
</style></head><body><div class="layout">
<nav aria-label="Contents"><ul>${toc}<li><a href="#errors">Errors</a></li></ul></nav>
<main>
<h1>${escapeHtml(document.info.title)} <small>${escapeHtml(document.info.version)}</small></h1>
${paragraphs(document.info.description)}
<p>The machine-readable document: <a href="/openapi.json">/openapi.json</a> (OpenAPI ${document.openapi}).
The examples read these shell variables (ids in the examples are placeholders: use yours, e.g. the
<code>organizationId</code> of <code>data/bootstrap.json</code>):</p>
<pre>${escapeHtml(setup)}</pre>
${sections}
${errorSection(document)}
</main></div></body></html>
`
}
