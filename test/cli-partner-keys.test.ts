import { readFileSync } from 'node:fs'
import path from 'node:path'
import { sha256Hex } from '@visitor-id/core/ids'
import type { BootstrapFile } from '@visitor-id/core/organizations'
import {
  killServerProcess,
  runCli,
  type ServerProcess,
  startServerProcess,
} from '@visitor-id/testing/server-process'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

// `partner-keys create | list | revoke` against the embedded store of a stopped server, then the
// keys over HTTP once the server runs again.
const data = tempDir('vid-cli-partner-')
let server: ServerProcess | undefined
let boot: BootstrapFile

const cli = (...args: string[]) => runCli(['partner-keys', ...args], { DATA_DIR: data.dir })

interface ShownKey {
  id: string
  name: string
  keyPrefix: string
  scopes: string[]
  status: string
  expiresAt: string | null
  createdAt: string
  plainKey?: string
}

const created: Record<'reader' | 'writer', ShownKey & { plainKey: string }> = {} as never

beforeAll(async () => {
  server = await startServerProcess({ DATA_DIR: data.dir })
  boot = JSON.parse(readFileSync(path.join(data.dir, 'bootstrap.json'), 'utf8')) as BootstrapFile
  server.child.kill('SIGTERM')
  await server.exit
  server = undefined
})

afterAll(async () => {
  await killServerProcess(server)
  data.remove()
})

/** A refused command: exit 2, one line on stderr, no stack trace. */
function expectUsageError(result: Awaited<ReturnType<typeof cli>>, message: RegExp) {
  expect(result.code, result.stderr).toBe(2)
  expect(result.stdout).toBe('')
  expect(result.stderr).toMatch(message)
  expect(result.stderr).not.toMatch(/\n\s+at /)
}

describe('partner-keys', () => {
  it('create prints the key once, with its scopes and expiry', async () => {
    const expiresAt = `${new Date().getUTCFullYear() + 1}-06-01T00:00:00Z`
    const reader = await cli(
      'create',
      '--partner',
      boot.partnerId,
      '--name',
      'reader',
      '--scopes',
      'read',
      '--expires-at',
      expiresAt,
    )
    expect(reader.code, reader.stderr).toBe(0)
    created.reader = JSON.parse(reader.stdout)
    expect(created.reader).toEqual({
      id: expect.stringMatching(/^key_[0-9a-f]{32}$/),
      name: 'reader',
      keyPrefix: created.reader.plainKey.slice(0, 12),
      scopes: ['read'],
      status: 'active',
      expiresAt: new Date(expiresAt).toISOString(),
      createdAt: expect.any(String),
      plainKey: expect.stringMatching(/^bsk_partner_[0-9a-f]{32}$/),
    })
    const writer = await cli('create', '--partner', boot.partnerId, '--scopes', 'write')
    expect(writer.code, writer.stderr).toBe(0)
    created.writer = JSON.parse(writer.stdout)
    expect(created.writer).toMatchObject({ name: 'CLI partner key', scopes: ['write'], expiresAt: null })
  })

  it('create refuses agency and unknown scopes, an unknown partner and a past expiry', async () => {
    const partner = ['--partner', boot.partnerId]
    expectUsageError(
      await cli('create', ...partner, '--scopes', 'read,agency:read'),
      /agency:read .*partner key takes read, write or admin/,
    )
    expectUsageError(await cli('create', ...partner, '--scopes', 'root'), /root is not a scope/)
    expectUsageError(
      await cli('create', ...partner, '--expires-at', '2020-01-01T00:00:00Z'),
      /expiresAt must be in the future/,
    )
    expectUsageError(
      await cli('create', '--partner', '00000000-0000-4000-8000-000000000000'),
      /Partner not found/,
    )
    expectUsageError(await cli('create', '--scopes', 'read'), /needs --partner/)
    expectUsageError(await cli('create', ...partner, '--key', 'key_x'), /takes no --key/)
    expectUsageError(await cli('rotate', ...partner), /create, list or revoke/)
  })

  it('revoke revokes one key of the partner, and only of the partner', async () => {
    const revoked = await cli('revoke', '--partner', boot.partnerId, '--key', created.writer.id)
    expect(revoked.code, revoked.stderr).toBe(0)
    expect(JSON.parse(revoked.stdout)).toMatchObject({ id: created.writer.id, status: 'revoked' })
    expectUsageError(
      await cli('revoke', '--partner', boot.partnerId, '--key', 'key_unknown'),
      /API key not found/,
    )
    expectUsageError(await cli('revoke', '--partner', boot.partnerId), /needs --key/)
  })

  it('list shows prefixes, scopes, status and expiry: no full key, no hash', async () => {
    const listed = await cli('list', '--partner', boot.partnerId)
    expect(listed.code, listed.stderr).toBe(0)
    const keys = JSON.parse(listed.stdout) as ShownKey[]
    expect(keys.map((k) => [k.name, k.scopes, k.status])).toEqual([
      ['Partner key', ['admin'], 'active'],
      ['reader', ['read'], 'active'],
      ['CLI partner key', ['write'], 'revoked'],
    ])
    expect(keys[0]!.keyPrefix).toBe(boot.partnerKey.slice(0, 12))
    for (const key of keys) {
      expect(Object.keys(key).sort()).toEqual(
        ['createdAt', 'expiresAt', 'id', 'keyPrefix', 'name', 'scopes', 'status'].sort(),
      )
    }
    for (const secret of [boot.partnerKey, created.reader.plainKey, created.writer.plainKey]) {
      expect(listed.stdout).not.toContain(secret)
      expect(listed.stdout).not.toContain(sha256Hex(secret))
    }
  })

  it('the keys work over HTTP as listed: scopes hold, the revoked one is 401', async () => {
    server = await startServerProcess({ DATA_DIR: data.dir })
    const call = (key: string) =>
      fetch(`${server!.url}/api/v1/partner/organizations`, { headers: { 'x-partner-api-key': key } })
    expect((await call(created.reader.plainKey)).status).toBe(200)
    expect((await call(boot.partnerKey)).status).toBe(200)
    const revoked = await call(created.writer.plainKey)
    expect(revoked.status).toBe(401)
    expect(await revoked.json()).toMatchObject({ code: 'unauthorized' })
  })
})
