import type { Config } from '@visitor-id/core/config'
import { createStore, type DataDirLock, lockDataDir, type Store } from '@visitor-id/core/store'

/**
 * Opens the embedded store only after claiming the data directory, so a second process gets a
 * clear refusal instead of a corrupted store.
 */
export function openStore(config: Config): { store: Store; lock: DataDirLock | undefined } {
  const lock = config.clickhouse.url ? undefined : lockDataDir(config.dataDir)
  try {
    const store = createStore({ ...config.clickhouse, dataDir: config.dataDir })
    return { store, lock }
  } catch (error) {
    lock?.release()
    throw error
  }
}
