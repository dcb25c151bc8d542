#!/usr/bin/env node
// What one hit costs the JavaScript thread without HTTP: JSON parse, zod validation, the
// enrichment pipeline (real IP data, caches warm after the first round) and the row's encoding
// for the insert, each timed over the benchmark's own realistic hits. It explains the ingest
// benchmark's figures (bench/README.md); it is not a throughput benchmark. Then what a dropped
// hit adds to that: its count by organization, day and reason, and the periodic write of the counts.
//
//   npm run build && node bench/ingest/hit-path.mjs [--hits 100000] [--rounds 3]
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { createStore, migrate } from '@visitor-id/core/store'
import {
  createDroppedHits,
  createHitPipeline,
  createIpIntelligence,
  parseCollectBody,
  toColumnValues,
} from '@visitor-id/ingest'
import { createVisitorPool, hitRequest } from './traffic.mjs'

const { values } = parseArgs({
  options: { hits: { type: 'string', default: '100000' }, rounds: { type: 'string', default: '3' } },
})
const hits = Number(values.hits)
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'vid-bench-hit-path-'))
const store = createStore({ database: 'default', dataDir })
await migrate(store)
const ipIntelligence = await createIpIntelligence({ store, classification: [] })
const config = {
  id: 'bench',
  organization_id: '11111111-1111-4111-8111-111111111111',
  tracking_key: 'pk_0123456789abcdef01234567',
  allowed_referrers: [],
  verified_domains: ['shop.example'],
  ip_tracking: true,
  respect_privacy_signals: false,
  form_capture: false,
}
const pipeline = createHitPipeline({ trackingKeys: { resolve: async () => config }, ipIntelligence })
const pool = createVisitorPool(20_000)
const requests = Array.from({ length: hits }, (_, n) => hitRequest(pool, config.tracking_key, n))

for (let round = 1; round <= Number(values.rounds); round++) {
  const spent = { parse: 0, validate: 0, pipeline: 0, encode: 0 }
  for (const { headers, body } of requests) {
    const t0 = performance.now()
    const parsed = parseCollectBody(JSON.parse(body))
    const t1 = performance.now()
    if (!parsed.success) throw new Error('a bench hit failed validation')
    const t2 = performance.now()
    const result = await pipeline.process(parsed.data, {
      ip: headers['x-forwarded-for'],
      userAgent: headers['user-agent'],
      origin: headers.origin,
      referer: undefined,
      privacySignal: false,
      receivedAt: Date.now(),
    })
    const t3 = performance.now()
    if (!('row' in result)) throw new Error(`a bench hit was dropped: ${result.drop}`)
    JSON.stringify(toColumnValues(result.row))
    const t4 = performance.now()
    spent.validate += t1 - t0
    spent.pipeline += t3 - t2
    spent.encode += t4 - t3
  }
  // JSON.parse alone, apart: timing it inside the loop above would split a 1 µs call in two.
  const p0 = performance.now()
  for (const { body } of requests) JSON.parse(body)
  spent.parse = performance.now() - p0
  spent.validate -= spent.parse
  const perHit = (ms) => `${((ms * 1000) / hits).toFixed(2)} µs`
  console.log(
    `round ${round}: parse ${perHit(spent.parse)}, validate ${perHit(spent.validate)}, ` +
      `pipeline ${perHit(spent.pipeline)}, encode ${perHit(spent.encode)}, ` +
      `total ${perHit(spent.parse + spent.validate + spent.pipeline + spent.encode)} per hit`,
  )
}

// A dropped hit's one cost of its own: adding 1 to its organization's count (100 organizations,
// every reason: 500 counts), then one write of all the counts, as the periodic flush does every 2 s.
const dropped = createDroppedHits({ store, onError: (error) => console.error(error) })
const organizations = Array.from({ length: 100 }, () => randomUUID())
const reasons = ['bot', 'automation', 'origin', 'privacy', 'invalid']
for (let round = 1; round <= Number(values.rounds); round++) {
  // CPU time, not wall time: on a shared machine the thread's waits for a core are not its cost.
  const a0 = process.cpuUsage()
  // As the route does: the time the request arrived, read once per request.
  const receivedAt = Date.now()
  for (let i = 0; i < hits; i++)
    dropped.add(organizations[i % 100], reasons[Math.floor(i / 100) % 5], receivedAt)
  const used = process.cpuUsage(a0)
  const addNs = ((used.user + used.system) * 1000) / hits
  const rows = dropped.pending
  const f0 = performance.now()
  await dropped.flush()
  console.log(
    `filtered hits, round ${round}: ${addNs.toFixed(0)} ns per dropped hit counted; ` +
      `the write of ${rows} counts ${(performance.now() - f0).toFixed(1)} ms`,
  )
}
await store.close()
rmSync(dataDir, { recursive: true, force: true })
