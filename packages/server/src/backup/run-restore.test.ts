import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { loadConfig } from '@visitor-id/core/config'
import { readMigrations } from '@visitor-id/core/store'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterEach, describe, expect, it } from 'vitest'
import { BackupError, type BackupManifest, writeManifest } from './manifest.js'
import { runRestore } from './run-restore.js'

// The refusals that come before any store is opened (the engine's part: test/backup-restore*.test.ts).
const dirs: { remove: () => void }[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) dir.remove()
})

function setUp(manifest?: Partial<BackupManifest>, env: Record<string, string> = {}) {
  const tmp = tempDir('vid-restore-')
  dirs.push(tmp)
  const backup = path.join(tmp.dir, 'backup')
  mkdirSync(backup)
  const last = readMigrations().at(-1)!
  if (manifest) {
    writeManifest(backup, {
      format: 1,
      app: { name: 'visitor-id', version: '0.1.0' },
      startedAt: '2026-05-01T03:15:00.000Z',
      finishedAt: '2026-05-01T03:15:01.000Z',
      engine: { kind: 'embedded', version: '26.7.2.1', database: 'default', cluster: null },
      migration: { version: last.version, name: last.name },
      store: { id: 'b', files: 1, bytes: 1 },
      dataFiles: [],
      ...manifest,
    })
  }
  const dataDir = path.join(tmp.dir, 'data')
  return { backup, dataDir, config: loadConfig({ DATA_DIR: dataDir, ...env }) }
}

const refusal = async (work: Promise<unknown>) => {
  const error = await work.catch((e: unknown) => e)
  expect(error).toBeInstanceOf(BackupError)
  return (error as Error).message
}

describe('restore refuses', () => {
  it('a directory without a manifest, or with a malformed one', async () => {
    const { backup, config } = setUp()
    expect(await refusal(runRestore(config, backup))).toMatch(/holds no manifest\.json: not a backup/)
    writeFileSync(path.join(backup, 'manifest.json'), JSON.stringify({ format: 2 }))
    expect(await refusal(runRestore(config, backup))).toMatch(/is not a backup manifest \(format: /)
  })

  it('a backup of a newer version, and one of another deployment shape', async () => {
    const newer = setUp({
      migration: { version: 9999, name: '9999_future.sql' },
      app: { name: 'visitor-id', version: '9.0.0' },
    })
    expect(await refusal(runRestore(newer.config, newer.backup))).toMatch(
      /at migration 9999_future\.sql, newer than this version knows .*visitor-id 9\.0\.0 or later/,
    )
    const clustered = setUp({ engine: { kind: 'server', version: '26.7', database: 'vid', cluster: 'c' } })
    expect(await refusal(runRestore(clustered.config, clustered.backup))).toMatch(
      /of the cluster c: restore it with CLICKHOUSE_CLUSTER set/,
    )
    const renamed = setUp(
      { engine: { kind: 'server', version: '26.7', database: 'vid', cluster: 'c' } },
      { CLICKHOUSE_URL: 'http://127.0.0.1:1', CLICKHOUSE_CLUSTER: 'c', CLICKHOUSE_DATABASE: 'other' },
    )
    expect(await refusal(runRestore(renamed.config, renamed.backup))).toMatch(
      /database vid of a cluster: restore it into a database of that name/,
    )
  })

  it('a data directory that is not empty, and leaves it as it was', async () => {
    const { backup, dataDir, config } = setUp({})
    mkdirSync(dataDir)
    writeFileSync(path.join(dataDir, 'bootstrap.json'), '{}')
    expect(await refusal(runRestore(config, backup))).toMatch(
      /^DATA_DIR .* is not empty \(bootstrap\.json\): restore fills an empty data directory/,
    )
    expect(existsSync(path.join(dataDir, 'bootstrap.json'))).toBe(true)
  })
})
