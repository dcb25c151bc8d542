import { randomUUID } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import {
  killServerProcess,
  runCli,
  type ServerProcess,
  startServerProcess,
} from '@visitor-id/testing/server-process'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, describe, expect, it } from 'vitest'
import { type BootstrapKeys, collect, eventually, pixelHit } from './fixtures/hits.js'

// The dataset imports through the admin CLI, then company identification by IP in the server.
const data = tempDir('vid-import-')
const file = (name: string, content: string) => {
  const target = path.join(data.dir, name)
  writeFileSync(target, content)
  return target
}
let server: ServerProcess | undefined

afterAll(async () => {
  await killServerProcess(server)
  data.remove()
})

const env = { DATA_DIR: path.join(data.dir, 'data') }

describe('import commands', () => {
  it('imports companies from CSV and reports rejected rows with their line numbers', {
    timeout: 60_000,
  }, async () => {
    const csv = file(
      'companies.csv',
      [
        'id,name,domain,industry,employee_size_range,website',
        'acme,"Acme, Inc.",https://www.Acme.example/about,Manufacturing,51-200,https://acme.example',
        ',Nameless,nameless.example,,,',
        'globex,Globex,globex.example,Energy,1001-5000,',
        'row,with,too,many,fields,here,extra',
        'broken,"Broken',
        'never,seen,as,a,row,',
      ].join('\n'),
    )
    const result = await runCli(['import', 'companies', csv], env)
    expect(result.code, result.stderr).toBe(0)
    const report = JSON.parse(result.stdout)
    expect(report).toMatchObject({ kind: 'companies', read: 5, imported: 2, rejected: 3 })
    expect(report.rejects).toEqual([
      { line: 3, reason: 'id: id is required' },
      { line: 5, reason: 'expected 6 fields, found 7' },
      { line: 6, reason: 'a quoted field is never closed' },
    ])
  })

  it('rejects companies whose domain is not one, counting rows read and imported apart', {
    timeout: 60_000,
  }, async () => {
    const jsonl = file(
      'domains.jsonl',
      [
        { id: 'd1', name: 'One', domain: 'one.example' },
        { id: 'd2', name: 'Two', domain: 'not a domain' },
        { id: 'd3', name: 'Three', domain: 'WWW.Three.Example' },
        { id: 'd4', name: 'Four', domain: 'http://192.0.2.1/' },
        { id: 'd5', name: 'Five' },
      ]
        .map((row) => JSON.stringify(row))
        .join('\n'),
    )
    const result = await runCli(['import', 'companies', jsonl], env)
    expect(result.code, result.stderr).toBe(0)
    const report = JSON.parse(result.stdout)
    expect(report).toMatchObject({ kind: 'companies', read: 5, imported: 3, rejected: 2 })
    expect(report.rejects).toEqual([
      { line: 2, reason: 'domain: not a domain name such as example.com' },
      { line: 4, reason: 'domain: not a domain name such as example.com' },
    ])
  })

  it('imports company IP ranges from JSONL, writing every reject to --rejects', {
    timeout: 60_000,
  }, async () => {
    const jsonl = file(
      'ranges.jsonl',
      [
        JSON.stringify({ cidr: '203.0.113.0/24', company_id: 'acme' }),
        JSON.stringify({ cidr: '203.0.113.128/25', company_id: 'globex' }),
        JSON.stringify({ start_ip: '198.51.100.10', end_ip: '198.51.100.20', company: 'acme' }),
        JSON.stringify({ cidr: '2001:db8:abcd::/48', company_id: 'globex' }),
        JSON.stringify({ cidr: '300.1.1.0/24', company_id: 'x' }),
        'not json',
        JSON.stringify({ cidr: '10.0.0.0/8' }),
      ].join('\n'),
    )
    const rejects = path.join(data.dir, 'rejects.csv')
    const result = await runCli(['import', 'company-ips', jsonl, '--rejects', rejects], env)
    expect(result.code, result.stderr).toBe(0)
    expect(JSON.parse(result.stdout)).toMatchObject({
      kind: 'company-ips',
      read: 7,
      imported: 4,
      rejected: 3,
    })
    expect(readFileSync(rejects, 'utf8')).toBe(
      'line,reason\n' +
        '5,"cidr: not a CIDR, address or start-end range"\n' +
        '6,"not a JSON object"\n' +
        '7,"company_id: company_id is required"\n',
    )
  })

  it('explains usage mistakes in one line', async () => {
    const missing = await runCli(['import', 'company-ips', path.join(data.dir, 'nope.csv')], env)
    expect(missing.code).toBe(2)
    expect(missing.stderr).toMatch(/^visitor-id: No such file: /)
    const kind = await runCli(['import', 'people', 'x.csv'], env)
    expect(kind.code).toBe(2)
    expect(kind.stderr).toMatch(/company-ips or companies/)
  })

  it('identifies the company of a visitor by imported range (most specific wins)', {
    timeout: 60_000,
  }, async () => {
    server = await startServerProcess({ ...env, TRUST_PROXY: '1' })
    const keys = JSON.parse(readFileSync(path.join(env.DATA_DIR, 'bootstrap.json'), 'utf8')) as BootstrapKeys
    const cases: [string, string][] = [
      ['203.0.113.5', 'acme'],
      ['203.0.113.200', 'globex'],
      ['198.51.100.15', 'acme'],
      ['2001:db8:abcd:12::1', 'globex'],
    ]
    for (const [ip, company] of cases) {
      const visitor = randomUUID()
      expect(
        (await collect(server.url, pixelHit(keys.trackingKey, { v: visitor }), { 'x-forwarded-for': ip }))
          .status,
      ).toBe(202)
      const profile = await eventually(async () => {
        const response = await fetch(
          `${server!.url}/api/v1/visitor-tracking/${keys.organizationId}/visitors/${visitor}`,
          {
            headers: { 'x-api-key': keys.apiKey },
          },
        )
        return response.status === 200 ? ((await response.json()) as { company: unknown }) : undefined
      })
      expect(profile.company, ip).toMatchObject({ id: company })
    }
  })
})
