import {
  bootstrapIfEmpty,
  type Config,
  type Coordination,
  createCoordination,
  createRepositories,
  createStore,
  type DataDirLock,
  lockDataDir,
  migrate,
  readMigrations,
  type Store,
} from '@visitor-id/core'
import { createBatchWriter, createTrackingKeyCache, type PageViewRow } from '@visitor-id/ingest'
import type { FastifyInstance } from 'fastify'
import { buildApp } from './app.js'

export interface RunningServer {
  app: FastifyInstance
  url: string
  bootstrapFile: string
  /** Stops accepting, flushes every buffer, closes the store; idempotent. */
  stop(): Promise<void>
}

/**
 * Opens the embedded store only after claiming the data directory, so a second process gets a
 * clear refusal instead of a corrupted store.
 */
export function openStore(config: Config): { store: Store; lock: DataDirLock | undefined } {
  const lock = config.clickhouse.url ? undefined : lockDataDir(config.dataDir)
  try {
    const store = createStore({ ...config.clickhouse, dataDir: config.dataDir })
    return { store, lock }
  } catch (error) {
    lock?.release()
    throw error
  }
}

/**
 * Starts one process: store, migrations, coordination, bootstrap, HTTP.
 * @example const server = await startServer(loadConfig(process.env))
 */
export async function startServer(config: Config): Promise<RunningServer> {
  const { store, lock } = openStore(config)
  let coordination: Coordination | undefined
  let app: FastifyInstance | undefined
  const cleanup = async () => {
    await app?.close()
    await coordination?.close()
    await store.close()
    lock?.release()
  }
  try {
    coordination = createCoordination({ redisUrl: config.redis.url, prefix: config.redis.prefix })
    const migrations = readMigrations()
    await migrate(store, { locks: coordination.kind === 'redis' ? coordination.locks : undefined })
    const repos = createRepositories(store)
    const bootstrap = config.bootstrap ? await bootstrapIfEmpty(repos, config.dataDir) : undefined

    const writer = createBatchWriter<PageViewRow>({
      sink: (rows) => store.insert('page_views', rows),
      maxRows: config.ingest.batchRows,
      maxMs: config.ingest.batchMs,
    })
    const trackingKeys = createTrackingKeyCache({ repos, ttlMs: 30_000 })
    app = await buildApp({ config, store, coordination, repos, migrations, ingest: { writer, trackingKeys } })
    const address = await app.listen({ port: config.port, host: config.host })
    if (bootstrap?.created) app.log.info({ file: bootstrap.file }, 'bootstrap: wrote the first keys')

    let stopping: Promise<void> | undefined
    const running = app
    return {
      app: running,
      url: address.replace('0.0.0.0', '127.0.0.1'),
      bootstrapFile: bootstrap?.file ?? `${config.dataDir}/bootstrap.json`,
      stop() {
        stopping ??= (async () => {
          await running.close()
          await writer.close()
          await coordination?.close()
          await store.close()
          lock?.release()
        })()
        return stopping
      },
    }
  } catch (error) {
    await cleanup().catch(() => {})
    throw error
  }
}
