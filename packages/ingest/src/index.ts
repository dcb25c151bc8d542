export {
  type BatchSink,
  type BatchWriter,
  type BatchWriterOptions,
  createBatchWriter,
} from './batch-writer.js'
export { type Hit, hitBatchSchema, hitSchema, parseCollectBody } from './collect-schema.js'
export { type HitContext, type PageViewRow, toPageViewRow } from './page-view-row.js'
export { type IngestPluginOptions, ingestPlugin } from './plugin.js'
export {
  createTrackingKeyCache,
  type TrackingKeyCache,
  type TrackingKeyCacheOptions,
} from './tracking-keys.js'
