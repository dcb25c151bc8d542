import { readFileSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import type { OpenApiDocument } from '@visitor-id/api'
import { loadConfig } from '@visitor-id/core/config'
import { type RunningServer, startServer } from '@visitor-id/server'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

// The dashboard's API types (packages/dashboard/src/api-schema.d.ts) are generated from the OpenAPI
// document and committed, so that the dashboard's type check follows the API. These fail when the
// committed file is not what the document generates, or when the generator's document is not the
// /api/v1 part of what the server serves at /openapi.json. Needs `npm run build` (the generator
// reads the built packages).

interface Generator {
  schemaFile: string
  regenerateCommand: string
  apiDocument: () => OpenApiDocument
  apiSchemaSource: () => Promise<string>
}

const script = path.resolve(import.meta.dirname, '../packages/dashboard/scripts/api-types.mjs')
const generator = (await import(pathToFileURL(script).href)) as Generator

/** The first line where two texts differ, to say where without printing either whole. */
function firstDifference(committed: string, generated: string): string {
  const a = committed.split('\n')
  const b = generated.split('\n')
  const line = a.findIndex((text, index) => text !== b[index])
  const at = line === -1 ? a.length : line
  return `line ${at + 1}: committed ${JSON.stringify(a[at] ?? '(end)')}, generated ${JSON.stringify(b[at] ?? '(end)')}`
}

describe('the dashboard API types', () => {
  const data = tempDir('vid-dashboard-schema-')
  let server: RunningServer

  beforeAll(async () => {
    server = await startServer(
      loadConfig({ DATA_DIR: data.dir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent' }),
    )
  })

  afterAll(async () => {
    await server?.stop()
    data.remove()
  })

  it('are what the OpenAPI document generates', async () => {
    const committed = readFileSync(generator.schemaFile, 'utf8')
    const generated = await generator.apiSchemaSource()
    expect(
      committed === generated,
      `${path.relative(process.cwd(), generator.schemaFile)} is out of date with the API's document ` +
        `(${firstDifference(committed, generated)}). Regenerate it: ${generator.regenerateCommand}`,
    ).toBe(true)
  })

  it('come from the /api/v1 part of the document the server serves', async () => {
    const served = (
      await server.app.inject({ method: 'GET', url: '/openapi.json' })
    ).json() as OpenApiDocument
    const document = generator.apiDocument()
    const api = Object.fromEntries(
      Object.entries(served.paths).filter(([route]) => route.startsWith('/api/v1/')),
    )
    expect(Object.keys(document.paths).sort()).toEqual(Object.keys(api).sort())
    expect(document.paths).toEqual(api)
    expect(document.components.schemas).toEqual(served.components.schemas)
  })
})
