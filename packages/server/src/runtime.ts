import {
  autoEnrichPhone,
  billingDeps,
  billingEmail,
  billingSweep,
  bootstrapIfEmpty,
  type Config,
  type Coordination,
  createCoordination,
  createDnsResolver,
  createMailer,
  createReadModel,
  createRepositories,
  creditEmail,
  type EventProcessing,
  emailSecret,
  enqueueStoredEvent,
  firstVisitorEmail,
  type IncrementalScoring,
  integrationDeps,
  type LifecycleEmailJob,
  lifecycleEmailJobName,
  migrate,
  type PeriodicTask,
  type PhoneSearchJob,
  phoneSearchDeps,
  phoneSearchJobName,
  type Repositories,
  readMigrations,
  recalculationJobName,
  recheckVerifiedDomains,
  runFlowsForEvent,
  runPhoneSearchJob,
  runRecalculation,
  type Store,
  sendLifecycleEmail,
  startEventProcessing,
  startFirstHoursSettling,
  startIncrementalScoring,
  startListAutoRefresh,
  startPeriodicTask,
  startPhoneSearchSweep,
  startWebhookDispatcher,
  type WebhookDispatcher,
} from '@visitor-id/core'
import {
  announceImportApplied,
  createIngestService,
  createMetricsRegistry,
  type ImportKind,
  type IngestService,
} from '@visitor-id/ingest'
import type { FastifyInstance } from 'fastify'
import { pino } from 'pino'
import { type AdminSocket, adminSocketPath, listenAdminSocket } from './admin-socket.js'
import { buildApp, redactedPaths } from './app.js'
import { serveAdminRequest } from './cli.js'
import { openStore } from './open-store.js'

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
  bootstrapFile: string
  /** Stops accepting, flushes every buffer, closes the store; idempotent. */
  stop(): Promise<void>
}

/**
 * Starts one process: store, migrations, coordination, bootstrap, HTTP.
 * @example const server = await startServer(loadConfig(process.env))
 */
