import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { tempDir } from '@visitor-id/testing/temp-dir'
import fc from 'fast-check'
import { afterAll, describe, expect, it } from 'vitest'
import { createCsvParser, type RecordResult, readRecords } from './read-records.js'
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

/** The first CSV parser, one character at a time: the reference the faster one must agree with. */
function referenceCsv(chunks: string[]) {
  let field = ''
  let row: string[] = []
  let quoted = false
  let afterQuote = false
  let line = 1
  let rowLine = 1
  const rows: { line: number; cells: string[] }[] = []
  const endRow = () => {
    row.push(field)
    field = ''
    if (row.length > 1 || row[0] !== '') rows.push({ line: rowLine, cells: row })
    row = []
  }
  for (const char of chunks.join('')) {
    if (quoted) {
      if (char === '"') {
        quoted = false
        afterQuote = true
      } else {
        if (char === '\n') line += 1
        field += char
      }
      continue
    }
    if (char === '"') {
      if (afterQuote) field += '"'
      quoted = true
      afterQuote = false
      continue
    }
    afterQuote = false
    if (char === ',') {
      row.push(field)
      field = ''
    } else if (char === '\n') {
      endRow()
      line += 1
      rowLine = line
    } else if (char !== '\r') field += char
  }
  if (!quoted && (field !== '' || row.length > 0)) endRow()
  return { rows, unclosedAt: quoted ? rowLine : undefined }
}

describe('createCsvParser', () => {
  it('agrees with the character-at-a-time parser on any text, however it is chunked', () => {
    const text = fc.string({ unit: fc.constantFrom('a', 'b', ' ', ',', '"', '\n', '\r', 'é'), maxLength: 80 })
    fc.assert(
      fc.property(text, fc.array(fc.nat(80), { maxLength: 6 }), (input, cuts) => {
        const points = [...new Set(cuts.map((cut) => Math.min(cut, input.length)))].sort((a, b) => a - b)
        const chunks = [0, ...points].map((start, i) => input.slice(start, [...points, input.length][i]))
        const parser = createCsvParser()
        const rows = chunks.flatMap((chunk, i) => parser.push(chunk, i === chunks.length - 1))
        expect({ rows, unclosedAt: parser.unclosedAt }).toEqual(referenceCsv(chunks))
      }),
      { numRuns: 2000 },
    )
  })
})
