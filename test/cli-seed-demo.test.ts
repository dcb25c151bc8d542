// `seed-demo` on a fresh install: within a minute of starting, the API shows identified visitors,
// their companies and ICP matches, and the statistics count them before any pass of the server's.
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

const data = tempDir('vid-cli-demo-')
let server: ServerProcess | undefined
let boot: BootstrapFile

beforeAll(async () => {
  server = await startServerProcess({ DATA_DIR: data.dir })
  boot = JSON.parse(readFileSync(path.join(data.dir, 'bootstrap.json'), 'utf8')) as BootstrapFile
  server.child.kill('SIGTERM')
  await server.exit
  server = undefined
}, 60_000)

afterAll(async () => {
  await killServerProcess(server)
  data.remove()
})

describe('seed-demo', () => {
  it('fills the bootstrap organization; the API then shows identified visitors, companies and ICP matches', async () => {
    const started = Date.now()
    const result = await runCli(['seed-demo', '--visitors', '150'], { DATA_DIR: data.dir })
    expect(result.code, result.stderr).toBe(0)
    const summary = JSON.parse(result.stdout)
    expect(summary).toMatchObject({
      organizationId: boot.organizationId,
      visitors: 150,
      companies: 30,
      contacts: 90,
    })
    expect(summary.pageViews).toBeGreaterThan(150)
    expect(summary.identified).toBeGreaterThan(5)
    expect(summary.icpMatches).toBeGreaterThan(0)
    expect(Date.now() - started).toBeLessThan(60_000)

    // No settling pass of the server's own in the test's time: the figures are the seed's.
    server = await startServerProcess({ DATA_DIR: data.dir, ANALYTICS_SETTLE_INTERVAL_MS: '600000' })
    const api = async (route: string) => {
      const response = await fetch(`${server!.url}/api/v1${route}`, { headers: { 'x-api-key': boot.apiKey } })
      expect(response.status, route).toBe(200)
      return response.json()
    }
    const configs = await api(`/organizations/${boot.organizationId}/icp-configs`)
    expect(configs[0]).toMatchObject({ slug: summary.icpConfig, isActive: true })
    const stats = await api(`/organizations/${boot.organizationId}/icp-configs/stats`)
    expect(stats[0]).toMatchObject({ slug: summary.icpConfig, matches: summary.icpMatches })
    expect(stats[0].visitors).toBeGreaterThan(100)
    // The statistics count the identified visitors and ICP matches at once (the overview's figures).
    const range = `from=${new Date(Date.now() - 31 * 86_400_000).toISOString()}&to=${new Date(Date.now() + 60_000).toISOString()}`
    const totals = await api(`/companies/statistic/${boot.organizationId}/total?${range}`)
    expect(totals).toMatchObject({ identifiedVisitors: summary.identified, icpVisitors: summary.icpMatches })
    // Its filtered traffic (30 UTC days) shows next to the totals.
    const day = (back: number) => new Date(Date.now() - back * 86_400_000).toISOString().slice(0, 10)
    const lastDays = await api(
      `/companies/statistic/${boot.organizationId}/total?from=${day(29)}&to=${day(0)}`,
    )
    expect(summary.filteredHits).toBeGreaterThan(0)
    expect(lastDays.filtered.total).toBe(summary.filteredHits)
    const organization = await api(`/organization/${boot.organizationId}`)
    expect(organization.identificationCredits).toBeLessThan(1000)
  }, 120_000)

  it('explains a bad --visitors in one line', async () => {
    const result = await runCli(['seed-demo', '--visitors', 'lots'], {
      DATA_DIR: tempDir('vid-cli-demo-empty-').dir,
    })
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/--visitors/)
  })
})
