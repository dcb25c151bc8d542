// RESULTS.md of a soak run: the settings, the targets and the figures, and the samples by minute.

const n = (value) => Math.round(value).toLocaleString('en-US')
const ms = (value) => `${value.toFixed(1)} ms`

/** The Markdown of one run (`figures` as soak.bench.mjs gathers them). */
export function resultsMarkdown(f, targets, samples) {
  const lines = [
    '# Soak: memory stays bounded',
    '',
    `Run of ${f.date}: ${f.minutes} min (${f.warmupMinutes} of warm-up), ${f.machine}, Node ${f.node}, ` +
      `load average ${f.load.before.join(' / ')} before and ${f.load.after.join(' / ')} after (1 / 5 / 15 min). ` +
      'Written by `bench/soak/soak.bench.mjs`; the method is in README.md beside this file, the plot in `soak.png`.',
    '',
    `Server: \`visitor-id serve --role all\`, embedded store, \`STORE_MEMORY_LIMIT=${f.settings.memoryLimitMiB}MiB\` ` +
      `(statements ${f.settings.queryMemoryLimitMiB} MiB each), \`node --max-old-space-size=${f.settings.heapMb}\`; ` +
      `a store of ${n(f.store.pageViews)} page views (${n(f.store.stored)} after the run).`,
    '',
    `Start: the server answered probe hits within 500 ms for 15 s in a row ${n(f.startSeconds)} s after it ` +
      'started (its first passes: the ICP re-scoring of the visitors changed in the last day, the statistics).',
    '',
    `Load: capacity measured ${n(f.capacity)} hits/s (the whole mix: 5 % identify hits and 10 API reads/s beside); the soak sends ${n(f.rates.ingestRate)} hits/s, ` +
      `${n(f.rates.identifyRate)} identify hits/s (each identification a webhook delivery to a local receiver) and ` +
      `${f.rates.readRate} API reads/s (profiles, statistics, lists), while the worker re-scores the ICP config ` +
      `(${n(f.icp.runs)} scoring runs wrote ${n(f.icp.rows)} scores) and settles the statistics.`,
    '',
    '| target | result | |',
    '|---|---|---|',
    ...targets.map(([name, ok], i) => `| ${name} | ${targetFigure(f, i)} | **${ok ? 'met' : 'missed'}** |`),
    '',
    '| requests | done | failed | over 1 s (in the warm-up) | p50 | p99 | slowest |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...f.requests.map(
      (r) =>
        `| ${r.kind} | ${n(r.done)} | ${n(r.failed)} | ${r.slow} (${r.slowInWarmup}) | ${ms(r.p50)} | ${ms(r.p99)} | ${ms(r.maxMs)} |`,
    ),
    '',
    `Webhook deliveries received: ${n(f.webhooks.delivered)}. Hits not sent because 4,096 requests were waiting: ` +
      `${n(f.notSent)}. Statements refused for memory and run again in halves (server log): ${f.memoryRefusals}; ` +
      `errors logged by the server: ${f.serverErrors}.`,
    '',
    '| minute | RSS MiB | hits/s | API reads/s | webhooks/s |',
    '|---:|---:|---:|---:|---:|',
    ...samples
      .filter((_, i) => i % 6 === 0 || i === samples.length - 1)
      .map(
        (s) =>
          `| ${s.minute.toFixed(1)} | ${s.rssMiB.toFixed(0)} | ${n(s.ingest)} | ${s.reads.toFixed(1)} | ${s.webhooks.toFixed(1)} |`,
      ),
    '',
  ]
  return `${lines.join('\n')}\n`
}

function targetFigure(f, index) {
  if (index === 0)
    return (
      `trend ${f.rss.startRss.toFixed(0)} MiB after warm-up -> ${f.rss.endRss.toFixed(0)} MiB at the end ` +
      `(${(f.rss.growth * 100).toFixed(2)} %); medians of the first and last five minutes ` +
      `${f.rss.medians.first.toFixed(0)} -> ${f.rss.medians.last.toFixed(0)} MiB`
    )
  if (index === 1)
    return `peak ${f.rss.peak.toFixed(0)} MiB sampled, ${f.rss.highWater.toFixed(0)} MiB high-water mark (VmHWM; cap ${f.settings.capMiB} MiB)`
  if (index === 2)
    return `${n(f.loss.acked)} acknowledged, ${f.loss.lost} lost, ${f.loss.duplicates} duplicated`
  return `slowest ${ms(Math.max(...f.requests.map((r) => r.maxMs)))}, ${f.requests.reduce((sum, r) => sum + r.slow, 0)} over 1 s`
}
