// Runs the benchmarks in turn (`npm run bench`, after a build); each prints its figures next to the
// baseline it measures in the same run. See bench/README.md for what each measures.
//
//   node bench/run.mjs [--quick] [NAME ...] [-- ARGS]
//
// NAME ...  run only these (default: all, in the order below)
// --quick   small sizes for every benchmark: a smoke run (a few minutes in all) that checks each one
//           starts, works and prints; its figures are not comparable with the recorded ones, and the
//           benchmarks that write their RESULTS.md write to a temporary copy instead
// -- ARGS   passed to every chosen benchmark after its own arguments (e.g. `lists -- --keep`)
// --list    the benchmarks and the arguments each gets; --help this text
//
// Without --quick every benchmark runs at its own defaults, the sizes its recorded figures use
// (10 M page views for analytics, 10 M contacts for lists): a long run, the fills alone take minutes.
import { spawnSync } from 'node:child_process'
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'

const here = import.meta.dirname
// A temporary folder for the quick runs' copies of RESULTS.md, made on first use.
let scratchDir
const scratch = () => {
  scratchDir ??= mkdtempSync(path.join(os.tmpdir(), 'bench-run-'))
  return scratchDir
}
const removeScratch = () => scratchDir && rmSync(scratchDir, { recursive: true, force: true })

/** name -> script, and the arguments of a --quick run (a function when it needs a scratch file). */
const benches = {
  'pixel-size': { script: 'ingest/pixel-size.mjs', quick: [] },
  icp: { script: 'icp/icp.bench.mjs', quick: ['--visitors=10000', '--rows=200000', '--rounds=3'] },
  'icp-recalculation': {
    script: 'icp/recalculation.bench.mjs',
    quick: () => {
      // It rewrites one section of the file it is given: a copy, so the recorded one stays.
      const out = path.join(scratch(), 'icp-RESULTS.md')
      copyFileSync(path.join(here, 'icp/RESULTS.md'), out)
      return ['--visitors', '20000', '--page-views', '200000', '--rounds', '1', '--out', out]
    },
  },
  ingest: {
    script: 'ingest/ingest.bench.mjs',
    quick: ['--rounds', '1', '--duration', '3', '--connections', '200'],
  },
  contacts: { script: 'ingest/contacts-import.bench.mjs', quick: ['--rows', '20000'] },
  api: {
    script: 'api/visitor-profile.bench.mjs',
    // Its dataset is 20 page views for each of 50,000 visitors, checked before measuring: the
    // quick run keeps the 1 M page views and measures less.
    quick: () => ['--rounds', '1', '--seconds', '2', '--out', path.join(scratch(), 'api-RESULTS.md')],
  },
  analytics: { script: 'analytics/analytics.bench.mjs', quick: ['--page-views', '200000', '--rounds', '5'] },
  'analytics-load': {
    script: 'analytics/load.bench.mjs',
    // It rewrites the "Under load" section of the file it is given: a copy, so the recorded one stays.
    quick: () => {
      const out = path.join(scratch(), 'analytics-RESULTS.md')
      copyFileSync(path.join(here, 'analytics/RESULTS.md'), out)
      return ['--page-views', '200000', '--seconds', '10', '--rounds', '5', '--out', out]
    },
  },
  lists: {
    script: 'lists/lists.bench.mjs',
    quick: [
      ...['--contacts', '200000', '--companies', '20000', '--visitors', '5000'],
      ...['--rounds', '5', '--refresh-rounds', '1', '--export-rounds', '1'],
    ],
  },
  webhooks: {
    script: 'webhooks/webhooks.bench.mjs',
    quick: [
      ...['--deliveries', '2000', '--hanging', '200', '--repeat', '1'],
      ...['--hold-ms', '2000', '--end-to-end', '200'],
    ],
  },
  // 30 minutes at its own size (after a one-off fill of 10 M page views); --quick: 3 minutes on
  // 1 M, its RESULTS.md and plot in a temporary folder.
  soak: { script: 'soak/soak.bench.mjs', quick: ['--quick'] },
}

const argv = process.argv.slice(2)
const dashDash = argv.indexOf('--')
const own = dashDash >= 0 ? argv.slice(0, dashDash) : argv
const passed = dashDash >= 0 ? argv.slice(dashDash + 1) : []
const quick = own.includes('--quick')
const argsOf = (name) => {
  if (!quick) return passed
  const { quick: q } = benches[name]
  return [...(typeof q === 'function' ? q() : q), ...passed]
}

if (own.includes('--help') || own.includes('-h')) {
  const usage = readFileSync(new URL(import.meta.url), 'utf8').split('\nimport ')[0]
  console.log(usage.replaceAll(/^\/\/ ?/gm, ''))
  process.exit(0)
}
if (own.includes('--list')) {
  for (const name of Object.keys(benches))
    console.log(`${name.padEnd(18)} bench/${benches[name].script} ${argsOf(name).join(' ')}`)
  removeScratch()
  process.exit(0)
}

const unknownFlag = own.find((arg) => arg.startsWith('-') && arg !== '--quick')
const names = own.filter((arg) => !arg.startsWith('-'))
const unknown = names.filter((name) => !benches[name])
if (unknownFlag || unknown.length > 0) {
  console.error(`unknown ${unknownFlag ? `option ${unknownFlag}` : `benchmark ${unknown.join(', ')}`}`)
  console.error(`known: ${Object.keys(benches).join(', ')}; options: --quick, --list, --help`)
  process.exit(2)
}

let status = 0
try {
  for (const name of names.length > 0 ? names : Object.keys(benches)) {
    const args = argsOf(name)
    console.log(
      `\n=== ${name} (node bench/${benches[name].script}${args.length > 0 ? ` ${args.join(' ')}` : ''}) ===`,
    )
    const result = spawnSync(process.execPath, [path.join(here, benches[name].script), ...args], {
      stdio: 'inherit',
    })
    if (result.status !== 0) {
      status = result.status ?? 1
      break
    }
  }
} finally {
  removeScratch()
}
process.exit(status)
