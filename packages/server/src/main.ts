#!/usr/bin/env node
// Entry point: `visitor-id serve` and the admin commands. The only place that reads process.env.
import { parseArgs } from 'node:util'
import { ConfigError, loadConfig } from '@visitor-id/core/config'
import { DataDirLockedError, MigrationError, StoreBackupError } from '@visitor-id/core/store'
import { BackupError } from './backup/manifest.js'
import { UsageError, usage } from './cli/usage.js'
import { runAdminCommand } from './cli.js'
import { StartupError, startServer } from './runtime.js'

/** A repeat of the stop signal within this window is the same request, delivered twice. */
const sameSignalWindowMs = 1000

async function serve(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { role: { type: 'string' } } })
  const config = loadConfig({ ...process.env, ...(values.role ? { ROLE: values.role } : {}) })
  const server = await startServer(config)
  const log = server.app.log

  let first: { signal: NodeJS.Signals; at: number } | undefined
  const onSignal = (signal: NodeJS.Signals) => {
    if (first) {
      // Ctrl-C under `npm start` arrives twice within a millisecond: from the terminal (npm and the
      // server share its process group) and forwarded by npm. That is one request to stop.
      if (signal === first.signal && Date.now() - first.at < sameSignalWindowMs) return
      log.warn({ signal }, 'second signal: exiting now')
      process.exit(130)
    }
    first = { signal, at: Date.now() }
    log.info({ signal }, 'shutting down')
    const forced = setTimeout(() => {
      log.error('shutdown took too long: exiting')
      process.exit(1)
    }, config.shutdownTimeoutMs)
    forced.unref()
    server.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        log.error({ err: error }, 'shutdown failed')
        process.exit(1)
      },
    )
  }
  // Before anything says it is ready: a supervisor may send SIGTERM as soon as it hears so.
  process.on('SIGTERM', onSignal)
  process.on('SIGINT', onSignal)
  log.info({ url: server.url, role: config.role, dataDir: config.dataDir }, 'ready')
  console.log(`visitor-id is running at ${server.url} (role ${config.role})`)
  console.log(`bootstrap keys: ${server.bootstrapFile}`)
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv
  if (!command || command === 'help' || command === '--help' || command === '-h') {
    console.log(usage)
    return
  }
  if (command === 'serve') return serve(rest)
  await runAdminCommand(loadConfig(process.env), argv, (line) => console.log(line))
}

main(process.argv.slice(2)).catch((error: unknown) => {
  // Expected failures print one clear line, no stack trace.
  if (
    error instanceof ConfigError ||
    error instanceof DataDirLockedError ||
    error instanceof UsageError ||
    error instanceof StartupError ||
    // A store upgraded by a later release, or an applied migration edited since: the message says what to do.
    error instanceof MigrationError ||
    error instanceof BackupError ||
    error instanceof StoreBackupError
  ) {
    console.error(`visitor-id: ${error.message}`)
    process.exit(error instanceof UsageError ? 2 : 1)
  }
  if (error instanceof TypeError && (error as NodeJS.ErrnoException).code?.startsWith('ERR_PARSE_ARGS')) {
    console.error(`visitor-id: ${error.message}`)
    process.exit(2)
  }
  console.error('visitor-id: failed to start:', error)
  process.exit(1)
})
