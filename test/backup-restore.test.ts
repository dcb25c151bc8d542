import { readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import type { BootstrapFile } from '@visitor-id/core/organizations'
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

// Backup of a running server (embedded store) while hits arrive, through its admin socket; restored
// into a new data directory and started: every hit acknowledged before the backup began is there,
// every entity reads back equal through the API, and a key made before still works.
const work = tempDir('vid-backup-')
const sourceDir = path.join(work.dir, 'source')
const restoredDir = path.join(work.dir, 'restored')
const backupDir = path.join(work.dir, 'backups', 'nightly')
// The default acknowledgement (202 after the spool's fsync), so a backup may hold hits that are
// only in the spool. One PUBLIC_URL for both servers: install snippets name it, not the port.
const env = {
  INGEST_ACK: 'spool',
  INGEST_BATCH_MS: '20',
  ICP_RESCORE_INTERVAL_MS: '300',
  PUBLIC_URL: 'https://vid.example',
}
let source: ServerProcess | undefined
let restored: ServerProcess | undefined
let boot: BootstrapFile

beforeAll(async () => {
  source = await startServerProcess({ ...env, DATA_DIR: sourceDir })
  boot = JSON.parse(readFileSync(path.join(sourceDir, 'bootstrap.json'), 'utf8')) as BootstrapFile
})

afterAll(async () => {
  await killServerProcess(source)
  await killServerProcess(restored)
  work.remove()
})

describe('backup while hits arrive, restore into a new data directory', () => {
  it('restores every hit acknowledged before the backup, every entity, and working keys', async () => {
    const url = source!.url
    const made = await makeEntities(url, boot.apiKey)
    const granted = await runCli(['credits', 'grant', '--org', made.organizationId, '--amount', '250'], {
      DATA_DIR: sourceDir,
    })
    expect(granted.code, granted.stderr).toBe(0)
    const before = await readEntities(url, boot.apiKey, made)
    expect(before.organization.identificationCredits).toBe(1250)

    const traffic = sendHits(url, boot.trackingKey, 6)
    await eventually(async () => (traffic.acknowledged() >= 150 ? true : undefined), 60_000)
    const backupBegan = Date.now()
    const backup = await runCli(['backup', '--to', backupDir], { DATA_DIR: sourceDir })
    const backupEnded = Date.now()
    await new Promise((resolve) => setTimeout(resolve, 300))
    await traffic.stop()
    expect(backup.code, backup.stderr).toBe(0)
    const report = JSON.parse(backup.stdout)
    console.log(
      `backup: ${backup.stdout.replace(/\s+/g, ' ')} (the CLI took ${backupEnded - backupBegan} ms)`,
    )
    expect(report).toMatchObject({ backup: backupDir, engine: expect.stringMatching(/^embedded /) })
    expect(report.dataFiles).toEqual(
      expect.arrayContaining(['bootstrap.json', 'email-secret', 'spool/spool.jsonl']),
    )
    expect(statSync(backupDir).mode & 0o777).toBe(0o700)
    const ackedBefore = traffic.hits.filter((h) => h.ackedAt !== undefined && h.ackedAt < backupBegan)
    const ackedDuring = traffic.hits.filter(
      (h) => h.ackedAt !== undefined && h.ackedAt >= backupBegan && h.ackedAt <= backupEnded,
    )
    const sentAfter = traffic.hits.filter((h) => h.sentAt > backupEnded)
    // Hits kept arriving, and being acknowledged, while the backup ran.
    expect(ackedDuring.length).toBeGreaterThan(0)
    expect(sentAfter.length).toBeGreaterThan(0)

    // Restore is offline: not into the running server's data directory, not into a used one.
    const busy = await runCli(['restore', '--from', backupDir], { DATA_DIR: sourceDir })
    expect(busy.code).toBe(2)
    expect(busy.stderr).toMatch(/a server is running on DATA_DIR .*restore fills an empty data directory/)
    const used = await runCli(['restore', '--from', backupDir], { DATA_DIR: work.dir })
    expect(used.code).toBe(1)
    expect(used.stderr).toMatch(/^visitor-id: DATA_DIR .* is not empty .*point DATA_DIR at a new one\n$/)

    const restore = await runCli(['restore', '--from', backupDir], { DATA_DIR: restoredDir })
    expect(restore.code, restore.stderr).toBe(0)
    expect(JSON.parse(restore.stdout)).toMatchObject({ restored: backupDir, migration: report.migration })
    for (const file of ['bootstrap.json', 'email-secret']) {
      expect(readFileSync(path.join(restoredDir, file))).toEqual(readFileSync(path.join(sourceDir, file)))
      expect(statSync(path.join(restoredDir, file)).mode & 0o777).toBe(0o600)
    }
    restored = await startServerProcess({ ...env, DATA_DIR: restoredDir })
    const copy = restored.url

    // Every hit acknowledged before the backup began is there; none sent after it ended.
    const pages = await pagesByVisitor(copy, boot.apiKey, boot.organizationId, traffic.visitors)
    const has = (hit: { n: number; visitor: string }) => pages.get(hit.visitor)!.has(hit.n)
    expect(ackedBefore.filter((hit) => !has(hit)).map((hit) => hit.n)).toEqual([])
    expect(sentAfter.filter(has).map((hit) => hit.n)).toEqual([])

    // Entities read back equal; the keys made before work.
    expect(await readEntities(copy, boot.apiKey, made)).toEqual(before)
    const withReadKey = await fetch(`${copy}/api/v1/visitor-tracking/${made.organizationId}`, {
      headers: { 'x-api-key': made.readKey },
    })
    expect(withReadKey.status).toBe(200)
    expect((await withReadKey.json()).pixelConfig).toEqual(before.tracking.pixelConfig)
    expect((await fetch(`${copy}/readyz`)).status).toBe(200)
    console.log(
      `hits: ${ackedBefore.length} acknowledged before the backup (all restored), ${ackedDuring.length} during it, ${traffic.hits.length} sent`,
    )
  }, 120_000)
})
