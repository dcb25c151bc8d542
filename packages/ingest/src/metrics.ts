// Prometheus text exposition (format 0.0.4) without a client library: a handful of counters and
// gauges, rendered on demand. The server mounts GET /metrics (behind METRICS_TOKEN, else loopback only).
import { appError } from '@visitor-id/core/errors'
import { safeEqual, sha256Hex } from '@visitor-id/core/ids'
import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import { type ReverseDnsOutcome, reverseDnsOutcomes } from './ip/reverse-dns.js'
import { type DropReason, dropReasons } from './pipeline/index.js'

type Labels = Record<string, string>

interface Series {
  name: string
  help: string
  type: 'counter' | 'gauge'
  values: Map<string, { labels: Labels; value: number }>
  /** Gauges may be read when rendered. */
  read?: () => number
}

const escapeLabel = (value: string) => value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"')
const labelText = (labels: Labels) => {
  const parts = Object.entries(labels).map(([key, value]) => `${key}="${escapeLabel(value)}"`)
  return parts.length > 0 ? `{${parts.join(',')}}` : ''
}

/** A set of metrics that renders as Prometheus text. */
export interface MetricsRegistry {
  counter(name: string, help: string): (amount?: number, labels?: Labels) => void
  gauge(name: string, help: string, read: () => number): void
  render(): string
}

/** @example const metrics = createMetricsRegistry(); const hits = metrics.counter('hits_total', 'Hits'); hits(1) */
export function createMetricsRegistry(): MetricsRegistry {
  const series: Series[] = []
  return {
    counter(name, help) {
      const entry: Series = { name, help, type: 'counter', values: new Map() }
      series.push(entry)
      return (amount = 1, labels = {}) => {
        const id = labelText(labels)
        const current = entry.values.get(id)
        if (current) current.value += amount
        else entry.values.set(id, { labels, value: amount })
      }
    },
    gauge(name, help, read) {
      series.push({ name, help, type: 'gauge', values: new Map(), read })
    },
    render() {
      const lines: string[] = []
      for (const entry of series) {
        lines.push(`# HELP ${entry.name} ${entry.help}`, `# TYPE ${entry.name} ${entry.type}`)
        if (entry.read) lines.push(`${entry.name} ${entry.read()}`)
        else if (entry.values.size === 0) lines.push(`${entry.name} 0`)
        for (const { labels, value } of entry.values.values())
          lines.push(`${entry.name}${labelText(labels)} ${value}`)
      }
      return `${lines.join('\n')}\n`
    },
  }
}

/** The ingest counters. */
export interface IngestMetrics {
  registry: MetricsRegistry
  accepted(count: number): void
  dropped(reason: DropReason, count?: number): void
  spooled(count: number): void
  replayed(count: number): void
  batchWritten(): void
  writeError(): void
  overloaded(): void
  /** One reverse DNS query and what it found. */
  reverseDnsLookup(outcome: ReverseDnsOutcome): void
  /** What a batch's identify hits did: persons, first identifications, dropped (bad email, lone hash). */
  identified(result: { persons: number; firstIdentifications: number; dropped: number }): void
}

