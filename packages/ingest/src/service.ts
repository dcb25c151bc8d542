// Everything one ingest process needs, built in one place for the composition root (server):
// spool, IP data, tracking-key cache, pipeline, durable sink, batch writer and metrics.
import { existsSync, readFileSync } from 'node:fs'
import { appendFile, copyFile } from 'node:fs/promises'
import path from 'node:path'
import type { Config } from '@visitor-id/core/config'
import type { PubSub } from '@visitor-id/core/coordination'
import {
  createIdentifiedVisitors,
  type IdentifiedVisitors,
  type IdentifyHit,
  identifyVisitors,
} from '@visitor-id/core/identification'
import type { ErasedVisitors } from '@visitor-id/core/privacy'
import type { Repositories } from '@visitor-id/core/repositories'
import type { Store } from '@visitor-id/core/store'
import { type BatchWriter, createBatchWriter } from './batch-writer.js'
import { createDroppedHits, type DroppedHits } from './dropped-hits.js'
import { createDurableSink, type DurableSink, type LogLike } from './durable-sink.js'
import { createIdentifyQueue, type IdentifyQueue } from './identify-queue.js'
import { createIdentityWriter } from './identities.js'
import { createImportReloads } from './import-reloads.js'
import type { ImportKind } from './imports/index.js'
import { createIpIntelligence, type IpIntelligence } from './ip/ip-intelligence.js'
import {
  createIngestMetrics,
  createMetricsRegistry,
  type IngestMetrics,
  type MetricsRegistry,
} from './metrics.js'
import { decodePageViewRow, encodePageViewRow, type PageViewRow } from './page-view-row.js'
import { createHitPipeline } from './pipeline/index.js'
import type { IngestPluginOptions } from './plugin.js'
import { openSpool, type Spool, type SpoolEntry } from './spool.js'
import { createSpoolFirstSink } from './spool-first-sink.js'
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
  /** Erased visitor ids: their browsers' hits are stored as a new visitor (core privacy/). */
  erasedVisitors?: Pick<ErasedVisitors, 'visitorIdFor'>
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
  /** The dropped hits of known organizations, counted by day and reason and written every 2 s. */
  droppedHits: DroppedHits
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
  /**
   * For a backup: writes the buffered hits, then holds the spool's replay until released. While
   * held, every acknowledged hit is either in the store or in what `copyQueues` copies, never both.
   */
  holdForBackup(): Promise<IngestBackupHold>
  /** Flushes every buffered hit (to ClickHouse or the spool) and stops background work. */
  close(): Promise<void>
}

/** An ingest process held for a backup (`holdForBackup`). */
export interface IngestBackupHold {
  /**
   * Copies the spool's and the identification queue's waiting batches, and their dead letters,
   * into `dataDir` (a data directory's copy: `spool/`, `identify-queue/`). Returns the files written,
   * relative to `dataDir`.
   */
  copyQueues(dataDir: string): Promise<string[]>
  /** Resumes the replay. */
  release(): void
}

/** Appends a batch that kept failing to `dead-letter.jsonl` in `dir`, for an operator to look at. */
const setAside = (dir: string, line: object) =>
  appendFile(path.join(dir, 'dead-letter.jsonl'), `${JSON.stringify(line)}\n`)

const messageOf = (error: unknown) => String((error as Error)?.message ?? error)

/** The most rows one spool write takes (a larger group waits for the next write). */
const groupCommitRows = 5000

/** The process's logger once the service has started: what is built before logs through it. */
interface LateLog {
  current?: LogLike
}

/** The page views' spool (`<dataDir>/spool`), the identification queue's (`<dataDir>/identify-queue`). */
async function openSpools(dataDir: string, maxBytes: number, logs: LateLog) {
  const spoolDir = path.join(dataDir, 'spool')
  const spool = await openSpool<PageViewRow>({
    dir: spoolDir,
    maxBytes,
    // Rows spooled as their insert lines: the inserter sends them as they are.
    encodeRow: encodePageViewRow,
    decodeRow: decodePageViewRow,
    onCorrupt: (offset) => logs.current?.error({ offset }, 'ingest: skipped a corrupt spool line'),
  })
  const identifyDir = path.join(dataDir, 'identify-queue')
  const identifySpool = await openSpool<IdentifyHit>({
    dir: identifyDir,
    maxBytes,
    sync: false,
    onCorrupt: (offset) =>
      logs.current?.error({ offset }, 'ingest: skipped a corrupt identification queue line'),
  })
  return { spool, spoolDir, identifySpool, identifyDir }
}

/** Copies `spool`'s waiting batches and the dead letters of `from` into `to`; the files written. */
async function copyQueue(
  spool: Pick<Spool<unknown>, 'copyTo'>,
  from: string,
  to: string,
  name: string,
): Promise<string[]> {
  await spool.copyTo(to)
  const files = [`${name}/spool.jsonl`]
  if (existsSync(path.join(from, 'dead-letter.jsonl'))) {
    await copyFile(path.join(from, 'dead-letter.jsonl'), path.join(to, 'dead-letter.jsonl'))
    files.push(`${name}/dead-letter.jsonl`)
  }
  return files
}

