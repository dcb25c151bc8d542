#!/usr/bin/env node
// What a first identification costs the server, in CPU, all included (the identification call,
// the event, its consumers, the merges of what they write): the same fixed traffic is sent twice
// per round, once plain and once with identify hits of new visitors (each a first
// identification of a contact), at a moderate rate, each phase in a window of the same length
// so background work counts alike. CPU of the server process (all threads) from /proc, so Linux
// only. A moderate rate rather than ingest.bench.mjs's saturated machine: it explains the identify
// mix's figure, it does not replace it (bench/README.md).
//
//   npm run build && node bench/ingest/identify-cost.mjs [--hits 20000] [--firsts 2000] [--rounds 3]
//     [--window-ms 20000] [--connections 500] [--contacts 1000000] [--data DIR] [--role all|ingest]
//
// --role ingest leaves out the worker (event consumers, scoring): what identification itself costs.
// The figure is noisy on a store that keeps growing (--data reused): background merges land in
// either phase; compare medians of several rounds.
//
// With STORE_TIMING_FILE set and the server preloading store-timing.mjs
// (NODE_OPTIONS=--import=./bench/ingest/store-timing.mjs), each round also prints the server's
// Store calls of both phases, by kind (bench/ingest/store-calls.mjs).
import { randomUUID } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { createStore, lockDataDir, migrate } from '@visitor-id/core/store'
import { startServer } from '../analytics/server.mjs'
import { contactEmail, createVisitorPool, hitRequest, insertContacts, requestAs } from './traffic.mjs'

const { values } = parseArgs({
  options: {
    hits: { type: 'string', default: '20000' },
    firsts: { type: 'string', default: '2000' },
    rounds: { type: 'string', default: '3' },
    'window-ms': { type: 'string', default: '20000' },
    connections: { type: 'string', default: '500' },
    contacts: { type: 'string', default: '1000000' },
    data: { type: 'string' },
    role: { type: 'string', default: 'all' },
  },
})
const hits = Number(values.hits)
const firsts = Number(values.firsts)
const windowMs = Number(values['window-ms'])
const contacts = Number(values.contacts)
const dataDir = values.data ?? mkdtempSync(path.join(os.tmpdir(), 'vid-identify-cost-'))

// The contacts, written in-engine before the server opens the directory (kept when --data is reused).
{
  const lock = lockDataDir(dataDir)
  const store = createStore({ database: 'default', dataDir })
  await migrate(store)
  const [{ n }] = await store.query('SELECT count() AS n FROM contacts')
  if (Number(n) === 0) {
    await insertContacts(store, contacts)
    for (const table of ['contacts', 'contact_keys']) await store.command(`OPTIMIZE TABLE ${table} FINAL`)
  }
  await store.close()
  lock.release()
}

const server = await startServer(dataDir, ['--role', values.role], {
  TRUST_PROXY: '1',
  INITIAL_CREDITS: '100000000',
})
const url = server.url
const { trackingKey } = JSON.parse(readFileSync(path.join(dataDir, 'bootstrap.json'), 'utf8'))

/** CPU milliseconds the server used so far (user + system, all threads). */
const cpuMs = () => {
  const fields = readFileSync(`/proc/${server.pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10
}

/** The server's Store call totals so far, when it preloads store-timing.mjs. */
async function storeTimings() {
  if (!process.env.STORE_TIMING_FILE) return undefined
  process.kill(server.pid, 'SIGUSR2')
  await new Promise((resolve) => setTimeout(resolve, 800))
  return JSON.parse(readFileSync(process.env.STORE_TIMING_FILE, 'utf8')).totals
}

const pool = createVisitorPool(20_000)
let counter = 0

/** An identify hit of a new visitor with a contact's email: a first identification of a person. */
function firstIdentification(n) {
  const who = pool[n % pool.length]
  const hit = {
    k: trackingKey,
    e: 'id',
    v: randomUUID(),
    s: randomUUID(),
    u: `https://shop.example/b/${n}/account`,
    ts: Date.now(),
    em: contactEmail(Math.floor(Math.random() * contacts)),
  }
  return requestAs(who, hit)
}

/** Sends `hits` requests (every hits/firsts-th one a first identification when `identify`), then waits out the window. */
async function phase(identify) {
  const requests = Array.from({ length: hits }, (_, i) => {
    const n = counter++
    return identify && i % Math.floor(hits / firsts) === 0
      ? firstIdentification(n)
      : hitRequest(pool, trackingKey, n)
  })
  const cpuBefore = cpuMs()
  const started = performance.now()
  let next = 0
  await Promise.all(
    Array.from({ length: Number(values.connections) }, async () => {
      while (next < requests.length) {
        const request = requests[next++]
        const response = await fetch(`${url}/collect`, { method: 'POST', ...request })
        await response.arrayBuffer()
        if (response.status !== 202) throw new Error(`/collect answered ${response.status}`)
      }
    }),
  )
  const sentMs = performance.now() - started
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, windowMs - sentMs)))
  return { cpuMs: cpuMs() - cpuBefore, sentMs, timings: await storeTimings() }
}

function printCalls(before, pure, mix) {
  const delta = (from, to) =>
    Object.fromEntries(
      Object.entries(to).map(([label, t]) => [
        label,
        { calls: t.calls - (from?.[label]?.calls ?? 0), ms: t.ms - (from?.[label]?.ms ?? 0) },
      ]),
    )
  const p = delta(before, pure)
  const m = delta(pure, mix)
  const rows = Object.keys({ ...p, ...m })
    .map((label) => ({ label, p: p[label] ?? { calls: 0, ms: 0 }, m: m[label] ?? { calls: 0, ms: 0 } }))
    .sort((a, b) => b.m.ms - b.p.ms - (a.m.ms - a.p.ms))
    .slice(0, 15)
  for (const { label, p, m } of rows) {
    console.log(
      `  ${label.slice(0, 56).padEnd(56)} plain ${String(p.calls).padStart(5)} calls ${p.ms.toFixed(0).padStart(7)} ms | with identify hits ${String(m.calls).padStart(5)} calls ${m.ms.toFixed(0).padStart(7)} ms`,
    )
  }
}

console.log(
  `identification cost: ${hits} hits per phase, ${firsts} of them first identifications, windows of ${windowMs} ms, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown'}), Node ${process.version}, IDENTIFY_BATCH_MS ${process.env.IDENTIFY_BATCH_MS ?? 'default'}`,
)
let timings = (await phase(false)).timings // warm-up
const perFirst = []
for (let round = 1; round <= Number(values.rounds); round++) {
  const plain = await phase(false)
  const mixed = await phase(true)
  if (plain.timings) printCalls(timings, plain.timings, mixed.timings)
  timings = mixed.timings
  const ms = (mixed.cpuMs - plain.cpuMs) / firsts
  perFirst.push(ms)
  console.log(
    `round ${round}: plain ${plain.cpuMs} ms of CPU (${((plain.cpuMs / hits) * 1000).toFixed(0)} µs per hit, sent in ${plain.sentMs.toFixed(0)} ms), ` +
      `with ${firsts} first identifications ${mixed.cpuMs} ms (sent in ${mixed.sentMs.toFixed(0)} ms): ${ms.toFixed(2)} ms per first identification`,
  )
}
perFirst.sort((a, b) => a - b)
console.log(
  `median: ${perFirst[Math.floor(perFirst.length / 2)].toFixed(2)} ms of server CPU per first identification`,
)
await server.stop()
if (values.data) console.log(`data kept in ${dataDir}`)
else rmSync(dataDir, { recursive: true, force: true })
