// The admin commands (everything but `serve` and `help`): routed here to their modules under cli/,
// run in this process or in the server that owns the data directory (its admin socket).
import { inspect } from 'node:util'
import { type Config, ConfigError } from '@visitor-id/core/config'
import { DataDirLockedError, migrate, StoreBackupError } from '@visitor-id/core/store'
import { type AdminReply, type AdminRequest, adminSocketPath, sendAdminCommand } from './admin-socket.js'
import { BackupError } from './backup/manifest.js'
import { backupCommand, restoreCommand } from './cli/backup.js'
import { billingCommand } from './cli/billing.js'
import { type CommandContext, type CommandRun, type Out, withStore } from './cli/command-run.js'
import { creditsCommand } from './cli/credits.js'
import { importCommand } from './cli/import.js'
import { keysCreate } from './cli/keys.js'
import { orgCreate } from './cli/org.js'
import { partnerKeysCommand } from './cli/partner-keys.js'
import { privacyCommand } from './cli/privacy.js'
import { seedDemoCommand } from './cli/seed-demo.js'
import { UsageError } from './cli/usage.js'

export type { CommandContext }

async function runCommand(run: CommandRun, argv: string[], out: Out): Promise<void> {
  const [command, sub, ...rest] = argv
  if (command === 'migrate') {
    const { applied } = await withStore(run, (store) => migrate(store))
    out(applied.length ? `applied: ${applied.join(', ')}` : 'nothing to apply')
    return
  }
  if (command === 'org' && sub === 'create') return orgCreate(run, rest, out)
  if (command === 'keys' && sub === 'create') return keysCreate(run, rest, out)
  if (command === 'partner-keys') return partnerKeysCommand(run, sub, rest, out)
  if (command === 'credits') return creditsCommand(run, sub, rest, out)
  if (command === 'billing') return billingCommand(run, sub, rest, out)
  if (command === 'import') return importCommand(run, sub, rest, out)
  if (command === 'privacy') return privacyCommand(run, sub, rest, out)
  if (command === 'backup') return backupCommand(run, argv.slice(1), out)
  if (command === 'restore') return restoreCommand(run, argv.slice(1), out)
  if (command === 'seed-demo')
    return seedDemoCommand(run, [sub, ...rest].filter((a) => a !== undefined) as string[], out)
  throw new UsageError(`Unknown command: ${argv.join(' ') || '(none)'}. Run "help" for the list.`)
}

/**
 * Runs one admin command (everything but `serve` and `help`). With the embedded store, a server
 * that owns the data directory runs it (DATA_DIR/admin.sock): its lines are relayed here and its
 * exit code becomes `process.exitCode`. Otherwise the command opens the store itself.
 */
export async function runAdminCommand(config: Config, argv: string[], out: Out): Promise<void> {
  const cwd = process.cwd()
  if (!config.clickhouse.url) {
    const exit = await sendAdminCommand(
      adminSocketPath(config.dataDir),
      { argv, cwd },
      { out, err: (line) => console.error(line) },
    )
    if (exit !== undefined) {
      if (exit !== 0) process.exitCode = exit
      return
    }
  }
  return runCommand({ config, cwd, progress: process.stderr }, argv, out)
}

/** A failed command as `main` shows it: one line for expected failures (exit 2 for usage). */
function failure(error: unknown): { line: string; exit: number } {
  if (error instanceof UsageError) return { line: `visitor-id: ${error.message}`, exit: 2 }
  if (error instanceof TypeError && (error as NodeJS.ErrnoException).code?.startsWith('ERR_PARSE_ARGS')) {
    return { line: `visitor-id: ${error.message}`, exit: 2 }
  }
  if (
    error instanceof ConfigError ||
    error instanceof DataDirLockedError ||
    error instanceof BackupError ||
    error instanceof StoreBackupError
  ) {
    return { line: `visitor-id: ${error.message}`, exit: 1 }
  }
  return { line: `visitor-id: failed to start: ${inspect(error)}`, exit: 1 }
}

/** Runs a command received on the admin socket with the server's store; resolves to its exit code. */
export async function serveAdminRequest(
  context: CommandContext,
  request: AdminRequest,
  reply: (reply: AdminReply) => void,
): Promise<number> {
  try {
    await runCommand({ config: context.config, cwd: request.cwd, context }, request.argv, (line) =>
      reply({ out: line }),
    )
    return 0
  } catch (error) {
    const { line, exit } = failure(error)
    reply({ err: line })
    return exit
  }
}
