export { type AppDependencies, buildApp } from './app.js'
export { runAdminCommand, UsageError, usage } from './cli.js'
export { openStore, type RunningServer, StartupError, startServer } from './runtime.js'
