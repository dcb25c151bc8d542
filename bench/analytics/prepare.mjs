// The analytics benchmarks' data directory: a --data directory with a finished dataset is reused as
// it is; otherwise the server bootstraps it (organization and key) and dataset.mjs fills it.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fillAnalyticsDataset } from './dataset.mjs'
import { bootstrapDataDir } from './server.mjs'

/**
 * The data directory of a run: `data` (filled on first use, reused afterwards), else a temp one,
 * removed when the process exits unless `keep`. `requested` holds the sizes of a fill (pageViews,
 * visitors, companies, days). Returns the directory, the dataset's description
 * (`DIR/analytics-dataset.json`), whether it was reused, and the bootstrap organization and key.
 * @example const { dataDir, dataset } = await prepareDataDir({ data: '/tmp/a', requested, log })
 */
export async function prepareDataDir({ data, keep = false, requested, log }) {
  const dataDir = data ? path.resolve(data) : mkdtempSync(path.join(os.tmpdir(), 'vid-bench-analytics-'))
  const removeAtEnd = !data && !keep
  mkdirSync(dataDir, { recursive: true })
  // Also when a step fails; every server child is stopped before (their `finally`).
  process.on('exit', () => {
    if (removeAtEnd) rmSync(dataDir, { recursive: true, force: true })
  })
  // Written once the fill has finished: a directory with it is reused as it is.
  const datasetFile = path.join(dataDir, 'analytics-dataset.json')
  let dataset
  const reused = existsSync(datasetFile)
  if (reused) {
    dataset = JSON.parse(readFileSync(datasetFile, 'utf8'))
    log(
      `reusing the dataset of ${dataDir} (filled ${dataset.endedAt}, ${dataset.counts.pageViews} page views)`,
    )
    if (dataset.requested?.pageViews !== requested.pageViews) {
      log(
        `--page-views ${requested.pageViews} ignored: the dataset was filled with ${dataset.requested?.pageViews}`,
      )
    }
  } else {
    if (existsSync(path.join(dataDir, 'bootstrap.json'))) {
      throw new Error(
        `${dataDir} has a store but no finished dataset (${datasetFile}); use an empty directory`,
      )
    }
    log(`bootstrapping ${dataDir}`)
    const bootstrap = await bootstrapDataDir(dataDir)
    const started = performance.now()
    dataset = await fillAnalyticsDataset(dataDir, {
      organizationId: bootstrap.organizationId,
      ...requested,
      log,
    })
    dataset.requested = requested
    dataset.fillSeconds = (performance.now() - started) / 1000
    writeFileSync(datasetFile, `${JSON.stringify(dataset, null, 2)}\n`)
  }
  const bootstrap = JSON.parse(readFileSync(path.join(dataDir, 'bootstrap.json'), 'utf8'))
  return { dataDir, dataset, reused, removeAtEnd, bootstrap }
}
