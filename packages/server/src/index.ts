export { type AppDependencies, buildApp } from './app.js'
export { UsageError, usage } from './cli/usage.js'
export { runAdminCommand } from './cli.js'
export { openStore, type RunningServer, StartupError, startServer } from './runtime.js'
