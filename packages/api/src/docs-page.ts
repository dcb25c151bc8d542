// `/docs`: a self-contained HTML rendering of the OpenAPI document (no scripts, no CDN: the service
// may run offline). Generated from the document at start-up.
import type { OpenApiDocument, OpenApiOperation } from './openapi.js'

const escapeHtml = (value: string) =>
  value.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  )

/** `code` spans for backticked text, everything else escaped. */
const inline = (text: string) =>
  escapeHtml(text).replace(/`([^`]+)`/g, (_, code: string) => `<code>${code}</code>`)

const json = (value: unknown) => `<pre>${escapeHtml(JSON.stringify(value, null, 2))}</pre>`

function renderOperation(method: string, path: string, op: OpenApiOperation): string {
  const id = escapeHtml(op.operationId)
  const params = op.parameters.length
    ? `<h4>Parameters</h4><table><tr><th>name</th><th>in</th><th>required</th><th>schema</th></tr>${op.parameters
        .map(
          (p) =>
            `<tr><td><code>${escapeHtml(p.name)}</code></td><td>${p.in}</td><td>${p.required ? 'yes' : 'no'}</td>` +
            `<td>${p.description ? `${inline(p.description)}<br>` : ''}<code>${escapeHtml(JSON.stringify(p.schema))}</code></td></tr>`,
        )
        .join('')}</table>`
    : ''
  const body = op.requestBody
    ? `<h4>Request body (application/json)</h4>${json(op.requestBody.content['application/json'].schema)}` +
      (op.requestBody.content['application/json'].example === undefined
        ? ''
        : `<p>Example</p>${json(op.requestBody.content['application/json'].example)}`)
    : ''
  const responses = Object.entries(op.responses)
    .map(([status, response]) => {
      const content = response.content as { 'application/json'?: { schema: unknown } } | undefined
      const schema = content?.['application/json']?.schema
      const isError = Number(status) >= 400
      return `<details${isError ? '' : ' open'}><summary><b>${status}</b> ${inline(response.description)}</summary>${
        schema && !isError ? json(schema) : ''
      }</details>`
    })
    .join('')
  return `<section id="${id}"><h3><span class="m ${method}">${method.toUpperCase()}</span> <code>${escapeHtml(path)}</code></h3>
<p>${inline(op.summary)}</p><p>${inline(op.description).replace(/\n\n/g, '</p><p>')}</p>
<p>Key: <code>${op.security.map((s) => (Object.keys(s)[0] === 'ApiKey' ? 'X-API-Key' : 'X-Partner-API-Key')).join(', ')}</code></p>
${params}${body}<h4>Responses</h4>${responses}</section>`
}

/**
 * The HTML page listing every operation of the document with its parameters and schemas.
 * @example reply.type('text/html').send(renderDocsPage(document))
 */
export function renderDocsPage(document: OpenApiDocument): string {
  const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ path, method, op })),
  )
  const toc = operations
    .map(
      ({ path, method, op }) =>
        `<li><a href="#${escapeHtml(op.operationId)}"><span class="m ${method}">${method.toUpperCase()}</span> ${escapeHtml(path)}</a> ${inline(op.summary)}</li>`,
    )
    .join('')
  const sections = document.tags
    .map(
      ({ name }) =>
        `<h2>${escapeHtml(name)}</h2>${operations
          .filter(({ op }) => op.tags.includes(name))
          .map(({ path, method, op }) => renderOperation(method, path, op))
          .join('')}`,
    )
    .join('')
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(document.info.title)}</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:960px;margin:2rem auto;padding:0 1rem;color:#1b1f24}
pre{background:#f4f5f7;padding:.75rem;overflow:auto;font-size:13px}code{font-size:13px}
table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:.25rem .5rem;text-align:left;vertical-align:top}
section{border-top:1px solid #ddd;margin-top:1.5rem}.m{font-weight:bold;font-family:monospace}
.get{color:#0a7}.post{color:#06c}.put,.patch{color:#b70}.delete{color:#c22}summary{cursor:pointer}
</style></head><body>
<h1>${escapeHtml(document.info.title)} <small>${escapeHtml(document.info.version)}</small></h1>
<p>${inline(document.info.description)}</p>
<p>The machine-readable document: <a href="/openapi.json">/openapi.json</a> (OpenAPI ${document.openapi}).</p>
<h2>Operations</h2><ul>${toc}</ul>
${sections}
<h2>Error body</h2>${json(document.components.schemas.Error)}
</body></html>
`
}
