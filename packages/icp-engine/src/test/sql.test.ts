// Differential test against the real engine: random rules over random facts, evaluated by
// `evaluate` in JS and by `toClickHouseSql` inside embedded ClickHouse (chdb), must agree on every
// row, group by group. This is what makes recalculating scores inside the database trustworthy.

import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { type ClickHouseClient, createClient } from '@clickhouse/client'
import { createChdbConnection } from 'chdb/connection'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  evaluate,
  type Facts,
  type FactValue,
  factKeyOf,
  parseRules,
  type Rules,
  SqlCompileError,
  toClickHouseSql,
} from '../index.js'
import { factValueArb, rulesInputArb } from './arbitraries.js'
import { CREATE_TABLE, isStorable, SQL_COLUMNS, TEST_COLUMNS, toColumnValue } from './columns.js'
import { EXAMPLES } from './examples.js'

// chdb re-declares @clickhouse/client-common's Connection type; the shapes are the same.
type ClientConnection = NonNullable<Parameters<typeof createClient>[0]>['connection']

let client: ClickHouseClient
let dir: string
const rows: { id: number; facts: Facts }[] = []

async function query<T>(sql: string, params: Record<string, unknown> = {}): Promise<T[]> {
  const result = await client.query({ query: sql, query_params: params, format: 'JSONEachRow' })
  return result.json<T>()
}

/** Inserts facts as rows of `table` (each fact must be storable, see columns.ts). */
async function insertFacts(table: string, list: { id: number; facts: Facts }[]): Promise<void> {
  const values = list.map(({ id, facts }) => {
    const row: Record<string, unknown> = { id }
    for (const c of TEST_COLUMNS) row[c.key] = toColumnValue(c, facts[c.key])
    return row
  })
  await client.insert({ table, values, format: 'JSONEachRow' })
}

/** What a row can faithfully hold: unstorable facts become missing (non-null Bool: false). */
function storable(facts: Facts): Facts {
  const out: Record<string, FactValue> = {}
  for (const c of TEST_COLUMNS) {
    const v = facts[c.key]
    const fallback = c.chType === 'Bool' ? false : undefined
    out[c.key] = isStorable(toColumnValue(c, v)) ? v : fallback
  }
  return out as Facts
}

const storableFactsArb: fc.Arbitrary<Facts> = fc
  .tuple(...TEST_COLUMNS.map((c) => factValueArb(c.kind)))
  .map((values) => storable(Object.fromEntries(TEST_COLUMNS.map((c, i) => [c.key, values[i]])) as Facts))

interface SqlRow {
  id: number
  m: number | string
  s: number | string
  gm: (number | string)[]
  gs: (number | string)[]
}

async function runSql(rules: Rules, table: string, where = '') {
  const sql = toClickHouseSql(rules, SQL_COLUMNS)
  const gm = sql.groups.map((g) => g.matched).join(', ')
  const gs = sql.groups.map((g) => g.score).join(', ')
  const text = `SELECT id, ${sql.matched} AS m, ${sql.score} AS s, [${gm}] AS gm, [${gs}] AS gs FROM ${table} ${where} ORDER BY id`
  return (await query<SqlRow>(text, sql.params)).map((r) => ({
    id: Number(r.id),
    matched: Number(r.m) === 1,
    score: Number(r.s),
    groups: r.gm.map((m, i) => ({ matched: Number(m) === 1, score: Number(r.gs[i]) })),
  }))
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'icp-'))
  client = createClient({ connection: createChdbConnection({ path: dir }) as unknown as ClientConnection })
  await query('SELECT 1')
  await client.command({ query: CREATE_TABLE('facts') })
  const edge: Facts[] = [
    {},
    { is_hosting: true, page_view_count: '1e400', company_size: 0, icp_score: [0, 100], domain: '' },
    { utm_term: ['', 'x'], session_count: ['-0', ' 1', '.5'], pages: ['/Pricing', ''], country: 'FR' },
  ]
  const random = fc.sample(storableFactsArb, { numRuns: 1500, seed: 20240611 })
  ;[...edge.map(storable), ...random].forEach((facts, id) => {
    rows.push({ id, facts })
  })
  await insertFacts('facts', rows)
}, 120_000)

afterAll(async () => {
  await client?.close()
  if (dir) fs.rmSync(dir, { recursive: true, force: true })
})

