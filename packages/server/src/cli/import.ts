// `import company-ips | companies | contacts`: a dataset file into the store, then applied by the
// running servers.
import { existsSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { migrate } from '@visitor-id/core/store'
import {
  announceImportApplied,
  createProgressBar,
  type ImportKind,
  type ImportReport,
  importCompanies,
  importCompanyIps,
  importContacts,
} from '@visitor-id/ingest'
import { createCoordination } from '../adapters.js'
import { type CommandRun, type Out, withStore } from './command-run.js'
import { UsageError } from './usage.js'

const shownRejects = 100

/**
 * Makes a finished import apply at once: the server that ran it reloads its caches and tells the
 * others; run here (no server owns the store), it is announced through Redis to the servers on the
 * same ClickHouse server. Without Redis they apply it at their next COMPANY_IPS_REFRESH_MS reload.
 */
async function applyImport(run: CommandRun, kind: ImportKind): Promise<void> {
  if (run.context) {
    await run.context.importFinished?.(kind)
    return
  }
  if (!run.config.redis.url) return
  const coordination = createCoordination(run.config)
  const unannounced = () =>
    console.warn(
      'visitor-id: Redis at REDIS_URL is not answering: running servers apply this import at their next reload (COMPANY_IPS_REFRESH_MS)',
    )
  try {
    // PING first: a publish to a Redis that is down would wait for it to come back.
    if (await coordination.ping()) await announceImportApplied(coordination.pubsub, kind).catch(unannounced)
    else unannounced()
  } finally {
    await coordination.close()
  }
}

export async function importCommand(run: CommandRun, kind: string | undefined, args: string[], out: Out) {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { replace: { type: 'boolean' }, rejects: { type: 'string' } },
  })
  if (kind !== 'company-ips' && kind !== 'companies' && kind !== 'contacts') {
    throw new UsageError('import needs a dataset: contacts, company-ips or companies')
  }
  const file = positionals[0]
  if (!file || positionals.length > 1) throw new UsageError(`import ${kind} needs one FILE`)
  // Names as given in messages; read and written relative to the CLI's directory (in a server too).
  if (!existsSync(path.resolve(run.cwd, file))) throw new UsageError(`No such file: ${file}`)
  if (values.replace && kind !== 'company-ips') throw new UsageError('--replace applies to company-ips only')
  const bar = run.progress ? createProgressBar(run.progress, `import ${kind}`) : undefined
  let report: ImportReport
  try {
    report = await withStore(run, async (store) => {
      await migrate(store)
      const options = {
        store,
        file: path.resolve(run.cwd, file),
        onProgress: bar?.update ?? (() => {}),
        replace: values.replace ?? false,
      }
      const importers = {
        'company-ips': importCompanyIps,
        companies: importCompanies,
        contacts: importContacts,
      }
      return importers[kind](options)
    })
  } finally {
    bar?.done()
  }
  await applyImport(run, kind)
  if (values.rejects) {
    const lines = report.rejects.map((r) => `${r.line},"${r.reason.replace(/"/g, '""')}"`)
    writeFileSync(
      path.resolve(run.cwd, values.rejects),
      `line,reason\n${lines.join('\n')}${lines.length ? '\n' : ''}`,
    )
  }
  out(
    JSON.stringify(
      {
        ...report,
        rejects: report.rejects.slice(0, shownRejects),
        ...(report.rejected > shownRejects
          ? {
              note: `${report.rejected - shownRejects} more rejected rows${values.rejects ? ` in ${values.rejects}` : ' (use --rejects FILE for all)'}`,
            }
          : {}),
      },
      null,
      2,
    ),
  )
}
