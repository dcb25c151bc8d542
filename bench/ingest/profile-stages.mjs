#!/usr/bin/env node
// The ingest server's main-thread CPU by stage, from the V8 CPU profile `ingest.bench.mjs --profile
// DIR` wrote: each sample goes to the first stage (in the order below) that a frame of its stack
// belongs to, counted from the first request on (start-up left out).
//
//   node bench/ingest/profile-stages.mjs DIR/<file>.cpuprofile [HITS] [--top STAGE]
//
// HITS (the stored hits the bench printed) turns milliseconds into µs per hit. The profiler's own
// cost inflates every stage alike: compare shares, and µs per hit only between profiled runs.
// --top STAGE lists that stage's functions by self time.
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'

const { values, positionals } = parseArgs({ options: { top: { type: 'string' } }, allowPositionals: true })
const profile = JSON.parse(readFileSync(positionals[0], 'utf8'))
const hits = Number(positionals[1] ?? 0)

/** Stage, test of a frame, and whether only the sampled frame or its caller may match. */
const stages = [
  ['idle', (f) => f.functionName === '(idle)'],
  ['garbage collection', (f) => f.functionName === '(garbage collector)'],
  [
    'spool (encode, write, fdatasync)',
    (f) =>
      /ingest\/dist\/(spool|spool-first-sink|spool-batch)\.js/.test(f.url) ||
      f.functionName === 'encodePageViewRow',
  ],
  [
    'insert (JS side: batching, encoding, client, engine binding)',
    (f) =>
      /chdb|client-common|@clickhouse|core\/dist\/store\/client|durable-sink|batch-writer|identities|identify-queue/.test(
        f.url,
      ),
  ],
  ['validation (zod)', (f) => /zod|collect-schema/.test(f.url)],
  ['reverse DNS', (f) => /dns/.test(f.url)],
  [
    'hit pipeline and row (IP, user agent, referrer, campaign, pixel config)',
    (f) =>
      /ingest\/dist\/(pipeline|ip|page-view-row)|ua-parser|isbot|tldts|mmdb|maxmind|read-model|entity-copies|bounded-cache|tracking-keys/.test(
        f.url,
      ),
  ],
  ['JSON.parse of the body', (f) => f.functionName === 'parseJson', true],
  [
    'HTTP (Node, Fastify)',
    (f) =>
      f.url.startsWith('node:') ||
      /fastify|find-my-way|avvio|toad-cache|light-my-request|pino|ingest\/dist\/plugin/.test(f.url),
  ],
]

const nodes = new Map(profile.nodes.map((node) => [node.id, node]))
const parent = new Map()
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)
const stack = (id) => {
  const frames = []
  for (let at = id; at !== undefined; at = parent.get(at)) frames.push(nodes.get(at).callFrame)
  return frames
}
const stageOf = new Map()
const classify = (id) => {
  if (!stageOf.has(id)) {
    const frames = stack(id)
    const found = stages.find(([, test, direct]) => frames.some((f, i) => (!direct || i <= 1) && test(f)))
    stageOf.set(id, found?.[0] ?? 'other (V8 program, microtasks)')
  }
  return stageOf.get(id)
}

// From the first request on.
let first = profile.samples.findIndex((id) => stack(id).some((f) => f.functionName === 'handleRequest'))
if (first < 0) first = 0
const time = new Map()
for (let i = first; i < profile.samples.length; i++) {
  const id = profile.samples[i]
  time.set(id, (time.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0))
}
const byStage = new Map()
let busy = 0
for (const [id, us] of time) {
  const stage = classify(id)
  byStage.set(stage, (byStage.get(stage) ?? 0) + us)
  if (stage !== 'idle') busy += us
}
console.log(`main thread busy ${(busy / 1000).toFixed(0)} ms${hits ? ` for ${hits} hits` : ''}`)
for (const [stage, us] of [...byStage].sort((a, b) => b[1] - a[1])) {
  if (stage === 'idle') continue
  const share = ((us / busy) * 100).toFixed(1).padStart(5)
  console.log(`${stage.padEnd(72)} ${share} %${hits ? `  ${(us / hits).toFixed(1).padStart(6)} µs/hit` : ''}`)
}
if (values.top) {
  const self = new Map()
  for (const [id, us] of time) {
    if (classify(id) !== values.top) continue
    const f = nodes.get(id).callFrame
    const key = `${f.functionName || '(anonymous)'} ${f.url.split('/').slice(-2).join('/')}:${f.lineNumber + 1}`
    self.set(key, (self.get(key) ?? 0) + us)
  }
  for (const [key, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 25))
    console.log(`  ${(us / 1000).toFixed(0).padStart(6)} ms  ${key}`)
}
