// The process's own memory on /metrics. With the embedded store the engine runs inside this
// process, so the resident size is the engine's memory and Node's together: the figure to hold
// against the host (README.md, Operations, "Memory").
import type { Config } from '@visitor-id/core/config'
import type { MetricsRegistry } from '@visitor-id/ingest'

/**
 * Gauges read when /metrics is scraped: resident size, V8 heap, memory outside the heap, and the
 * configured bounds of the embedded engine.
 * @example registerProcessMetrics(registry, config.clickhouse)
 */
export function registerProcessMetrics(registry: MetricsRegistry, clickhouse: Config['clickhouse']): void {
  registry.gauge('vid_process_resident_memory_bytes', 'Resident set size of the process.', () =>
    process.memoryUsage.rss(),
  )
  registry.gauge('vid_process_heap_used_bytes', 'V8 heap in use.', () => process.memoryUsage().heapUsed)
  registry.gauge('vid_process_heap_total_bytes', 'V8 heap reserved.', () => process.memoryUsage().heapTotal)
  registry.gauge(
    'vid_process_external_bytes',
    'Memory of JS objects held outside the V8 heap (buffers included).',
    () => process.memoryUsage().external,
  )
  registry.gauge(
    'vid_process_array_buffers_bytes',
    'Memory of ArrayBuffers and Buffers (part of external).',
    () => process.memoryUsage().arrayBuffers,
  )
  if (clickhouse.url) return
  registry.gauge(
    'vid_store_memory_limit_bytes',
    'STORE_MEMORY_LIMIT: what the embedded engine may hold in all.',
    () => clickhouse.memoryLimit,
  )
  registry.gauge(
    'vid_store_query_memory_limit_bytes',
    'STORE_QUERY_MEMORY_LIMIT: what one statement of the embedded engine may hold.',
    () => clickhouse.queryMemoryLimit,
  )
}
