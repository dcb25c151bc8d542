#!/usr/bin/env node
// What identification costs per batch of identify hits, query by query: `identifyVisitors` (what
// ingest runs after writing a batch that holds identify hits) on a store with the contacts of
// `ingest.bench.mjs --identify` (1 M by default) and page views of the visitors, without HTTP and
// without concurrent inserts: the floor of what a batch waits for on the server. It explains the
// identify mix's figures (bench/README.md); it is not a throughput benchmark.
//
//   npm run build && node bench/ingest/identify-path.mjs [--contacts 1000000] [--hits 100] [--batches 20]
//
// Three phases, one after the other on the same store: every hit a first identification (the
// visitors are new), every hit a re-identification (visitors identified before), and the mix's
// steady state (--first-share, 0.1, of the hits first identifications). Every call of the Store
// (queries, inserts; the repositories go through it too) is timed and named after what it reads
// or writes; the calls of one batch run mostly one after the other (the visitors read and the
// first page view run side by side), so their times add up to about the batch's wall time. As in
// the server, the organization, pixel and ICP configs come from the read model, and visitors
// identified lately skip the store (createIdentifiedVisitors). CPU is this process's (the
// embedded engine's threads included).
import { createHash, randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { createMemoryCoordination } from '@visitor-id/core/coordination'
import { createIdentifiedVisitors, identifyVisitors } from '@visitor-id/core/identification'
import { bootstrapIfEmpty } from '@visitor-id/core/organizations'
import { createRepositories } from '@visitor-id/core/repositories'
import { createReadModel, createStore, migrate } from '@visitor-id/core/store'
import { labelOf } from './store-calls.mjs'
import { contactEmail, insertContacts } from './traffic.mjs'

const { values } = parseArgs({
  options: {
    contacts: { type: 'string', default: '1000000' },
    hits: { type: 'string', default: '100' },
    batches: { type: 'string', default: '20' },
    'first-share': { type: 'string', default: '0.1' },
    keep: { type: 'boolean', default: false },
  },
})
const contactCount = Number(values.contacts)
const hitsPerBatch = Number(values.hits)
const batches = Number(values.batches)
const firstShare = Number(values['first-share'])
const visitorCount = 20_000
const visitorUuid = (n) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`
const sessionUuid = (n) => `00000000-0000-4000-9000-${String(n).padStart(12, '0')}`

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'vid-bench-identify-path-'))
const store = createStore({ database: 'default', dataDir })
await migrate(store)
const bootstrap = await bootstrapIfEmpty(createRepositories(store), dataDir, {
  initialCredits: { store, amount: 100_000_000 },
})
if (!bootstrap.created) throw new Error('bootstrap did not run on the fresh data directory')
const { organizationId } = bootstrap.bootstrap

let started = performance.now()
await insertContacts(store, contactCount)
for (const table of ['contacts', 'contact_keys']) await store.command(`OPTIMIZE TABLE ${table} FINAL`)
console.log(
  `${contactCount.toLocaleString('en')} contacts in ${((performance.now() - started) / 1000).toFixed(1)} s`,
)
// 20,000 visitors with 5 page views each (one session), like the bench's visitor pool.
started = performance.now()
await store.command(
  `INSERT INTO page_views (event_id, organization_id, visitor_id, session_id, type, timestamp, received_at,
     url, path, hostname, title, referrer, screen_width, screen_height, language,
     ip, country, region, city, isp, asn, connection_type, user_agent, device_type, browser, os)
   SELECT generateUUIDv4(), {org:UUID},
     toUUID(concat('00000000-0000-4000-8000-', leftPad(toString(number % {visitors:UInt32}), 12, '0'))),
     toUUID(concat('00000000-0000-4000-9000-', leftPad(toString(number % {visitors:UInt32}), 12, '0'))),
     'pageview', now64(3) - toIntervalSecond(600 - intDiv(number, {visitors:UInt32}) * 60), now64(3),
     concat('https://shop.example/p/', toString(number % 7)), concat('/p/', toString(number % 7)),
     'shop.example', 'Example shop', 'https://www.google.com/', 1920, 1080, 'en-US',
     concat('81.2.', toString(number % 250), '.', toString(number % 200)), 'DE', 'Berlin', 'Berlin',
     'Deutsche Telekom AG', 3320, 'isp', 'Mozilla/5.0 (X11; Linux x86_64) Chrome/124.0', 'desktop', 'Chrome', 'Linux'
   FROM numbers({n:UInt64})`,
  { org: organizationId, visitors: visitorCount, n: visitorCount * 5 },
)
for (const table of ['page_views', 'sessions']) await store.command(`OPTIMIZE TABLE ${table} FINAL`)
console.log(
  `${(visitorCount * 5).toLocaleString('en')} page views in ${((performance.now() - started) / 1000).toFixed(1)} s`,
)

// The Store every call of identification goes through, timed.
let spent = new Map()
const record = (label, ms) => {
  const entry = spent.get(label) ?? { calls: 0, ms: 0 }
  entry.calls += 1
  entry.ms += ms
  spent.set(label, entry)
}
const timedStore = new Proxy(store, {
  get(target, property) {
    const value = Reflect.get(target, property)
    if (!['query', 'command', 'insert'].includes(property)) return value
    return async (first, ...rest) => {
      const t0 = performance.now()
      try {
        return await value.call(target, first, ...rest)
      } finally {
        record(labelOf(property === 'insert' ? `insert ${first}` : first), performance.now() - t0)
      }
    }
  },
})
// Small entities (organizations, pixel and ICP configs) from memory, as the server has them.
const coordination = createMemoryCoordination({})
const readModel = createReadModel({ pubsub: coordination.pubsub })
await readModel.start()
// The server's cache of visitors identified lately: their repeated hits skip the store.
const deps = {
  store: timedStore,
  repos: createRepositories(timedStore, readModel),
  identified: createIdentifiedVisitors(),
}

// Emails as in the bench's mix (identification itself accepts the hashes the wire refuses).
const sha256 = (text) => createHash('sha256').update(text).digest('hex')
const emailOf = () => {
  const r = Math.random()
  const contact = contactEmail(Math.floor(Math.random() * contactCount))
  if (r < 0.05) return sha256(contact)
  if (r < 0.2) return `guest-${randomUUID()}@nobody.test`
  return contact
}
let nextNew = 0
const identified = [] // visitor numbers identified so far, with their email
const hitOf = (first) => {
  let n
  let email
  if (first || identified.length === 0) {
    n = nextNew++ % visitorCount
    email = emailOf()
    identified.push({ n, email })
  } else {
    ;({ n, email } = identified[Math.floor(Math.random() * identified.length)])
  }
  return {
    organization_id: organizationId,
    visitor_id: visitorUuid(n),
    session_id: sessionUuid(n),
    email,
    timestamp: new Date().toISOString(),
    // Half the hits carry an IP company without a row (an ASN company, as ingest derives them).
    company_id: n % 2 === 0 ? 'as3320' : '',
  }
}

async function phase(name, share) {
  spent = new Map()
  const walls = []
  let cpu = 0
  let firsts = 0
  let persons = 0
  for (let batch = 0; batch < batches; batch++) {
    const hits = Array.from({ length: hitsPerBatch }, () => hitOf(Math.random() < share))
    const cpu0 = process.cpuUsage()
    const t0 = performance.now()
    const result = await identifyVisitors(deps, hits)
    walls.push(performance.now() - t0)
    const used = process.cpuUsage(cpu0)
    cpu += (used.user + used.system) / 1000
    firsts += result.firstIdentifications
    persons += result.persons
  }
  walls.sort((a, b) => a - b)
  const mean = walls.reduce((a, b) => a + b, 0) / batches
  console.log('')
  console.log(
    `${name}: ${batches} batches of ${hitsPerBatch} identify hits, ${(firsts / batches).toFixed(1)} first identifications ` +
      `(${(persons / batches).toFixed(1)} persons) per batch; wall per batch: mean ${mean.toFixed(0)} ms, ` +
      `median ${walls[Math.floor(batches / 2)].toFixed(0)} ms; CPU ${(cpu / batches).toFixed(0)} ms per batch`,
  )
  console.log('  call                                       calls/batch  ms/batch   ms/call')
  const rows = [...spent.entries()].sort((a, b) => b[1].ms - a[1].ms)
  let total = 0
  for (const [label, { calls, ms }] of rows) {
    total += ms
    console.log(
      `  ${label.padEnd(42)} ${(calls / batches).toFixed(1).padStart(11)} ${(ms / batches).toFixed(1).padStart(9)} ${(ms / calls).toFixed(2).padStart(9)}`,
    )
  }
  console.log(
    `  ${'all Store calls'.padEnd(42)} ${''.padStart(11)} ${(total / batches).toFixed(1).padStart(9)}`,
  )
}

await phase('first identifications only', 1)
await phase('re-identifications only', 0)
await phase(`the mix's steady state (first-share ${firstShare})`, firstShare)

await readModel.close()
await coordination.close()
await store.close()
if (!values.keep) rmSync(dataDir, { recursive: true, force: true })
else console.log(`data kept in ${dataDir}`)
