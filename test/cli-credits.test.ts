import { readFileSync } from 'node:fs'
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

// `credits grant | balance` and `org create` against the embedded store of a stopped server, then
// the balances over HTTP once the server runs again.
const data = tempDir('vid-cli-credits-')
let server: ServerProcess | undefined
let boot: BootstrapFile

const cli = (args: string[], env: Record<string, string> = {}) => runCli(args, { DATA_DIR: data.dir, ...env })

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

async function json(args: string[], env: Record<string, string> = {}) {
  const result = await cli(args, env)
  expect(result.code, result.stderr).toBe(0)
  return JSON.parse(result.stdout)
}

describe('credits', () => {
  it('the bootstrap organization opened with INITIAL_CREDITS (1,000 by default)', async () => {
    expect(await json(['credits', 'balance', '--org', boot.organizationId])).toEqual({
      organizationId: boot.organizationId,
      balance: 1000,
    })
  })

  it('grant adds credits and prints the new balance', async () => {
    expect(
      await json(['credits', 'grant', '--org', boot.organizationId, '--amount', '25', '--reason', 'support']),
    ).toEqual({ organizationId: boot.organizationId, granted: 25, balance: 1025 })
    expect(
      await json(['credits', 'grant', '--org', boot.organizationId.toUpperCase(), '--amount', '5']),
    ).toMatchObject({ balance: 1030 })
    expect((await json(['credits', 'balance', '--org', boot.organizationId])).balance).toBe(1030)
  })

  it('org create opens the ledger with INITIAL_CREDITS', async () => {
    const created = (await json(['org', 'create', '--name', 'Seven'], { INITIAL_CREDITS: '7' }))
      .organizationId
    expect((await json(['credits', 'balance', '--org', created])).balance).toBe(7)
    const none = (await json(['org', 'create', '--name', 'None'], { INITIAL_CREDITS: '0' })).organizationId
    expect((await json(['credits', 'balance', '--org', none])).balance).toBe(0)
  })

  it('refuses bad arguments with one line', async () => {
    const org = ['--org', boot.organizationId]
    expectUsageError(await cli(['credits', 'spend', ...org]), /credits needs a command: grant or balance/)
    expectUsageError(await cli(['credits', 'balance']), /needs --org/)
    expectUsageError(await cli(['credits', 'grant', ...org]), /needs --amount/)
    for (const amount of ['0', '-3', '1.5', 'ten']) {
      expectUsageError(await cli(['credits', 'grant', ...org, `--amount=${amount}`]), /positive integer/)
    }
    expectUsageError(
      await cli(['credits', 'grant', ...org, '--amount', '2000000000']),
      /amount must be a positive integer up to 1000000000/,
    )
    expectUsageError(await cli(['credits', 'balance', ...org, '--amount', '3']), /takes no --amount/)
    expectUsageError(
      await cli(['credits', 'balance', '--org', '00000000-0000-4000-8000-000000000000']),
      /No organization/,
    )
    expectUsageError(await cli(['credits', 'balance', '--org', 'acme']), /No organization acme/)
    expect((await json(['credits', 'balance', ...org])).balance).toBe(1030)
  })

  it('the API shows the balances', async () => {
    server = await startServerProcess({ DATA_DIR: data.dir })
    const response = await fetch(`${server.url}/api/v1/organization/${boot.organizationId}`, {
      headers: { 'x-api-key': boot.apiKey },
    })
    expect(response.status).toBe(200)
    expect((await response.json()).identificationCredits).toBe(1030)
  })
})
