// Runs every benchmark in turn (`npm run bench`); each prints its figures next to the baseline
// measured in the same run and rewrites its RESULTS/README section. Pass names to run a subset:
// `npm run bench -- icp ingest`.
import { spawnSync } from 'node:child_process'
import path from 'node:path'

const benches = {
  'pixel-size': 'ingest/pixel-size.mjs',
  icp: 'icp/icp.bench.mjs',
  ingest: 'ingest/ingest.bench.mjs',
  api: 'api/visitor-profile.bench.mjs',
  contacts: 'ingest/contacts-import.bench.mjs',
}
const chosen = process.argv.slice(2)
const names = chosen.length > 0 ? chosen : Object.keys(benches)
for (const name of names) {
  const script = benches[name]
  if (!script) {
    console.error(`unknown benchmark ${name}; known: ${Object.keys(benches).join(', ')}`)
    process.exit(2)
  }
  console.log(`\n=== ${name} (bench/${script}) ===`)
  const result = spawnSync(process.execPath, [path.join(import.meta.dirname, script)], { stdio: 'inherit' })
  if (result.status !== 0) process.exit(result.status ?? 1)
}
