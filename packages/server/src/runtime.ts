import type { BillingDeps } from '@visitor-id/core/billing'
import type { Config } from '@visitor-id/core/config'
import type { Coordination } from '@visitor-id/core/coordination'
import type { FlowDeps } from '@visitor-id/core/integrations'
import { bootstrapIfEmpty } from '@visitor-id/core/organizations'
import type { PhoneSearchDeps } from '@visitor-id/core/phone-search'
import { createErasedVisitors, type ErasedVisitors } from '@visitor-id/core/privacy'
import { createRepositories, type Repositories } from '@visitor-id/core/repositories'
import { createReadModel, type Migration, migrate, readMigrations, type Store } from '@visitor-id/core/store'
import {
  announceImportApplied,
  createIngestService,
  createMetricsRegistry,
  type ImportKind,
  type IngestService,
  type MetricsRegistry,
} from '@visitor-id/ingest'
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import { pino } from 'pino'
import { createCoordination, createProcessServices, type ProcessServices } from './adapters.js'
import { adminSocketPath, listenAdminSocket } from './admin-socket.js'
import { buildApp, redactedPaths } from './app.js'
import { serveAdminRequest } from './cli.js'
import { openStore } from './open-store.js'
import { registerProcessMetrics } from './process-metrics.js'
import { createStopList, type StopList } from './stop-list.js'
import { startWorkers } from './workers.js'

export { openStore }

/** A start-up failure a person can fix; printed as one line. */
export class StartupError extends Error {
  override name = 'StartupError'
}

/** The listen failures a person fixes with PORT or HOST, as one line naming the variable. */
function listenError(error: unknown, config: Config): StartupError | undefined {
  switch ((error as NodeJS.ErrnoException).code) {
    case 'EADDRINUSE':
      return new StartupError(`port ${config.port} is already in use: set PORT to a free port`)
    case 'EADDRNOTAVAIL':
      return new StartupError(
        `HOST ${config.host} is not an address of this machine: set HOST (e.g. 0.0.0.0)`,
      )
    default:
      return undefined
  }
}

export interface RunningServer {
  app: FastifyInstance
  url: string
  /** The process's store and repositories (tests and benchmarks seed data through them). */
  store: Store
  repos: Repositories
  /** The ingest side (spool, writer, metrics) when the role serves ingest. */
  ingest: IngestService | undefined
  /**
   * The billing, phone search and integration services this process built (adapters.ts), the ones
   * its API and workers use; undefined in a process of role `ingest`, which uses none.
   */
  billing: BillingDeps | undefined
  phone: PhoneSearchDeps | undefined
  integrations: FlowDeps | undefined
  bootstrapFile: string
  /** Stops accepting, flushes every buffer, closes the store; idempotent. */
  stop(): Promise<void>
}

const servesIngest = (config: Config) => config.role === 'all' || config.role === 'ingest'
const servesApi = (config: Config) => config.role === 'all' || config.role === 'api'
const runsWorkers = (config: Config) => config.role === 'all' || config.role === 'worker'

/**
 * Starts one process: the parts every role needs, then those of its role (ingest, API, workers),
 * then HTTP. Whatever started goes on one stop list, which `stop()` runs, and so does a start that
 * fails part way: it leaves nothing running.
 * @example const server = await startServer(loadConfig(process.env))
 */
export async function startServer(config: Config): Promise<RunningServer> {
  const logger = pino({ level: config.logLevel, redact: redactedPaths })
  const started = createStopList()
  try {
    const base = await startFoundation(config, logger, started)
    // Built once, here, and handed to the API and the workers: the roles that use them.
    const services = servesApi(config) || runsWorkers(config) ? createProcessServices(base) : undefined
    const metrics = createMetricsRegistry()
    registerProcessMetrics(metrics, config.clickhouse)
    const ingest = servesIngest(config) ? await startIngest(base, metrics, started) : undefined
    const app = await startHttp({ ...base, logger, services, metrics, ingest }, started)
    await ingest?.start(app.log)
    if (runsWorkers(config) && services) startWorkers({ ...base, services, log: app.log }, started)
    const address = await app.listen({ port: config.port, host: config.host }).catch((error: unknown) => {
      throw listenError(error, config) ?? error
    })
    if (base.bootstrap?.created)
      app.log.info({ file: base.bootstrap.file }, 'bootstrap: wrote the first keys')
    // This process owns the embedded store: admin commands (the CLI) come to it over a socket.
    if (!config.clickhouse.url) await startAdminSocket({ ...base, ingest, log: app.log }, started)
    return {
      app,
      url: address.replace('0.0.0.0', '127.0.0.1'),
      store: base.store,
      repos: base.repos,
      ingest,
      billing: services?.billing,
      phone: services?.phone,
      integrations: services?.integrations,
      bootstrapFile: base.bootstrap?.file ?? `${config.dataDir}/bootstrap.json`,
      stop: () => started.stopAll(),
    }
  } catch (error) {
    await started.stopAll().catch(() => {})
    throw error
  }
}

