import { createClient } from '@clickhouse/client'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { createChdbConnection } from 'chdb/connection'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bindQueryParams, stringLiteral, typedLiteral } from './bind-params.js'
import { createStore, type Store, StoreError } from './client.js'

// The embedded store binds values itself (bind-params.ts). These properties run on the real engine:
// whatever a value holds, it comes back unchanged, it never changes the shape of the query, and the
// answer is the one the engine's own binder gives.
const tmp = tempDir('vid-bind-')
let store: Store

beforeAll(async () => {
  store = createStore({ database: 'default', dataDir: tmp.dir, sessions: 2 })
  await store.command('CREATE TABLE bind_probe (s String) ENGINE = MergeTree ORDER BY s')
  await store.insert('bind_probe', [{ s: 'safe' }])
})

afterAll(async () => {
  await store.close()
  tmp.remove()
})

const hostile = [
  "'",
  "\\'",
  "\\\\'",
  "x' OR 1=1 --",
  "'); DROP TABLE bind_probe; --",
  "\\' UNION ALL SELECT 'x', 'y', 0 --",
  'a\u0000b',
  '\u0000',
  '\\x27 OR 1 --',
  '{a:String}',
  '} {b:String}',
  '\n; SELECT 1',
  '\r\n\t\u001f\u007f',
  '$$ \u2028 \u2029 "quoted" `backtick`',
  'émoji 😀 combining é',
  "safe' --",
  'safe',
  '',
]
const text = fc.oneof(
  fc.constantFrom(...hostile),
  fc.string({ unit: 'binary-ascii', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.array(fc.constantFrom(...hostile), { maxLength: 4 }).map((parts) => parts.join('')),
)

describe('bindQueryParams on the engine', () => {
  it('returns every string unchanged and never changes the query', async () => {
    await fc.assert(
      fc.asyncProperty(text, text, async (a, b) => {
        const rows = await store.query<{ a: string; b: string; n: number }>(
          'SELECT {a:String} AS a, {b:String} AS b, (SELECT count() FROM bind_probe WHERE s = {a:String}) AS n',
          { a, b },
        )
        expect(rows).toEqual([{ a, b, n: a === 'safe' ? 1 : 0 }])
      }),
      { numRuns: 150 },
    )
  })

  it('binds arrays, numbers, booleans, nulls and UUIDs as their types', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(text, { maxLength: 5 }),
        fc.integer({ min: 0, max: 2 ** 32 - 1 }),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.boolean(),
        fc.uuid(),
        async (list, count, ratio, flag, id) => {
          const [row] = await store.query<Record<string, unknown>>(
            `SELECT {list:Array(String)} AS list, {count:UInt32} AS count, {ratio:Float64} AS ratio,
               {flag:Bool} AS flag, {id:UUID} AS id, {none:Nullable(String)} AS none`,
            { list, count, ratio, flag, id, none: null },
          )
          expect(row).toEqual({ list, count, ratio: Object.is(ratio, -0) ? 0 : ratio, flag, id, none: null })
        },
      ),
      { numRuns: 100 },
    )
  })

  it('gives the same answers as the engine binder', async () => {
    // The engine's own binder, on a session of its own, for comparison.
    const reference = createClient({
      connection: createChdbConnection({ path: `${tmp.dir}/clickhouse` }) as never,
    })
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.string({ unit: 'grapheme', maxLength: 30 }),
          fc.array(fc.string(), { maxLength: 3 }),
          async (s, list) => {
            const sql = 'SELECT {s:String} AS s, length({s:String}) AS n, {list:Array(String)} AS list'
            const params = { s, list }
            const ours = await store.query(sql, params)
            const theirs = await (
              await reference.query({ query: sql, query_params: params, format: 'JSONEachRow' })
            ).json()
            expect(ours).toEqual(theirs)
          },
        ),
        { numRuns: 60 },
      )
    } finally {
      await reference.close()
    }
  })

  it('leaves the table as it was', async () => {
    expect(await store.query('SELECT s FROM bind_probe')).toEqual([{ s: 'safe' }])
  })
})

describe('bindQueryParams', () => {
  it('escapes the quote, the backslash and control characters', () => {
    expect(stringLiteral("it's")).toBe("'it\\'s'")
    expect(stringLiteral('a\\b')).toBe("'a\\\\b'")
    expect(stringLiteral('a\u0000\nb')).toBe("'a\\x00\\x0ab'")
    expect(typedLiteral(['a', null], 'Array(Nullable(String))')).toBe(
      "CAST(['a', NULL] AS Array(Nullable(String)))",
    )
    expect(typedLiteral('2026-01-01', "DateTime64(3, 'UTC')")).toBe(
      "CAST('2026-01-01' AS DateTime64(3, 'UTC'))",
    )
  })

  it('binds in one pass: a value that looks like a placeholder stays a value', () => {
    expect(bindQueryParams('SELECT {a:String}, {b:String}', { a: '{b:String}', b: 'x' })).toBe(
      "SELECT CAST('{b:String}' AS String), CAST('x' AS String)",
    )
  })

  it('refuses what it cannot bind safely, as a query error', () => {
    const bad: [string, Record<string, unknown>][] = [
      ['SELECT {a:String}', {}],
      ['SELECT {a:UInt32}', { a: Number.NaN }],
      ['SELECT {a:Float64}', { a: Number.POSITIVE_INFINITY }],
      ['SELECT {a:String}', { a: { toString: () => "' OR 1" } }],
      ['SELECT {a:String; DROP TABLE x}', { a: 'x' }],
      ["SELECT {a:String') --}", { a: 'x' }],
    ]
    for (const [sql, params] of bad) {
      const error = (() => {
        try {
          bindQueryParams(sql, params)
        } catch (thrown) {
          return thrown
        }
      })()
      expect(error, sql).toBeInstanceOf(StoreError)
      expect((error as StoreError).kind).toBe('query')
    }
  })
})
