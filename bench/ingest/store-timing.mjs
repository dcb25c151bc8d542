// Preload for the ingest server (`node --import ./bench/ingest/store-timing.mjs`, what
// `ingest.bench.mjs --store-timing` does): times every call of @clickhouse/client (the Store runs
// each query and insert through one, embedded engine included), from the call until its result is
// read, and adds the times up by what the call is (store-calls.mjs). On SIGUSR2 it writes the
// totals so far to STORE_TIMING_FILE, so the bench can take the difference over a round. Times of
// calls that overlap add up: a total is time spent waiting in calls, not CPU. With them go the
// engine's own counters (`system.events`: rows and bytes read, query CPU, merges), which do count
// work rather than waiting.
import { writeFileSync } from 'node:fs'
import { createClient } from '@clickhouse/client'
import { labelOf } from './store-calls.mjs'

// The class the Store's clients are made of, as the server imports it (the package's ESM build
// has its own copy): taken from a client that never connects.
const unused = createClient({})
const ClickHouseClient = Object.getPrototypeOf(unused).constructor
await unused.close()
const totals = {}
/** A client of the server's (the first one called), to read the engine's counters with. */
let serverClient
const untimedQuery = ClickHouseClient.prototype.query
const record = (label, ms) => {
  totals[label] ??= { calls: 0, ms: 0 }
  const entry = totals[label]
  entry.calls += 1
  entry.ms += ms
}
for (const method of ['query', 'command', 'exec', 'insert']) {
  const original = ClickHouseClient.prototype[method]
  ClickHouseClient.prototype[method] = async function timed(params) {
    serverClient ??= this
    const started = performance.now()
    const label = labelOf(method === 'insert' ? `insert ${params.table}` : String(params.query ?? ''))
    try {
      const result = await original.call(this, params)
      // A query's rows are read afterwards (result.json()): count that too.
      if (method === 'query' && result && typeof result.json === 'function') {
        const json = result.json.bind(result)
        result.json = async () => {
          try {
            return await json()
          } finally {
            record(label, performance.now() - started)
          }
        }
      } else record(label, performance.now() - started)
      return result
    } catch (error) {
      record(label, performance.now() - started)
      throw error
    }
  }
}
let sequence = 0
const engineCounters = [
  'SelectedRows',
  'SelectedBytes',
  'InsertedRows',
  'MergedRows',
  'MergedUncompressedBytes',
  'UserTimeMicroseconds',
  'SystemTimeMicroseconds',
]
async function readEngineCounters() {
  if (!serverClient) return {}
  try {
    const result = await untimedQuery.call(serverClient, {
      query: `SELECT event, value FROM system.events WHERE event IN (${engineCounters.map((name) => `'${name}'`).join(', ')})`,
      format: 'JSONEachRow',
    })
    return Object.fromEntries((await result.json()).map((row) => [row.event, Number(row.value)]))
  } catch {
    return {}
  }
}
process.on('SIGUSR2', async () => {
  sequence += 1
  const snapshot = { sequence, totals: structuredClone(totals) }
  snapshot.engine = await readEngineCounters()
  writeFileSync(process.env.STORE_TIMING_FILE, JSON.stringify(snapshot))
})
