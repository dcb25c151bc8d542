// Everything one ingest process needs, built in one place for the composition root (server):
// spool, IP data, tracking-key cache, pipeline, durable sink, batch writer and metrics.
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { appendFile } from 'node:fs/promises'
import path from 'node:path'
import {
  type Config,
  createIdentifiedVisitors,
  type IdentifyHit,
  identifyVisitors,
  type PubSub,
  type Repositories,
  type Store,
} from '@visitor-id/core'
import { type BatchWriter, createBatchWriter } from './batch-writer.js'
import { createDurableSink, type DurableSink, type LogLike } from './durable-sink.js'
import { createIdentifyQueue, type IdentifyQueue } from './identify-queue.js'
import { createIdentityWriter } from './identities.js'
import { announceImportApplied, onImportApplied } from './imports/applied.js'
import type { ImportKind } from './imports/index.js'
import { createIpIntelligence, type IpIntelligence } from './ip/ip-intelligence.js'
import { createIngestMetrics, createMetricsRegistry, type MetricsRegistry } from './metrics.js'
import type { PageViewRow } from './page-view-row.js'
import { createHitPipeline } from './pipeline/index.js'
import type { IngestPluginOptions } from './plugin.js'
import { openSpool, type Spool } from './spool.js'
import { createTrackingKeyCache, type TrackingKeyCache } from './tracking-keys.js'

export interface IngestServiceOptions {
  store: Store
  repos: Repositories
  /** The spool lives in `<dataDir>/spool`, the identification queue in `<dataDir>/identify-queue`. */
  dataDir: string
  settings: Config['ingest']
  registry?: MetricsRegistry
  /** Where finished imports are announced and heard (coordination.pubsub); unset: this process only. */
  pubsub?: PubSub
}

export interface IngestService {
  /** Options for `ingestPlugin`. */
  plugin: IngestPluginOptions
  registry: MetricsRegistry
  trackingKeys: TrackingKeyCache
  ipIntelligence: IpIntelligence
  writer: BatchWriter<PageViewRow>
  durable: DurableSink
  spool: Spool<PageViewRow>
  identifyQueue: IdentifyQueue
  /**
   * Reloads what this process holds from an import of `kind` (company ranges and domains, or the
   * identified visitors awaiting a contact), then tells the other processes to do the same.
   */
  importFinished(kind: ImportKind): Promise<void>
  /**
   * Starts the spool replay, the identification queue, listening for other processes' imports and
   * the periodic company refresh (ranges, domains); logs what data was loaded.
   */
  start(log: LogLike): Promise<void>
  /** Flushes every buffered hit (to ClickHouse or the spool) and stops background work. */
  close(): Promise<void>
}

/** Appends a batch that kept failing to `dead-letter.jsonl` in `dir`, for an operator to look at. */
const setAside = (dir: string, line: object) =>
  appendFile(path.join(dir, 'dead-letter.jsonl'), `${JSON.stringify(line)}\n`)

const messageOf = (error: unknown) => String((error as Error)?.message ?? error)

/**
 * Builds the ingest side of a process.
 * @example const ingest = await createIngestService({ store, repos, dataDir, settings: config.ingest })
 */
