// An import made through the running server applies at once: the CLI reaches the server over its
// admin socket, the server imports and reloads its company ranges before it answers, so the next hit
// from an imported range carries the company. COMPANY_IPS_REFRESH_MS stays at its default (5
// minutes): the periodic reload cannot be what makes this pass.
import { readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { tempDir, timeUntil } from '@visitor-id/core/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BootstrapKeys, companyOfHit } from './fixtures/hits.js'
import {
  killServerProcess,
  runCli,
  type ServerProcess,
  startServerProcess,
} from './support/server-process.js'

const data = tempDir('vid-import-applies-')
const env = { DATA_DIR: path.join(data.dir, 'data') }
let server: ServerProcess | undefined
let keys: BootstrapKeys

beforeAll(async () => {
  server = await startServerProcess({ ...env, TRUST_PROXY: '1', INGEST_BATCH_MS: '20' })
  keys = JSON.parse(readFileSync(path.join(env.DATA_DIR, 'bootstrap.json'), 'utf8'))
}, 60_000)

afterAll(async () => {
  await killServerProcess(server)
  data.remove()
})

describe('an import through the running server', () => {
  it('applies at once: the next hit from an imported range carries the company', {
    timeout: 60_000,
  }, async () => {
    const ip = '192.0.2.77'
    expect(await companyOfHit(server!.url, keys, ip)).toBe('')
    const ranges = path.join(data.dir, 'ranges.csv')
    writeFileSync(ranges, 'cidr,company_id\n192.0.2.0/24,initech\n')
    const result = await runCli(['import', 'company-ips', ranges], env)
    // Exit 0: the server ran it (a CLI opening the store itself would find it locked).
    expect(result.code, result.stderr).toBe(0)
    expect(JSON.parse(result.stdout)).toMatchObject({ kind: 'company-ips', imported: 1 })
    const after = await timeUntil(async () => (await companyOfHit(server!.url, keys, ip)) === 'initech', 2000)
    expect(after).toBeLessThan(2000)
  })
})
