// `backup --to DIR` (in the running server when there is one, like the other commands) and
// `restore --from DIR` (offline: into an empty data directory).
import path from 'node:path'
import { parseArgs } from 'node:util'
import { runBackup } from '../backup/run-backup.js'
import { runRestore } from '../backup/run-restore.js'
import { type CommandRun, type Out, withStore } from './command-run.js'
import { UsageError } from './usage.js'

function directoryOption(args: string[], name: 'to' | 'from', command: string): string {
  const { values, positionals } = parseArgs({ args, options: { [name]: { type: 'string' } } })
  const value = values[name]
  if (typeof value !== 'string' || !value || positionals.length > 0) {
    throw new UsageError(`${command} needs --${name} DIR`)
  }
  return value
}

export async function backupCommand(run: CommandRun, args: string[], out: Out): Promise<void> {
  // Relative to the CLI's directory, in the server too; a ClickHouse server writes the store's part
  // at this same path on its own host.
  const dir = path.resolve(run.cwd, directoryOption(args, 'to', 'backup'))
  const report = await withStore(run, (store) =>
    runBackup({ store, dataDir: run.config.dataDir, dir, ingest: run.context?.ingest }),
  )
  out(JSON.stringify(report, null, 2))
}

export async function restoreCommand(run: CommandRun, args: string[], out: Out): Promise<void> {
  const from = path.resolve(run.cwd, directoryOption(args, 'from', 'restore'))
  if (run.context) {
    throw new UsageError(
      `a server is running on DATA_DIR ${run.config.dataDir}: restore fills an empty data directory; ` +
        'point DATA_DIR at a new one (the server can keep running)',
    )
  }
  out(JSON.stringify(await runRestore(run.config, from), null, 2))
}
