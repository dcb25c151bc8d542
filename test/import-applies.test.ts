// An import made through the running server applies at once: the CLI reaches the server over its
// admin socket, the server imports and reloads its company ranges before it answers, so the next hit
// from an imported range carries the company. COMPANY_IPS_REFRESH_MS stays at its default (5
// minutes): the periodic reload cannot be what makes this pass. Likewise a contacts import: a
// visitor identified by an email no contact had finds the imported contact at its next identify hit.
import { randomUUID } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { timeUntil } from '@visitor-id/testing/poll'
import {
  killServerProcess,
  runCli,
  type ServerProcess,
  startServerProcess,
} from '@visitor-id/testing/server-process'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BootstrapKeys, collect, companyOfHit, eventually, pixelHit } from './fixtures/hits.js'

const data = tempDir('vid-import-applies-')
const env = { DATA_DIR: path.join(data.dir, 'data') }
let server: ServerProcess | undefined
let keys: BootstrapKeys

beforeAll(async () => {
  server = await startServerProcess({
    ...env,
    TRUST_PROXY: '1',
    INGEST_BATCH_MS: '20',
    IDENTIFY_BATCH_MS: '20',
  })
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

  it('applies contacts at once: a visitor identified by that email before finds its contact', {
    timeout: 60_000,
  }, async () => {
    const email = `peter-${randomUUID().slice(0, 8)}@initech.test`
    const visitor = randomUUID()
    const session = randomUUID()
    /** Sends an identify hit with the email, waits until it is identified, and returns the contact's first name. */
    const identifiedContact = async () => {
      const hit = pixelHit(keys.trackingKey, { v: visitor, s: session, e: 'id', em: email })
      expect((await collect(server!.url, hit)).status).toBe(202)
      await eventually(async () => {
        const text = await (await fetch(`${server!.url}/metrics`)).text()
        return /^vid_ingest_identify_queue_bytes 0$/m.test(text) ? true : undefined
      })
      const response = await fetch(
        `${server!.url}/api/v1/visitor-tracking/${keys.organizationId}/visitors/${visitor}`,
        { headers: { 'x-api-key': keys.apiKey } },
      )
      if (response.status !== 200) return undefined
      return ((await response.json()) as { contact: { firstName: string | null } | null }).contact?.firstName
    }
    expect((await collect(server!.url, pixelHit(keys.trackingKey, { v: visitor, s: session }))).status).toBe(
      202,
    )
    // Identified by the email alone: no contact has it yet.
    expect(await eventually(async () => ((await identifiedContact()) === null ? true : undefined))).toBe(true)

    const contacts = path.join(data.dir, 'contacts.csv')
    writeFileSync(contacts, `email,first_name\n${email},Peter\n`)
    const result = await runCli(['import', 'contacts', contacts], env)
    expect(result.code, result.stderr).toBe(0)
    expect(JSON.parse(result.stdout)).toMatchObject({ kind: 'contacts', imported: 1 })
    const after = await timeUntil(async () => (await identifiedContact()) === 'Peter', 2000)
    expect(after).toBeLessThan(2000)
  })
})