/** Registers the ingest metrics; the byte counts are read when /metrics is scraped. */
export function createIngestMetrics(
  registry: MetricsRegistry,
  spoolBytes: () => number,
  identifyQueueBytes: () => number = () => 0,
): IngestMetrics {
  const accepted = registry.counter(
    'vid_ingest_hits_accepted_total',
    'Hits accepted and stored (or spooled).',
  )
  const dropped = registry.counter('vid_ingest_hits_dropped_total', 'Hits dropped, by reason.')
  const spooled = registry.counter('vid_ingest_hits_spooled_total', 'Hits written to the local spool.')
  const replayed = registry.counter(
    'vid_ingest_hits_replayed_total',
    'Spooled hits replayed into ClickHouse.',
  )
  const batches = registry.counter('vid_ingest_batch_writes_total', 'Batches written to ClickHouse.')
  const errors = registry.counter(
    'vid_ingest_write_errors_total',
    'Failed ClickHouse writes (batches and replays).',
  )
  const overloaded = registry.counter('vid_ingest_overloaded_total', 'Requests answered 503 (spool full).')
  registry.gauge('vid_ingest_spool_bytes', 'Bytes in the spool not yet replayed.', spoolBytes)
  registry.gauge(
    'vid_ingest_identify_queue_bytes',
    'Bytes of identify hits stored and not yet identified.',
    identifyQueueBytes,
  )
  const reverseDns = registry.counter(
    'vid_ingest_reverse_dns_lookups_total',
    'Reverse DNS queries, by outcome (domain, skipped, not_found, failed).',
  )
  const identifications = registry.counter(
    'vid_ingest_identifications_total',
    'Identify hits, by outcome: person (first time as a person), first (first identification), dropped.',
  )
  // Every reason appears from the start, so dashboards see zeros rather than gaps.
  for (const reason of dropReasons) dropped(0, { reason })
  for (const outcome of reverseDnsOutcomes) reverseDns(0, { outcome })
  for (const outcome of ['person', 'first', 'dropped']) identifications(0, { outcome })
  return {
    registry,
    accepted: (count) => accepted(count),
    dropped: (reason, count = 1) => dropped(count, { reason }),
    spooled: (count) => spooled(count),
    replayed: (count) => replayed(count),
    batchWritten: () => batches(1),
    writeError: () => errors(1),
    overloaded: () => overloaded(1),
    reverseDnsLookup: (outcome) => reverseDns(1, { outcome }),
    identified: (result) => {
      identifications(result.persons, { outcome: 'person' })
      identifications(result.firstIdentifications, { outcome: 'first' })
      identifications(result.dropped, { outcome: 'dropped' })
    },
  }
}

export interface MetricsPluginOptions {
  registry: MetricsRegistry
  /**
   * METRICS_TOKEN. Set: every scrape must send `Authorization: Bearer <token>` (else 401). Unset:
   * only loopback clients are answered (else 403).
   */
  token?: string | undefined
}

/**
 * True for a loopback peer. Judged by the socket's own address: `request.ip` may come from
 * X-Forwarded-For when trustProxy is on, and a client can write that header.
 */
export function isLoopbackSocket(request: FastifyRequest): boolean {
  const address = request.raw.socket?.remoteAddress ?? ''
  const direct = address === '::1' || /^(::ffff:)?127\.\d+\.\d+\.\d+$/.test(address)
  // A proxy on this host connects from loopback on behalf of anyone: a forwarded request is not local.
  const forwarded =
    request.headers['x-forwarded-for'] !== undefined || request.headers.forwarded !== undefined
  return direct && !forwarded
}

const bearer = (request: FastifyRequest) =>
  /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(request.headers.authorization ?? '')?.[1]

/**
 * GET /metrics in Prometheus text format, behind METRICS_TOKEN or, without one, for loopback only.
 * @example await app.register(metricsPlugin, { registry, token: config.metricsToken })
 */
export const metricsPlugin: FastifyPluginAsync<MetricsPluginOptions> = async (app, options) => {
  // Both sides hashed first: equal lengths, so the comparison's time tells nothing about the token.
  const tokenDigest = options.token === undefined ? undefined : sha256Hex(options.token)
  app.get('/metrics', async (request, reply) => {
    if (tokenDigest !== undefined) {
      const given = bearer(request)
      if (given === undefined || !safeEqual(sha256Hex(given), tokenDigest)) {
        reply.header('www-authenticate', 'Bearer realm="metrics"')
        throw appError('unauthorized', 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>')
      }
    } else if (!isLoopbackSocket(request)) {
      throw appError(
        'forbidden',
        'GET /metrics answers loopback clients only; set METRICS_TOKEN to scrape it from elsewhere',
      )
    }
    return reply
      .header('content-type', 'text/plain; version=0.0.4; charset=utf-8')
      .header('cache-control', 'no-store')
      .send(options.registry.render())
  })
}
