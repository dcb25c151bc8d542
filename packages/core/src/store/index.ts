// The public face of core's store domain: what other packages import as @visitor-id/core/store.
export {
  backupStore,
  engineVersion,
  restoreStore,
  type StoreBackup,
  StoreBackupError,
  storeDatabase,
  storeTables,
} from './backup.js'
export type { InsertOptions } from './client.js'
export {
  backgroundStore,
  classifyStoreError,
  createStore,
  type QueryParams,
  type Store,
  StoreError,
  type StoreErrorKind,
  type StoreOptions,
} from './client.js'
export { type DataDirLock, DataDirLockedError, lockDataDir } from './data-dir-lock.js'
export {
  appliedMigrations,
  defaultMigrationsDir,
  isMigrated,
  type MigrateOptions,
  type Migration,
  MigrationError,
  migrate,
  readMigrations,
} from './migrate.js'
export type { PageViewRow } from './page-view-row.js'
export {
  createReadModel,
  entityChangedChannel,
  type ReadModel,
  type ReadModelOptions,
} from './read-model.js'
export { type DdlTarget, renderMigration, renderStatement, splitStatements } from './render-ddl.js'
export {
  createEntityRepository,
  type EntityDefinition,
  type EntityRepository,
  type FindOptions,
} from './repository.js'
export { storedTime } from './time.js'
