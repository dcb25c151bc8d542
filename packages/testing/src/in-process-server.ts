import { readFileSync } from 'node:fs'
import { loadConfig } from '@visitor-id/core/config'
import type { BootstrapFile } from '@visitor-id/core/organizations'
import { type RunningServer, startServer } from '@visitor-id/server'
import { tempDir } from './temp-dir.js'

export interface InProcessServer {
  server: RunningServer
  keys: BootstrapFile
  /** Stops the server and removes its data directory. */
  close(): Promise<void>
}

/**
 * Starts the all-in-one server in this process on a fresh data directory (one per test file: the
 * embedded store allows one per process) and reads the bootstrap keys it wrote.
 */
export async function startInProcessServer(
  prefix: string,
  env: Record<string, string> = {},
): Promise<InProcessServer> {
  const data = tempDir(prefix)
  const server = await startServer(
    loadConfig({
      DATA_DIR: data.dir,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      // Tests read what they sent right after its 202: acknowledged once in ClickHouse, it is there.
      // The spool-first acknowledgement (a server's default) has its own tests (ingest-crash,
      // ingest-durability) and sets INGEST_ACK itself.
      INGEST_ACK: 'store',
      ...env,
    }),
  )
  const keys = JSON.parse(readFileSync(server.bootstrapFile, 'utf8')) as BootstrapFile
  return {
    server,
    keys,
    close: async () => {
      await server.stop()
      data.remove()
    },
  }
}
