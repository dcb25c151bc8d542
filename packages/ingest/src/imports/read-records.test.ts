import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { tempDir } from '@visitor-id/core/testing'
import { afterAll, describe, expect, it } from 'vitest'
import { type RecordResult, readRecords } from './read-records.js'
import { companyIpSchema, normalizeCompanyIp } from './schemas.js'

const dir = tempDir('vid-read-')
afterAll(() => dir.remove())

async function readAll(name: string, content: string): Promise<RecordResult[]> {
  const file = path.join(dir.dir, name)
  writeFileSync(file, content)
  const out: RecordResult[] = []
  for await (const item of readRecords(file)) out.push(item)
  return out
}

describe('readRecords', () => {
  it('reads RFC 4180 CSV with quotes, commas and newlines in fields, and reports line numbers', async () => {
    const items = await readAll(
      'a.csv',
      'ID,Name,Description\r\n1,"Acme, Inc.","says ""hi""\nover two lines"\n2,Beta\n\n3,Gamma,ok\n',
    )
    expect(items).toEqual([
      { line: 2, record: { id: '1', name: 'Acme, Inc.', description: 'says "hi"\nover two lines' } },
      { line: 4, error: 'expected 3 fields, found 2' },
      { line: 6, record: { id: '3', name: 'Gamma', description: 'ok' } },
    ])
  })

  it('reads JSONL, lowercasing keys and stringifying values', async () => {
    const items = await readAll(
      'b.jsonl',
      '{"CIDR":"10.0.0.0/8","company_id":7}\nnot json\n[1]\n\n{"cidr":"x"}',
    )
    expect(items).toEqual([
      { line: 1, record: { cidr: '10.0.0.0/8', company_id: '7' } },
      { line: 2, error: 'not a JSON object' },
      { line: 3, error: 'not a JSON object' },
      { line: 5, record: { cidr: 'x' } },
    ])
  })
})

describe('company-ip rows', () => {
  it('accepts a cidr or a start/end pair and rejects the rest with a reason', () => {
    expect(
      companyIpSchema.safeParse(normalizeCompanyIp({ network: '1.2.3.0/24', company: 'c1' })).data,
    ).toEqual({
      cidr: '1.2.3.0/24',
      company_id: 'c1',
    })
    expect(
      companyIpSchema.safeParse(
        normalizeCompanyIp({ start_ip: '1.2.3.4', end_ip: '1.2.3.9', company_id: 'c2' }),
      ).data,
    ).toEqual({ cidr: '1.2.3.4-1.2.3.9', company_id: 'c2' })
    const bad = companyIpSchema.safeParse(normalizeCompanyIp({ cidr: '1.2.3.0/99', company_id: '' }))
    expect(bad.success).toBe(false)
    expect(bad.error?.issues.map((issue) => issue.path[0])).toEqual(['cidr', 'company_id'])
  })
})
