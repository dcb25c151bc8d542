// How an admin command runs: on the store the CLI opens itself, or on a running server's (its admin
// socket hands over a `CommandContext`).
import type { Config } from '@visitor-id/core/config'
import type { Coordination } from '@visitor-id/core/coordination'
import type { ErasedVisitors } from '@visitor-id/core/privacy'
import { createRepositories, type Repositories } from '@visitor-id/core/repositories'
import { createReadModel, migrate, type Store } from '@visitor-id/core/store'
import type { ImportKind, IngestService } from '@visitor-id/ingest'
import { createCoordination } from '../adapters.js'
import { openStore } from '../open-store.js'

export type Out = (line: string) => void

/** A running server's store, repositories (its read model) and coordination. */
export interface CommandContext {
  config: Config
  store: Store
  repos: Repositories
  coordination: Coordination
  /** Applies a finished import in the server (its caches) and announces it to the other processes. */
  importFinished?: (kind: ImportKind) => Promise<void>
  /** The server's ingest, when it ingests: a backup writes its buffered hits and copies its queues. */
  ingest?: Pick<IngestService, 'holdForBackup'> | undefined
  /** The server's erased visitor ids: an erasure tells its ingest at once (and the other processes). */
  erasedVisitors?: ErasedVisitors
}

/** How one command runs: in the CLI's own process, or in the server that owns the data directory. */
export interface CommandRun {
  config: Config
  /** File names on the command line are relative to this directory. */
  cwd: string
  /** Given by the server (admin socket); unset: the command opens the store itself. */
  context?: CommandContext
  /** Where an import draws its progress bar (a terminal); unset in the server. */
  progress?: NodeJS.WriteStream
}

/**
 * Runs `work` on the server's store when the command came through its admin socket, otherwise on
 * the store opened here. Writes are announced as a server announces its own (pub/sub, Redis when
 * REDIS_URL is set), so servers running on the same ClickHouse server drop their copies at once.
 */
export async function withRepos<T>(
  run: CommandRun,
  work: (repos: Repositories, store: Store, coordination: Coordination) => Promise<T>,
): Promise<T> {
  if (run.context) return work(run.context.repos, run.context.store, run.context.coordination)
  const config = run.config
  const { store, lock } = openStore(config)
  const coordination = createCoordination(config)
  try {
    await migrate(store)
    const reachable = coordination.kind === 'memory' || (await coordination.ping())
    if (!reachable) {
      console.warn(
        'visitor-id: Redis at REDIS_URL is not answering: running servers see this change within ENTITY_CACHE_TTL_MS',
      )
    }
    const readModel = reachable ? createReadModel({ pubsub: coordination.pubsub }) : undefined
    return await work(createRepositories(store, readModel), store, coordination)
  } finally {
    await coordination.close()
    await store.close()
    lock?.release()
  }
}

/** Runs `work` on the server's store, or on the store opened (and migrated) here. */
export async function withStore<T>(run: CommandRun, work: (store: Store) => Promise<T>): Promise<T> {
  if (run.context) return work(run.context.store)
  const { store, lock } = openStore(run.config)
  try {
    return await work(store)
  } finally {
    await store.close()
    lock?.release()
  }
}
