import { readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { findContactsByKeys } from '@visitor-id/core/identification'
import { sha256Hex } from '@visitor-id/core/ids'
import { createStore } from '@visitor-id/core/store'
import { runCli } from '@visitor-id/testing/server-process'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, describe, expect, it } from 'vitest'

// `import contacts` through the admin CLI: the report, every reject in --rejects, and the contacts
// found afterwards by email, personal email and hash.
const data = tempDir('vid-contacts-cli-')
const file = (name: string, content: string) => {
  const target = path.join(data.dir, name)
  writeFileSync(target, content)
  return target
}

afterAll(() => data.remove())

const env = { DATA_DIR: path.join(data.dir, 'data') }

describe('import contacts', () => {
  it('imports a CSV, reports rejected rows with their line numbers and writes them to --rejects', {
    timeout: 60_000,
  }, async () => {
    const csv = file(
      'contacts.csv',
      [
        'email,personal_email,first_name,last_name,job_title,company_domain',
        'Jane@Acme.example,jane@mail.example,Jane,Doe,"Head of ""Growth"", EMEA",acme.example',
        ',,Nobody,Known,,',
        'jane at acme,,Bad,Email,,',
        'sam@globex.example,SAM@Mail.example,Sam,Roe,CTO,https://globex.example/',
        'row,with,too,many,fields,here,extra',
      ].join('\n'),
    )
    const rejects = path.join(data.dir, 'rejects.csv')
    const result = await runCli(['import', 'contacts', csv, '--rejects', rejects], env)
    expect(result.code, result.stderr).toBe(0)
    const report = JSON.parse(result.stdout)
    expect(report).toMatchObject({ kind: 'contacts', read: 5, imported: 2, rejected: 3 })
    expect(report.rejects).toEqual([
      { line: 3, reason: 'a contact needs an id, email, personal_email or linkedin_url' },
      { line: 4, reason: 'email: not an email address' },
      { line: 6, reason: 'expected 6 fields, found 7' },
    ])
    expect(readFileSync(rejects, 'utf8')).toBe(
      'line,reason\n' +
        '3,"a contact needs an id, email, personal_email or linkedin_url"\n' +
        '4,"email: not an email address"\n' +
        '6,"expected 6 fields, found 7"\n',
    )

    // The CLI has released the data directory: look the contacts up as identification does.
    const store = createStore({ database: 'default', dataDir: env.DATA_DIR })
    try {
      const keys = [
        'jane@acme.example',
        'JANE@MAIL.EXAMPLE',
        sha256Hex('sam@globex.example'),
        sha256Hex('sam@mail.example'),
      ]
      const found = await findContactsByKeys(store, keys)
      expect(keys.map((key) => found.get(key)?.first_name)).toEqual(['Jane', 'Jane', 'Sam', 'Sam'])
      expect(found.get('jane@acme.example')).toMatchObject({
        job_title: 'Head of "Growth", EMEA',
        company_domain: 'acme.example',
      })
      expect(found.get(sha256Hex('sam@globex.example'))?.company_domain).toBe('globex.example')
    } finally {
      await store.close()
    }
  })

  it('imports JSONL and names contacts among the datasets in usage errors', { timeout: 60_000 }, async () => {
    const jsonl = file(
      'contacts.jsonl',
      [
        JSON.stringify({ id: 'p-1', email: 'pat@initech.example', first_name: 'Pat', children: 1 }),
        JSON.stringify({ id: 'p-2', personal_email: 'x'.repeat(300) }),
      ].join('\n'),
    )
    const result = await runCli(['import', 'contacts', jsonl], env)
    expect(result.code, result.stderr).toBe(0)
    expect(JSON.parse(result.stdout)).toMatchObject({
      kind: 'contacts',
      read: 2,
      imported: 1,
      rejected: 1,
      rejects: [{ line: 2, reason: 'personal_email: longer than 254 characters' }],
    })

    const kind = await runCli(['import', 'people', 'x.csv'], env)
    expect(kind.code).toBe(2)
    expect(kind.stderr).toMatch(/contacts, company-ips or companies/)
    const replace = await runCli(['import', 'contacts', jsonl, '--replace'], env)
    expect(replace.code).toBe(2)
    expect(replace.stderr).toMatch(/--replace applies to company-ips only/)
  })
})