/** What every role needs: the store, the coordination, the migrated schema, the repositories. */
interface Foundation {
  config: Config
  store: Store
  coordination: Coordination
  repos: Repositories
  migrations: Migration[]
  bootstrap: Awaited<ReturnType<typeof bootstrapIfEmpty>> | undefined
  /** Erased visitor ids, kept in step across processes: ingest replaces them, erasures add to them. */
  erasedVisitors: ErasedVisitors
}

async function startFoundation(
  config: Config,
  logger: FastifyBaseLogger,
  started: StopList,
): Promise<Foundation> {
  const { store, lock } = openStore(config)
  // The store closes before its data-directory lock is released (last added, first stopped).
  started.add('store', () => lock?.release())
  started.add('store', () => store.close())
  const coordination = createCoordination(config, (error, context) =>
    logger.warn({ context, error: error.message }, 'coordination error'),
  )
  started.add('coordination', () => coordination.close())
  // Fail at once with a clear line rather than hang on the first lock or job.
  if (coordination.kind === 'redis' && !(await coordination.ping())) {
    throw new StartupError(
      'Redis at REDIS_URL is not answering: start it, or unset REDIS_URL for one process',
    )
  }
  const migrations = readMigrations()
  await migrate(store, { locks: coordination.kind === 'redis' ? coordination.locks : undefined })
  // Small entities are served from memory; changes reach the other processes through pubsub.
  const readModel = createReadModel({
    pubsub: coordination.pubsub,
    ttlMs: config.entityCacheTtlMs,
    onError: (error) => logger.warn({ err: error }, 'entity change not announced'),
  })
  await readModel.start()
  const repos = createRepositories(store, readModel)
  const bootstrap = config.bootstrap
    ? await bootstrapIfEmpty(repos, config.dataDir, {
        initialCredits: { store, amount: config.initialCredits },
      })
    : undefined
  const erasedVisitors = createErasedVisitors(store, {
    pubsub: coordination.pubsub,
    // The safety net for an announcement lost; erasures are rare and announced at once.
    refreshMs: 60_000,
    onError: (error) => logger.warn({ err: error }, 'privacy: erased visitors not refreshed'),
  })
  await erasedVisitors.start()
  started.add('coordination', () => erasedVisitors.stop())
  return { config, store, coordination, repos, migrations, bootstrap, erasedVisitors }
}

/** The ingest role's service (spool, writer); it starts taking hits once the HTTP app exists. */
async function startIngest(
  base: Foundation,
  metrics: MetricsRegistry,
  started: StopList,
): Promise<IngestService> {
  const ingest = await createIngestService({
    store: base.store,
    repos: base.repos,
    dataDir: base.config.dataDir,
    settings: base.config.ingest,
    registry: metrics,
    pubsub: base.coordination.pubsub,
    erasedVisitors: base.erasedVisitors,
  })
  // Every hit still buffered goes to ClickHouse (or the spool) before the store closes.
  started.add('ingest', () => ingest.close())
  return ingest
}

/** The HTTP app of every role: health and metrics, plus the ingest routes and the API by role. */
async function startHttp(
  parts: Foundation & {
    logger: FastifyBaseLogger
    services: ProcessServices | undefined
    metrics: MetricsRegistry
    ingest: IngestService | undefined
  },
  started: StopList,
): Promise<FastifyInstance> {
  const app = await buildApp({
    config: parts.config,
    logger: parts.logger,
    store: parts.store,
    coordination: parts.coordination,
    repos: parts.repos,
    migrations: parts.migrations,
    metrics: parts.metrics,
    // An erasure waits this long for hits acknowledged before it to be stored, then deletes them too.
    privacy: { erasedVisitors: parts.erasedVisitors, pendingHitsMs: parts.config.ingest.batchMs + 1000 },
    ...(parts.services ? { services: parts.services } : {}),
    ...(parts.ingest ? { ingest: parts.ingest.plugin } : {}),
  })
  started.add('requests', () => app.close())
  return app
}

/** The admin socket the CLI sends its commands to; none (a warning) when it cannot listen. */
async function startAdminSocket(
  parts: Foundation & { ingest: IngestService | undefined; log: FastifyBaseLogger },
  started: StopList,
): Promise<void> {
  const { config, store, repos, coordination, ingest, log } = parts
  const pubsub = coordination.pubsub
  const context = {
    config,
    store,
    repos,
    coordination,
    ingest,
    erasedVisitors: parts.erasedVisitors,
    // An import applies at once: here (when this process ingests), and in the other processes.
    importFinished: async (kind: ImportKind) => {
      if (ingest) return ingest.importFinished(kind)
      await announceImportApplied(pubsub, kind).catch((error: unknown) => {
        log.warn({ err: error, kind }, 'import not announced to the other processes')
      })
    },
  }
  const admin = await listenAdminSocket(adminSocketPath(config.dataDir), (request, reply) => {
    log.info({ command: request.argv.slice(0, 2).join(' ') }, 'admin command')
    return serveAdminRequest(context, request, reply)
  }).catch((error: unknown) => {
    log.warn({ err: error }, 'no admin socket: the CLI needs this server stopped')
    return undefined
  })
  // Added after the HTTP app, so it closes first: commands under way finish before the store closes.
  if (admin) started.add('requests', () => admin.close())
}