export async function startServer(config: Config): Promise<RunningServer> {
  const logger = pino({ level: config.logLevel, redact: redactedPaths })
  const { store, lock } = openStore(config)
  let coordination: Coordination | undefined
  let app: FastifyInstance | undefined
  let ingest: IngestService | undefined
  let scoring: IncrementalScoring | undefined
  let firstHours: PeriodicTask | undefined
  let events: EventProcessing | undefined
  let listRefresh: PeriodicTask | undefined
  let phoneSweep: PeriodicTask | undefined
  let webhooks: WebhookDispatcher | undefined
  let domainRecheck: PeriodicTask | undefined
  let billingSweepTask: PeriodicTask | undefined
  let closeMailer: (() => Promise<void>) | undefined
  let admin: AdminSocket | undefined
  const cleanup = async () => {
    await admin?.close()
    await app?.close()
    await scoring?.stop()
    await firstHours?.stop()
    await events?.stop()
    await billingSweepTask?.stop()
    await ingest?.close()
    await coordination?.close()
    await store.close()
    lock?.release()
  }
  try {
    coordination = createCoordination({
      redisUrl: config.redis.url,
      prefix: config.redis.prefix,
      onError: (error, context) => logger.warn({ context, error: error.message }, 'coordination error'),
    })
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

    const metrics = createMetricsRegistry()
    if (config.role === 'all' || config.role === 'ingest') {
      ingest = await createIngestService({
        store,
        repos,
        dataDir: config.dataDir,
        settings: config.ingest,
        registry: metrics,
        pubsub: coordination.pubsub,
      })
    }
    app = await buildApp({
      config,
      logger,
      store,
      coordination,
      repos,
      migrations,
      metrics,
      ...(ingest ? { ingest: ingest.plugin } : {}),
    })
    await ingest?.start(app.log)
    if (config.role === 'all' || config.role === 'worker') {
      // Jobs and the ICP re-scoring pass; any number of workers may run them (locks keep one run per config).
      const deps = { store, repos, coordination, log: app.log }
      coordination.jobs.process(recalculationJobName, (job) =>
        runRecalculation(deps, job.data as Parameters<typeof runRecalculation>[1]),
      )
      scoring = startIncrementalScoring(deps, config.icpRescoreIntervalMs)
      // The statistics' distinct counts read first_hours: settled for the visitors with new page views.
      firstHours = startFirstHoursSettling(
        { store, locks: coordination.locks, log: app.log },
        config.analyticsSettleIntervalMs,
      )
      listRefresh = startListAutoRefresh(
        { store, repos, locks: coordination.locks },
        { refreshAfterMs: config.listAutoRefreshMs, log: app.log },
      )
      // Phone searches: the provider is asked by jobs; a sweep expires searches past
      // PHONE_SEARCH_TIMEOUT, and its first pass asks again about the searches a stopped process
      // left ongoing (an in-memory queue loses their jobs).
      const phone = phoneSearchDeps({ config, store, repos, coordination })
      coordination.jobs.process<PhoneSearchJob>(
        phoneSearchJobName,
        (job) => runPhoneSearchJob(phone, job.data),
        {
          concurrency: 4,
        },
      )
      phoneSweep = startPhoneSearchSweep(phone, app.log)
      // Partner webhooks: every event is queued for the partner of its organization (an outbox in
      // the store), and the dispatcher delivers it.
      const webhookDeps = { store, repos, coordination, settings: config.webhooks }
      webhooks = startWebhookDispatcher(webhookDeps, { log: app.log })
      // Verified custom domains are checked again once a day; a record that disappeared fails.
      const resolver = createDnsResolver(config.ingest.dnsServers)
      domainRecheck = startPeriodicTask({
        locks: coordination.locks,
        lockName: 'domains:recheck',
        lockTtlMs: 30 * 60_000,
        intervalMs: 60 * 60_000,
        pass: async () => {
          await recheckVerifiedDomains(store, resolver, { minAgeMs: 24 * 60 * 60_000 })
        },
        onError: (error) => app?.log.warn({ err: error }, 'custom domain re-check failed'),
      })
      const flows = integrationDeps({ config, store, repos, coordination })
      // Billing: the local provider's renewals and the end of B2B time after leaving the plan.
      const billing = billingDeps({ config, store, repos, coordination })
      billingSweepTask = startPeriodicTask({
        locks: coordination.locks,
        lockName: 'billing:sweep',
        lockTtlMs: 10 * 60_000,
        intervalMs: 60_000,
        pass: () => billingSweep(billing),
        onError: (error) => app?.log.warn({ err: error }, 'billing sweep failed'),
      })
      // Lifecycle emails: one job per recipient, through SMTP_URL or to DATA_DIR/mail.
      const mailer = createMailer({
        smtpUrl: config.email.smtpUrl,
        dataDir: config.dataDir,
        from: config.email.from,
      })
      const emailDeps = {
        store,
        repos,
        coordination,
        mailer,
        secret: emailSecret(config.email.secret, config.dataDir),
        publicUrl: config.publicUrl ?? `http://localhost:${config.port}`,
      }
      closeMailer = () => mailer.close()
      coordination.jobs.process<LifecycleEmailJob>(lifecycleEmailJobName, async (job) => {
        await sendLifecycleEmail(emailDeps, job.data)
      })
      // Stored events run through their consumers (logged by id and type only: no personal data);
      // each is marked dispatched once they all ran, so a restart runs the unmarked ones again.
      events = startEventProcessing(deps, async (event) => {
        app?.log.info({ eventId: event.eventId, type: event.type }, 'event')
        await enqueueStoredEvent(webhookDeps, event)
        await firstVisitorEmail(emailDeps, event)
        await creditEmail(emailDeps, event)
        await billingEmail(emailDeps, event)
        // Integration flows triggered by the event (list refreshed, visitor identified, ICP matched).
        await runFlowsForEvent(flows, event)
        // Auto phone enrichment of a newly identified visitor (the organization's setting decides).
        await autoEnrichPhone(phone, event)
      })
    }
    const address = await app.listen({ port: config.port, host: config.host }).catch((error: unknown) => {
      throw listenError(error, config) ?? error
    })
    if (bootstrap?.created) app.log.info({ file: bootstrap.file }, 'bootstrap: wrote the first keys')
    if (!config.clickhouse.url) {
      // This process owns the embedded store: admin commands (the CLI) come to it over a socket.
      const log = app.log
      const ingestSide = ingest
      const pubsub = coordination.pubsub
      const context = {
        config,
        store,
        repos,
        coordination,
        // An import applies at once: here (when this process ingests), and in the other processes.
        importFinished: async (kind: ImportKind) => {
          if (ingestSide) return ingestSide.importFinished(kind)
          await announceImportApplied(pubsub, kind).catch((error: unknown) => {
            log.warn({ err: error, kind }, 'import not announced to the other processes')
          })
        },
      }
      admin = await listenAdminSocket(adminSocketPath(config.dataDir), (request, reply) => {
        log.info({ command: request.argv.slice(0, 2).join(' ') }, 'admin command')
        return serveAdminRequest(context, request, reply)
      }).catch((error: unknown) => {
        log.warn({ err: error }, 'no admin socket: the CLI needs this server stopped')
        return undefined
      })
    }

    let stopping: Promise<void> | undefined
    const running = app
    const runningIngest = ingest
    const runningScoring = scoring
    const runningFirstHours = firstHours
    const runningEvents = events
    const runningListRefresh = listRefresh
    const runningPhoneSweep = phoneSweep
    const runningWebhooks = webhooks
    const runningDomainRecheck = domainRecheck
    const runningBillingSweep = billingSweepTask
    const runningMailer = closeMailer
    const runningAdmin = admin
    return {
      app: running,
      url: address.replace('0.0.0.0', '127.0.0.1'),
      store,
      repos,
      ingest: runningIngest,
      bootstrapFile: bootstrap?.file ?? `${config.dataDir}/bootstrap.json`,
      stop() {
        stopping ??= (async () => {
          // Commands under way finish first; the store they use closes below.
          await runningAdmin?.close()
          await running.close()
          await runningScoring?.stop()
          await runningFirstHours?.stop()
          await runningEvents?.stop()
          await runningListRefresh?.stop()
          await runningPhoneSweep?.stop()
          await runningWebhooks?.stop()
          await runningDomainRecheck?.stop()
          await runningBillingSweep?.stop()
          // Every hit still buffered goes to ClickHouse (or the spool) before the store closes.
          await runningIngest?.close()
          await coordination?.close()
          await runningMailer?.()
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
