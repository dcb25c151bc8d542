import { readFileSync } from 'node:fs'
import path from 'node:path'
import type { BootstrapFile } from '@visitor-id/core/organizations'
import { type ClickHouseHttp, startClickHouseHttp } from '@visitor-id/testing/clickhouse-http'
import {
  killServerProcess,
  runCli,
  type ServerProcess,
  startServerProcess,
} from '@visitor-id/testing/server-process'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeEntities, pagesByVisitor, readEntities, sendHits } from './fixtures/backup.js'
import { eventually } from './fixtures/hits.js'

// Backup and restore on a ClickHouse server (CLICKHOUSE_URL; ClickHouse's HTTP interface in front of
// the real engine, configured with `backups.allowed_path`): there is no admin socket, the CLI runs
// the backup itself and the engine writes the store's part under its allowed path. The restore fills
// another, empty database of the same server (CLICKHOUSE_DATABASE) and a new data directory.
const work = tempDir('vid-backup-server-')
const backups = path.join(work.dir, 'backups')
const backupDir = path.join(backups, 'nightly')
const sourceDir = path.join(work.dir, 'source')
const restoredDir = path.join(work.dir, 'restored')
let clickhouse: ClickHouseHttp | undefined
let source: ServerProcess | undefined
let restored: ServerProcess | undefined
let boot: BootstrapFile
let shared: Record<string, string>

/** Runs SQL on the server, as an operator would. */
const sql = async (query: string) => {
  const response = await fetch(clickhouse!.url, { method: 'POST', body: query })
  if (!response.ok) throw new Error(await response.text())
}

beforeAll(async () => {
  clickhouse = await startClickHouseHttp(path.join(work.dir, 'engine'), { backupsAllowedPath: backups })
  shared = {
    CLICKHOUSE_URL: clickhouse.url,
    INGEST_BATCH_MS: '20',
    ICP_RESCORE_INTERVAL_MS: '300',
    PUBLIC_URL: 'https://vid.example',
  }
  source = await startServerProcess({ ...shared, DATA_DIR: sourceDir })
  boot = JSON.parse(readFileSync(path.join(sourceDir, 'bootstrap.json'), 'utf8')) as BootstrapFile
})

afterAll(async () => {
  await killServerProcess(source)
  await killServerProcess(restored)
  await clickhouse?.close()
  work.remove()
})

describe('backup and restore on a ClickHouse server', () => {
  it('backs up under the server allowed path and restores into an empty database', async () => {
    const url = source!.url
    const made = await makeEntities(url, boot.apiKey)
    const before = await readEntities(url, boot.apiKey, made)
    const traffic = sendHits(url, boot.trackingKey, 3)
    await eventually(async () => (traffic.acknowledged() >= 50 ? true : undefined), 60_000)

    // Outside the server's backups.allowed_path the engine refuses, in one line.
    const outside = await runCli(['backup', '--to', path.join(work.dir, 'elsewhere')], {
      ...shared,
      DATA_DIR: sourceDir,
    })
    expect(outside.code).toBe(1)
    expect(outside.stderr).toMatch(
      /^visitor-id: The engine's BACKUP ended BACKUP_FAILED: .*elsewhere\/store' is not allowed for backups, see the 'backups.allowed_path' configuration parameter\. \(BAD_ARGUMENTS\)\n$/,
    )

    const backupBegan = Date.now()
    const backup = await runCli(['backup', '--to', backupDir], { ...shared, DATA_DIR: sourceDir })
    const backupEnded = Date.now()
    await traffic.stop()
    expect(backup.code, backup.stderr).toBe(0)
    console.log(`backup: ${backup.stdout.replace(/\s+/g, ' ')}`)
    // The data directory's own files, not the spool of the server's ingest (it replays into the live store).
    expect(JSON.parse(backup.stdout)).toMatchObject({
      engine: expect.stringMatching(/^server /),
      dataFiles: ['bootstrap.json', 'email-secret'],
    })

    // The restore's database must exist (as for a first start) and be empty.
    const into = { ...shared, CLICKHOUSE_DATABASE: 'restored', DATA_DIR: restoredDir }
    await sql('CREATE DATABASE restored')
    const restore = await runCli(['restore', '--from', backupDir], into)
    expect(restore.code, restore.stderr).toBe(0)
    expect(JSON.parse(restore.stdout)).toMatchObject({ into: { engine: 'server', database: 'restored' } })
    const again = await runCli(['restore', '--from', backupDir], {
      ...into,
      DATA_DIR: path.join(work.dir, 'new'),
    })
    expect(again.code).toBe(1)
    expect(again.stderr).toMatch(
      /^visitor-id: The database restored already has \d+ tables: restore fills an empty one\n$/,
    )

    restored = await startServerProcess({ ...into })
    const copy = restored.url
    const pages = await pagesByVisitor(copy, boot.apiKey, boot.organizationId, traffic.visitors)
    const has = (hit: { n: number; visitor: string }) => pages.get(hit.visitor)!.has(hit.n)
    const ackedBefore = traffic.hits.filter((h) => h.ackedAt !== undefined && h.ackedAt < backupBegan)
    expect(ackedBefore.length).toBeGreaterThanOrEqual(50)
    expect(ackedBefore.filter((hit) => !has(hit)).map((hit) => hit.n)).toEqual([])
    expect(traffic.hits.filter((h) => h.sentAt > backupEnded && has(h))).toEqual([])
    expect(await readEntities(copy, boot.apiKey, made)).toEqual(before)
    const withReadKey = await fetch(`${copy}/api/v1/visitor-tracking/${made.organizationId}`, {
      headers: { 'x-api-key': made.readKey },
    })
    expect(withReadKey.status).toBe(200)
  }, 120_000)
})
