export {
  type BatchSink,
  type BatchWriter,
  type BatchWriterOptions,
  createBatchWriter,
} from './batch-writer.js'
export { type CollectFastPath, createCollectFastPath, forwardedClient } from './collect-fast-path.js'
export {
  type Hit,
  hitBatchSchema,
  hitSchema,
  isTrackingKeyShape,
  parseCollectBody,
} from './collect-schema.js'
export { createDroppedHits, type DroppedHits, type DroppedHitsOptions } from './dropped-hits.js'
export {
  createDurableSink,
  type DurableSink,
  type DurableSinkOptions,
  type LogLike,
} from './durable-sink.js'
export { createIdentityWriter, type IdentityWriter, type IdentityWriterOptions } from './identities.js'
export { announceImportApplied, importsAppliedChannel, onImportApplied } from './imports/applied.js'
export { normalizeDomain } from './imports/domain.js'
export {
  type ImportKind,
  type ImportOptions,
  type ImportProgress,
  type ImportReport,
  importCompanies,
  importCompanyIps,
  importContacts,
  type RejectedRow,
} from './imports/index.js'
export { createProgressBar, type ProgressBar, progressLine } from './imports/progress.js'
export { type IpKey, type IpRange, normalizeIp, parseIp, parseRange } from './ip/address.js'
export {
  type AsnClassificationFile,
  type ConnectionType,
  classifyByName,
  connectionTypes,
  createAsnClassifier,
} from './ip/connection-type.js'
export {
  createIpIntelligence,
  type IpInfo,
  type IpIntelligence,
  type IpIntelligenceOptions,
} from './ip/ip-intelligence.js'
export {
  createReverseDns,
  organizationDomain,
  type ReverseDns,
  type ReverseDnsOptions,
  type ReverseDnsOutcome,
} from './ip/reverse-dns.js'
export {
  createIngestMetrics,
  createMetricsRegistry,
  type IngestMetrics,
  isLoopbackSocket,
  type MetricsPluginOptions,
  type MetricsRegistry,
  metricsPlugin,
} from './metrics.js'
export {
  metricsEndpointDoc,
  operationsTag,
  trackingEndpointDocs,
  trackingTag,
} from './openapi.js'
export {
  decodePageViewRow,
  emptyEnrichment,
  encodePageViewRow,
  fromColumnValues,
  type HitContext,
  type PageViewRow,
  pageViewColumns,
  toColumnValues,
  toPageViewRow,
} from './page-view-row.js'
export {
  createHitPipeline,
  type DropReason,
  dropReasons,
  type HitPipeline,
  type HitPipelineOptions,
  type HitRequest,
  type PipelineResult,
} from './pipeline/index.js'
export { type IngestPluginOptions, ingestPlugin } from './plugin.js'
export {
  createIngestService,
  type IngestBackupHold,
  type IngestService,
  type IngestServiceOptions,
} from './service.js'
export { openSpool, type Spool, type SpoolEntry, SpoolFullError, type SpoolOptions } from './spool.js'
export { createSpoolFirstSink, type SpoolFirstSinkOptions } from './spool-first-sink.js'
export {
  createTrackingKeyCache,
  type TrackingKeyCache,
  type TrackingKeyCacheOptions,
} from './tracking-keys.js'
