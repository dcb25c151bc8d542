// `ingest.bench.mjs --against DIR`: the same server built from another checkout (the commit before
// a change, built with `npm run build` there), driven in the same rounds as this checkout's, the two
// in alternating order, so both meet the shared machine's drift alike. The per-round ratio of this
// checkout's rate to the other's, and the CPU per request of each, are the change's cost. Its hits
// are not loss-checked (the other checkout's own runs do that).
import { once } from 'node:events'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'

/** Starts the other checkout's server with `env` (its own data directory) through `start`. */
export async function startAgainst(dir, start, env) {
  const checkout = path.resolve(dir)
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'vid-bench-against-'))
  const server = start(
    path.join(checkout, 'packages/server/dist/main.js'),
    ['serve'],
    { ...env, DATA_DIR: dataDir },
    [],
    checkout,
  )
  const url = await server.url
  const { trackingKey } = JSON.parse(readFileSync(path.join(dataDir, 'bootstrap.json'), 'utf8'))
  return {
    checkout,
    target: { url, pid: server.child.pid },
    trackingKey,
    /** Stops it; a server that does not exit cleanly fails the bench like this checkout's. */
    async stop() {
      server.child.kill('SIGTERM')
      const [code, signal] = await once(server.child, 'exit')
      rmSync(dataDir, { recursive: true, force: true })
      if (code !== 0)
        throw new Error(`the --against server exited with ${code ?? signal}:\n${server.output()}`)
    },
  }
}

/** The comparison's lines: each round's ratio this / other, the medians, the CPU per request of each. */
export function comparisonLines(ingest, other, median) {
  const ratios = ingest.map((r, i) => r.rps / other[i].rps)
  const cpu = (list) => median(list.map((r) => r.cpuPerRequestUs)).toFixed(0)
  const percent = (value) => (value * 100).toFixed(1)
  return [
    `this / --against      median of the rounds ${percent(median(ratios))} % of the other's rate ` +
      `(medians ${percent(median(ingest.map((r) => r.rps)) / median(other.map((r) => r.rps)))} %); ` +
      `per round ${ratios.map(percent).join(' / ')} %`,
    `CPU per request       this ${cpu(ingest)} µs, the other ${cpu(other)} µs (medians of the rounds)`,
  ]
}