/** The IP data the settings name, with reverse DNS (when on) counted in `metrics`. */
function loadIpIntelligence(store: Store, settings: Config['ingest'], metrics: IngestMetrics) {
  return createIpIntelligence({
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
}

interface WritePathOptions {
  store: Store
  repos: Repositories
  settings: Config['ingest']
  metrics: IngestMetrics
  identified: IdentifiedVisitors
  spools: Awaited<ReturnType<typeof openSpools>>
  logs: LateLog
}

/**
 * Where accepted hits go: the batch writer, the durable sink behind it (ClickHouse, or the spool
 * while ClickHouse fails), then the identities (companies, visitors) and the identification queue.
 */
function createWritePath({ store, repos, settings, metrics, identified, spools, logs }: WritePathOptions) {
  const identifyQueue = createIdentifyQueue({
    spool: spools.identifySpool,
    batchMs: settings.identifyBatchMs,
    identify: async (rows) => {
      // Contacts, credits and the visitor.identified event; the last hit of a visitor wins.
      metrics.identified(await identifyVisitors({ store, repos, identified }, rows))
    },
    onDeadLetter: async (rows, error) => {
      await setAside(spools.identifyDir, { error: messageOf(error), rows })
    },
  })
  const identities = createIdentityWriter({
    store,
    enqueueIdentifies: identifyQueue.enqueue,
    onError: (error) => logs.current?.warn({ err: error }, 'ingest: derived companies not written yet'),
  })
  const sinkOptions = {
    store,
    spool: spools.spool,
    metrics,
    afterWrite: identities.afterWrite,
    onDeadLetter: async (entry: SpoolEntry<PageViewRow>, error: unknown) => {
      await setAside(spools.spoolDir, { token: entry.token, error: messageOf(error), rows: entry.rows })
    },
  }
  const spoolFirst = settings.ack === 'spool'
  const durable = spoolFirst
    ? createSpoolFirstSink({ ...sinkOptions, insertRows: settings.batchRows, insertMs: settings.batchMs })
    : createDurableSink(sinkOptions)
  // Acknowledged once in the spool: the writer's batches are group commits of the spool, a write
  // and fdatasync for whatever arrived during the one before.
  const writer = createBatchWriter<PageViewRow>({
    sink: durable.sink,
    maxRows: spoolFirst ? groupCommitRows : settings.batchRows,
    maxMs: spoolFirst ? settings.syncMs : settings.batchMs,
  })
  return { identifyQueue, identities, durable, writer }
}

/** Writes the writer's buffer, holds the replay; the queues' copy and the release (`holdForBackup`). */
async function holdForBackup(
  writer: BatchWriter<PageViewRow>,
  durable: DurableSink,
  spools: Awaited<ReturnType<typeof openSpools>>,
): Promise<IngestBackupHold> {
  await writer.flush()
  const release = await durable.holdReplay()
  return {
    release,
    copyQueues: async (dataDir) => [
      ...(await copyQueue(spools.spool, spools.spoolDir, path.join(dataDir, 'spool'), 'spool')),
      ...(await copyQueue(
        spools.identifySpool,
        spools.identifyDir,
        path.join(dataDir, 'identify-queue'),
        'identify-queue',
      )),
    ],
  }
}

/**
 * Builds the ingest side of a process.
 * @example const ingest = await createIngestService({ store, repos, dataDir, settings: config.ingest })
 */
export async function createIngestService(options: IngestServiceOptions): Promise<IngestService> {
  const { settings, store, repos } = options
  const registry = options.registry ?? createMetricsRegistry()
  const logs: LateLog = {}
  const spools = await openSpools(options.dataDir, settings.spoolMaxBytes, logs)
  const { spool, identifySpool } = spools
  const metrics = createIngestMetrics(
    registry,
    () => spool.pendingBytes,
    () => identifySpool.pendingBytes,
  )
  const ipIntelligence = await loadIpIntelligence(store, settings, metrics)
  const trackingKeys = createTrackingKeyCache({ repos })
  const pipeline = createHitPipeline({
    trackingKeys,
    ipIntelligence,
    erasedVisitors: options.erasedVisitors,
    privacySettings: repos.privacySettings,
  })
  const identified = createIdentifiedVisitors()
  const droppedHits = createDroppedHits({
    store,
    onError: (error) => logs.current?.warn({ err: error }, 'ingest: filtered hit counts not written yet'),
  })
  const { identifyQueue, identities, durable, writer } = createWritePath({
    store,
    repos,
    settings,
    metrics,
    identified,
    spools,
    logs,
  })
  const imports = createImportReloads({
    ipIntelligence,
    identified,
    pubsub: options.pubsub,
    refreshMs: settings.companyIpsRefreshMs,
    logs,
  })
  return {
    plugin: {
      pipeline,
      writer,
      metrics,
      trackingKeys,
      droppedHits,
      isOverloaded: () => durable.overloaded,
    },
    registry,
    trackingKeys,
    ipIntelligence,
    writer,
    durable,
    spool,
    identifyQueue,
    droppedHits,
    importFinished: imports.importFinished,
    async start(logger) {
      logs.current = logger
      durable.setLog(logger)
      durable.start()
      identifyQueue.setLog(logger)
      identifyQueue.start()
      droppedHits.start()
      logger.info({ ...ipIntelligence.sources, pipeline: pipeline.steps.join(' > ') }, 'ingest: ready')
      await imports.start(logger)
    },
    holdForBackup: () => holdForBackup(writer, durable, spools),
    async close() {
      await imports.stop()
      ipIntelligence.close()
      await writer.close()
      await droppedHits.close()
      await durable.stop()
      await identifyQueue.stop()
      await identities.close()
      await spool.close()
      await identifySpool.close()
    },
  }
}
