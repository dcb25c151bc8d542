// ClickHouse's HTTP interface in front of the real engine (chdb), for tests that need a ClickHouse
// server: several processes of the service sharing one store through `CLICKHOUSE_URL`, as they do
// in a deployment. It speaks what @clickhouse/client sends: POST with the SQL in the body (or, for an
// insert, the statement in `query` and the rows in the body), settings and `param_*` values in the
// URL, `GET /ping`; errors as status 500 with the engine's own message, which the client parses.
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { Session } from 'chdb'

export interface ClickHouseHttp {
  url: string
  close(): Promise<void>
}

// Options of the HTTP layer rather than settings of the engine.
const notSettings = new Set(['database', 'query', 'query_id', 'session_id', 'role', 'default_format'])
const httpOnlySettings = new Set([
  'wait_end_of_query',
  'send_progress_in_http_headers',
  'http_headers_progress_interval_ms',
  'enable_http_compression',
])

const settingLiteral = (value: string) =>
  /^-?\d+(\.\d+)?$/.test(value) ? value : `'${value.replace(/[\\']/g, '\\$&')}'`

export interface ClickHouseHttpOptions {
  /** The server configuration's `backups.allowed_path`: BACKUP / RESTORE to `File()` under it. */
  backupsAllowedPath?: string
}

/**
 * Serves the engine of `dataDir` over ClickHouse's HTTP protocol on a loopback port. A request's
 * `database` is its current database, as on a server (`CLICKHOUSE_DATABASE`).
 * @example const clickhouse = await startClickHouseHttp(dir); env.CLICKHOUSE_URL = clickhouse.url
 */
export async function startClickHouseHttp(
  dataDir: string,
  options: ClickHouseHttpOptions = {},
): Promise<ClickHouseHttp> {
  const session = new Session(
    dataDir,
    options.backupsAllowedPath
      ? { connectionArgs: [`--backups.allowed_path=${options.backupsAllowedPath}`] }
      : {},
  )
  let current = 'default'
  const run = async (url: URL, body: string) => {
    const database = url.searchParams.get('database') || 'default'
    if (database !== current) {
      await session.queryAsync(`USE \`${database.replace(/[\\`]/g, '\\$&')}\``)
      current = database
    }
    const settings: string[] = []
    const params: Record<string, string> = {}
    for (const [name, value] of url.searchParams) {
      if (name.startsWith('param_')) params[name.slice('param_'.length)] = value
      else if (!notSettings.has(name) && !httpOnlySettings.has(name)) {
        if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
          throw new Error(`Code: 115. DB::Exception: Unknown setting ${name}. (UNKNOWN_SETTING)`)
        settings.push(`SET ${name} = ${settingLiteral(value)}`)
      }
    }
    // One statement per request, as the client sends it; settings hold for this request's session.
    for (const statement of settings) await session.queryAsync(statement)
    const insert = url.searchParams.get('query')
    const sql = insert ? `${insert}\n${body}` : body
    const format = { format: 'TabSeparated' }
    const result =
      Object.keys(params).length > 0
        ? await session.queryBindAsync(sql, params, format)
        : await session.queryAsync(sql, format)
    return Buffer.from(result.bytes())
  }

  // Requests run one at a time: one engine session, like one connection's worth of queries.
  let queue: Promise<unknown> = Promise.resolve()
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const url = new URL(request.url ?? '/', 'http://localhost')
      if (url.pathname === '/ping') {
        response.end('Ok.\n')
        return
      }
      const answer = queue.then(() => run(url, Buffer.concat(chunks).toString('utf8')))
      queue = answer.catch(() => {})
      answer.then(
        (bytes) => {
          response.writeHead(200, { 'X-ClickHouse-Summary': '{}' })
          response.end(bytes)
        },
        (error: unknown) => {
          const message = error instanceof Error ? error.message : String(error)
          const code = /^Code: (\d+)/.exec(message)?.[1] ?? '1'
          response.writeHead(500, { 'X-ClickHouse-Exception-Code': code })
          response.end(message.startsWith('Code:') ? message : `Code: ${code}. DB::Exception: ${message}`)
        },
      )
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await queue
      session.close()
    },
  }
}
