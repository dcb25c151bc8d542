import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import type { BootstrapFile } from '@visitor-id/core/organizations'
import {
  killServerProcess,
  repoRoot,
  runCli,
  type ServerProcess,
  startServerProcess,
} from '@visitor-id/testing/server-process'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

// Admin commands while a server owns the embedded data directory: they go to the server over
// DATA_DIR/admin.sock (the data directory lock keeps the CLI from opening the store itself, so a
// success here is the server's doing), with the output and exit codes of a direct run.
const data = tempDir('vid-cli-socket-')
const dataDir = path.join(data.dir, 'data')
const socketFile = path.join(dataDir, 'admin.sock')
let server: ServerProcess | undefined
let boot: BootstrapFile

const cli = (...args: string[]) => runCli(args, { DATA_DIR: dataDir })

async function json(...args: string[]) {
  const result = await cli(...args)
  expect(result.code, result.stderr).toBe(0)
  return JSON.parse(result.stdout)
}

/** A small companies file, named relative to the CLI's working directory (the repo root). */
function companiesFile(name: string): string {
  const file = path.join(data.dir, name)
  writeFileSync(
    file,
    [
      'id,name,domain',
      'acme,Acme,acme.example',
      ',Nameless,nameless.example',
      'globex,Globex,globex.example',
    ].join('\n'),
  )
  return path.relative(repoRoot, file)
}

beforeAll(async () => {
  server = await startServerProcess({ DATA_DIR: dataDir })
  boot = JSON.parse(readFileSync(path.join(dataDir, 'bootstrap.json'), 'utf8')) as BootstrapFile
})

afterAll(async () => {
  await killServerProcess(server)
  data.remove()
})

describe('admin commands with a server running', () => {
  let organizationId: string
  let importReport: Record<string, unknown>

  it('the server listens on DATA_DIR/admin.sock, mode 0600', () => {
    const stat = statSync(socketFile)
    expect(stat.isSocket()).toBe(true)
    expect(stat.mode & 0o777).toBe(0o600)
  })

  it('org create, keys create (the key works at once), credits grant, through the server', async () => {
    const org = await json('org', 'create', '--name', 'Socket Inc', '--domain', 'socket.example')
    expect(org).toEqual({
      organizationId: expect.any(String),
      userId: expect.any(String),
      trackingKey: expect.stringMatching(/^pk_/),
    })
    organizationId = org.organizationId

    const key = await json('keys', 'create', '--org', organizationId, '--scopes', 'read')
    expect(key).toEqual({
      id: expect.any(String),
      keyPrefix: key.plainKey.slice(0, key.keyPrefix.length),
      scopes: ['read'],
      plainKey: expect.any(String),
    })
    const pixel = await fetch(`${server!.url}/api/v1/visitor-tracking/${organizationId}`, {
      headers: { 'x-api-key': key.plainKey },
    })
    expect(pixel.status).toBe(200)

    expect(await json('credits', 'grant', '--org', organizationId, '--amount', '250')).toEqual({
      organizationId,
      granted: 250,
      balance: 1250,
    })
    expect(await json('credits', 'balance', '--org', boot.organizationId)).toEqual({
      organizationId: boot.organizationId,
      balance: 1000,
    })
  })

  it('import companies reads a relative FILE and writes --rejects relative to the CLI', async () => {
    const rejects = path.join(data.dir, 'rejects.csv')
    importReport = await json(
      'import',
      'companies',
      companiesFile('companies.csv'),
      '--rejects',
      path.relative(repoRoot, rejects),
    )
    expect(importReport).toMatchObject({ kind: 'companies', read: 3, imported: 2, rejected: 1 })
    expect(importReport.rejects).toEqual([{ line: 3, reason: 'id: id is required' }])
    expect(readFileSync(rejects, 'utf8')).toBe('line,reason\n3,"id: id is required"\n')
  })

  it('a usage error exits 2 with one line, as without a server', async () => {
    const result = await cli('credits', 'grant', '--org', boot.organizationId, '--amount', '0')
    expect(result.code).toBe(2)
    expect(result.stdout).toBe('')
    expect(result.stderr).toBe('visitor-id: --amount must be a positive integer\n')
    const missing = await cli('import', 'companies', 'no-such-file.csv')
    expect(missing.code).toBe(2)
    expect(missing.stderr).toBe('visitor-id: No such file: no-such-file.csv\n')
    const unknown = await cli('serve-not')
    expect(unknown.code).toBe(2)
    expect(unknown.stderr.trim().split('\n')).toHaveLength(1)
  })

  it('after the server stops, the CLI opens the store itself: same output', async () => {
    server!.child.kill('SIGTERM')
    expect((await server!.exit).code).toBe(0)
    server = undefined
    expect(existsSync(socketFile)).toBe(false)
    expect(await json('credits', 'balance', '--org', organizationId)).toEqual({
      organizationId,
      balance: 1250,
    })
    const direct = await json('import', 'companies', companiesFile('companies-2.csv'))
    expect(Object.keys(direct).sort()).toEqual(Object.keys(importReport).sort())
    expect(direct).toMatchObject({ kind: 'companies', read: 3, imported: 2, rejected: 1 })
  })

  it('a stale socket (server killed with SIGKILL) blocks neither the CLI nor the next server', async () => {
    server = await startServerProcess({ DATA_DIR: dataDir })
    server.child.kill('SIGKILL')
    await server.exit
    server = undefined
    expect(existsSync(socketFile)).toBe(true)
    expect(await json('credits', 'balance', '--org', organizationId)).toMatchObject({ balance: 1250 })

    server = await startServerProcess({ DATA_DIR: dataDir })
    expect(statSync(socketFile).mode & 0o777).toBe(0o600)
    expect(await json('credits', 'grant', '--org', organizationId, '--amount', '1')).toMatchObject({
      balance: 1251,
    })
  })
})
