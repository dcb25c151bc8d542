import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { createStore, migrate, type Store } from '@visitor-id/core/store'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ImportProgress, importCompanies } from './index.js'

// Imports into a real embedded store: counts, rejected rows and progress.
const dir = tempDir('vid-import-unit-')
let store: Store

beforeAll(async () => {
  store = createStore({ database: 'default', dataDir: dir.dir })
  await migrate(store)
})

afterAll(async () => {
  await store?.close()
  dir.remove()
})

const file = (name: string, content: string) => {
  const target = path.join(dir.dir, name)
  writeFileSync(target, content)
  return target
}

describe('importCompanies', () => {
  it('rejects rows whose domain is not one, and counts rows read and imported apart', async () => {
    const csv = file(
      'companies.csv',
      [
        'id,name,domain',
        'acme,Acme,https://www.Acme.example/about',
        'bad1,Bad One,not a domain',
        'globex,Globex,',
        'bad2,Bad Two,localhost',
        'initech,Initech,INITECH.example',
      ].join('\n'),
    )
    const updates: ImportProgress[] = []
    const report = await importCompanies({
      store,
      file: csv,
      onProgress: (p) => updates.push(p),
      batchSize: 2,
    })
    expect(report).toMatchObject({ kind: 'companies', read: 5, imported: 3, rejected: 2 })
    expect(report.rejects).toEqual([
      { line: 3, reason: 'domain: not a domain name such as example.com' },
      { line: 5, reason: 'domain: not a domain name such as example.com' },
    ])
    // The last update is the final state, the whole file read.
    expect(updates.at(-1)).toEqual({
      bytesRead: expect.any(Number),
      totalBytes: expect.any(Number),
      rowsRead: 5,
      accepted: 3,
      rejected: 2,
    })
    expect(updates.at(-1)!.bytesRead).toBe(updates.at(-1)!.totalBytes)
    for (const update of updates) expect(update.accepted + update.rejected).toBe(update.rowsRead)

    const rows = await store.query<{ id: string; domain: string }>(
      'SELECT id, domain FROM companies FINAL ORDER BY id',
    )
    expect(rows).toEqual([
      { id: 'acme', domain: 'acme.example' },
      { id: 'globex', domain: '' },
      { id: 'initech', domain: 'initech.example' },
    ])
  })
})
