import path from 'node:path'
import { organizationRow } from '@visitor-id/testing/rows'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newId } from '../ids.js'
import { createRepositories } from '../repositories.js'
import { backupStore, restoreStore, StoreBackupError, storeDatabase, storeTables } from './backup.js'
import { createStore, type Store } from './client.js'
import { appliedMigrations, migrate } from './migrate.js'

// The engine's own BACKUP and RESTORE on the embedded engine (one per process: the restore goes
// back into the same engine's database once every table of it is dropped).
const tmp = tempDir('vid-store-backup-')
let store: Store

beforeAll(async () => {
  store = createStore({ database: 'default', dataDir: path.join(tmp.dir, 'data') })
  await migrate(store)
})

afterAll(async () => {
  await store.close()
  tmp.remove()
})

describe('backupStore and restoreStore', () => {
  it('back up the whole database and restore it into the emptied one', async () => {
    const repos = createRepositories(store)
    const organization = organizationRow({ id: newId(), name: 'Backed up' })
    await repos.organizations.save(organization)
    const tables = await storeTables(store)
    const ledger = await appliedMigrations(store)
    expect(tables).toContain('schema_migrations')
    expect(await storeDatabase(store)).toBe('default')

    const dir = path.join(tmp.dir, 'backup', 'store')
    const backup = await backupStore(store, dir)
    expect(backup).toMatchObject({ id: expect.any(String), database: 'default' })
    expect(backup.files).toBeGreaterThan(tables.length)
    expect(backup.bytes).toBeGreaterThan(0)
    await expect(backupStore(store, dir)).rejects.toThrow(StoreBackupError)

    // Views first: a table a materialized view reads cannot go before the view.
    const views = await store.query<{ name: string }>(
      "SELECT name FROM system.tables WHERE database = currentDatabase() AND engine = 'MaterializedView'",
    )
    for (const { name } of views) await store.command(`DROP TABLE ${name} SYNC`)
    for (const name of await storeTables(store)) await store.command(`DROP TABLE ${name} SYNC`)
    expect(await storeTables(store)).toEqual([])

    await restoreStore(store, dir, 'default')
    expect(await storeTables(store)).toEqual(tables)
    expect(await appliedMigrations(store)).toEqual(ledger)
    expect((await createRepositories(store).organizations.get({ id: organization.id }))?.name).toBe(
      'Backed up',
    )
  })

  it('say why the engine refused, in one line', async () => {
    const missing = restoreStore(store, path.join(tmp.dir, 'no-such-backup'), 'default')
    await expect(missing).rejects.toThrow(StoreBackupError)
    await expect(missing).rejects.toThrow(/^The engine's RESTORE ended RESTORE_FAILED: .*not found/)
    await expect(missing).rejects.not.toThrow(/Stack trace/)
  })
})