describe('toClickHouseSql against ClickHouse', () => {
  it('stores the test facts faithfully', async () => {
    const [count] = await query<{ c: string }>('SELECT count() AS c FROM facts')
    expect(Number(count?.c)).toBe(rows.length)
  })

  it('agrees with evaluate on every row for random rules (differential)', async () => {
    await fc.assert(
      fc.asyncProperty(rulesInputArb(), async (input) => {
        const rules = parseRules(input)
        const got = await runSql(rules, 'facts')
        expect(got.length).toBe(rows.length)
        for (const row of got) {
          const facts = rows[row.id]?.facts as Facts
          const want = evaluate(rules, facts)
          const expected = {
            id: row.id,
            matched: want.matched,
            score: want.score,
            groups: want.groups.map((g) => ({ matched: g.matched, score: g.score })),
          }
          if (JSON.stringify(row) !== JSON.stringify(expected)) {
            expect({ ...row, facts }).toEqual({ ...expected, facts })
          }
        }
      }),
      { numRuns: 250 },
    )
  })

  it('agrees with every storable example of the comparator table', async () => {
    const storable = EXAMPLES.map((example, id) => ({ example, id })).filter(({ example }) => {
      const column = TEST_COLUMNS.find((c) => c.key === factKeyOf(example[0]))
      return column !== undefined && isStorable(toColumnValue(column, example[3]))
    })
    expect(storable.length).toBeGreaterThan(EXAMPLES.length * 0.7)
    await client.command({ query: CREATE_TABLE('examples') })
    await insertFacts(
      'examples',
      storable.map(({ example, id }) => ({ id, facts: { [factKeyOf(example[0])]: example[3] } as Facts })),
    )
    for (const { example, id } of storable) {
      const [type, comparator, value, , expected] = example
      const rules = parseRules({ groups: [{ operator: 'AND', conditions: [{ type, comparator, value }] }] })
      const [row] = await runSql(rules, 'examples', `WHERE id = ${id}`)
      expect({ example, matched: row?.matched }).toEqual({ example, matched: expected })
    }
  })
})

describe('toClickHouseSql output', () => {
  const rules = parseRules({
    groups: [
      {
        operator: 'AND',
        conditions: [
          { type: 'industry', comparator: 'equals', value: "x'); DROP TABLE facts; --" },
          { type: 'page_contains', comparator: 'contains', value: '/pricing' },
        ],
      },
    ],
  })

  it('passes values only as query parameters', () => {
    const sql = toClickHouseSql(rules, {
      industry: { sql: 'industry' },
      pages: { sql: 'pages', array: true },
    })
    expect(sql.matched).not.toContain('DROP')
    expect(sql.score).not.toContain('pricing')
    expect(Object.values(sql.params)).toEqual(["x'); drop table facts; --", '/pricing'])
  })

  it('uses the given parameter prefix, and rejects a bad one', () => {
    const columns = { industry: { sql: 'industry' }, pages: { sql: 'pages', array: true } }
    const sql = toClickHouseSql(rules, columns, { paramPrefix: 'r7_' })
    expect(Object.keys(sql.params)).toEqual(['r7_0', 'r7_1'])
    expect(() => toClickHouseSql(rules, columns, { paramPrefix: 'a-b' })).toThrow(SqlCompileError)
  })

  it('treats a condition type without a column as an error, naming every one', () => {
    expect(() => toClickHouseSql(rules, {})).toThrow(/industry, page_contains/)
    expect(() => toClickHouseSql(rules, { industry: { sql: 'industry' } })).toThrow(SqlCompileError)
  })

  it('rejects columns whose storage cannot hold the condition kind', () => {
    const size = parseRules({
      groups: [{ operator: 'AND', conditions: [{ type: 'is_hosting', comparator: 'exists' }] }],
    })
    expect(() => toClickHouseSql(size, { is_hosting: { sql: 'h', array: true } })).toThrow(/cannot read/)
    const city = parseRules({
      groups: [{ operator: 'AND', conditions: [{ type: 'city', comparator: 'exists' }] }],
    })
    expect(() => toClickHouseSql(city, { city: { sql: 'c', storage: 'number' } })).toThrow(/cannot read/)
  })

  it('lets page types have their own column', () => {
    const sql = toClickHouseSql(rules, { industry: { sql: 'industry' }, page_contains: { sql: 'visited' } })
    expect(sql.matched).toContain('(visited)')
  })
})