export async function createIngestService(options: IngestServiceOptions): Promise<IngestService> {
  const { settings, store, repos } = options
  const registry = options.registry ?? createMetricsRegistry()
  const spoolDir = path.join(options.dataDir, 'spool')
  let log: LogLike | undefined
  const spool = await openSpool<PageViewRow>({
    dir: spoolDir,
    maxBytes: settings.spoolMaxBytes,
    onCorrupt: (offset) => log?.error({ offset }, 'ingest: skipped a corrupt spool line'),
  })
  const identifyDir = path.join(options.dataDir, 'identify-queue')
  const identifySpool = await openSpool<IdentifyHit>({
    dir: identifyDir,
    maxBytes: settings.spoolMaxBytes,
    sync: false,
    onCorrupt: (offset) => log?.error({ offset }, 'ingest: skipped a corrupt identification queue line'),
  })
  const metrics = createIngestMetrics(
    registry,
    () => spool.pendingBytes,
    () => identifySpool.pendingBytes,
  )
  const ipIntelligence = await createIpIntelligence({
    store,
    geoMmdbPath: settings.geoMmdbPath,
    asnDataPath: settings.asnDataPath,
    classification: settings.asnClassificationPath
      ? [JSON.parse(readFileSync(settings.asnClassificationPath, 'utf8'))]
      : [],
    anonymousIpLists: settings.anonymousIpLists,
    hostingIpLists: settings.hostingIpLists,
    reverseDns: settings.reverseDns && {
      servers: settings.dnsServers,
      onLookup: metrics.reverseDnsLookup,
    },
  })
  const trackingKeys = createTrackingKeyCache({ repos })
  const pipeline = createHitPipeline({ trackingKeys, ipIntelligence })
  const identified = createIdentifiedVisitors()
  const identifyQueue = createIdentifyQueue({
    spool: identifySpool,
    batchMs: settings.identifyBatchMs,
    identify: async (rows) => {
      // Contacts, credits and the visitor.identified event; the last hit of a visitor wins.
      metrics.identified(await identifyVisitors({ store, repos, identified }, rows))
    },
    onDeadLetter: async (rows, error) => {
      await setAside(identifyDir, { error: messageOf(error), rows })
    },
  })
  const identities = createIdentityWriter({
    store,
    enqueueIdentifies: identifyQueue.enqueue,
    onError: (error) => log?.warn({ err: error }, 'ingest: derived companies not written yet'),
  })
  const durable = createDurableSink({
    store,
    spool,
    metrics,
    afterWrite: identities.afterWrite,
    onDeadLetter: async (entry, error) => {
      await setAside(spoolDir, { token: entry.token, error: messageOf(error), rows: entry.rows })
    },
  })
  const writer = createBatchWriter<PageViewRow>({
    sink: durable.sink,
    maxRows: settings.batchRows,
    maxMs: settings.batchMs,
  })
  let refresh: NodeJS.Timeout | undefined
  let stopListening: (() => Promise<void>) | undefined
  // Names this process in its announcements, so it does not reload twice on its own import.
  const origin = randomUUID()
  /** Reloads the in-memory data an import of `kind` feeds. */
  const applyImport = async (kind: ImportKind) => {
    // Contacts are read from the store at identification; only the visitors remembered as having
    // none must look again. Company ranges and company domains (reverse DNS) are held in memory.
    if (kind === 'contacts') identified.forgetUnmatched()
    else await ipIntelligence.reloadCompanies()
  }
  return {
    plugin: { pipeline, writer, metrics, trackingKeys, isOverloaded: () => durable.overloaded },
    registry,
    trackingKeys,
    ipIntelligence,
    writer,
    durable,
    spool,
    identifyQueue,
    async importFinished(kind) {
      // The import is stored: a failed reload is logged, and the periodic one applies it later.
      await applyImport(kind).catch((error: unknown) => {
        log?.warn({ err: error, kind }, 'ingest: import stored but not applied yet')
      })
      if (!options.pubsub) return
      // Not announced: the others apply it at their next periodic reload.
      await announceImportApplied(options.pubsub, kind, origin).catch((error: unknown) => {
        log?.warn({ err: error, kind }, 'ingest: import not announced to the other processes')
      })
    },
    async start(logger) {
      log = logger
      durable.setLog(logger)
      durable.start()
      identifyQueue.setLog(logger)
      identifyQueue.start()
      logger.info({ ...ipIntelligence.sources, pipeline: pipeline.steps.join(' > ') }, 'ingest: ready')
      if (options.pubsub) {
        stopListening = await onImportApplied(options.pubsub, origin, (kind) => {
          applyImport(kind).catch((error: unknown) => {
            logger.warn({ err: error, kind }, 'ingest: an import of another process not applied yet')
          })
        })
      }
      // The safety net: an announcement lost (Redis down a moment) is applied at the next reload.
      refresh = setInterval(() => {
        ipIntelligence.reloadCompanies().catch((error: unknown) => {
          logger.warn({ err: error }, 'ingest: company ranges and domains not reloaded')
        })
      }, settings.companyIpsRefreshMs)
      refresh.unref()
    },
    async close() {
      if (refresh) clearInterval(refresh)
      await stopListening?.()
      ipIntelligence.close()
      await writer.close()
      await durable.stop()
      await identifyQueue.stop()
      await identities.close()
      await spool.close()
      await identifySpool.close()
    },
  }
}
