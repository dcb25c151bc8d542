import { tempDir } from '@visitor-id/testing/temp-dir'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { csvCell, csvCellSql, isoCellSql } from './csv.js'
import { createStore, type Store } from './store/client.js'

describe('csvCell', () => {
  it('quotes fields with a quote, comma, CR or LF, doubling quotes', () => {
    expect(csvCell('plain text')).toBe('plain text')
    expect(csvCell('a,b')).toBe('"a,b"')
    expect(csvCell('say "hi"')).toBe('"say ""hi"""')
    expect(csvCell('two\nlines')).toBe('"two\nlines"')
    expect(csvCell('two\r\nlines')).toBe('"two\r\nlines"')
    expect(csvCell('"')).toBe('""""')
    expect(csvCell('')).toBe('')
    expect(csvCell('Zürich, 日本')).toBe('"Zürich, 日本"')
  })

  it('guards strings that a spreadsheet would run as a formula, tab and CR included', () => {
    expect(csvCell('=HYPERLINK("http://x")')).toBe(`"'=HYPERLINK(""http://x"")"`)
    expect(csvCell('+1')).toBe("'+1")
    expect(csvCell('-5')).toBe("'-5")
    expect(csvCell('@SUM(A1)')).toBe("'@SUM(A1)")
    expect(csvCell('\tcmd')).toBe("'\tcmd")
    // A leading CR is guarded, and the CR makes the field quoted.
    expect(csvCell('\r=1')).toBe(`"'\r=1"`)
    // Only the first character counts.
    expect(csvCell('a=b')).toBe('a=b')
    expect(csvCell(' =1')).toBe(' =1')
  })

  it('writes JS numbers as they are, negative ones included; NaN and infinities empty', () => {
    expect(csvCell(-5)).toBe('-5')
    expect(csvCell(0)).toBe('0')
    expect(csvCell(3.25)).toBe('3.25')
    expect(csvCell(-1e-7)).toBe('-1e-7')
    expect(csvCell(Number.NaN)).toBe('')
    expect(csvCell(Number.NEGATIVE_INFINITY)).toBe('')
  })

  it('writes null and undefined as empty cells, booleans as true / false', () => {
    expect(csvCell(null)).toBe('')
    expect(csvCell(undefined)).toBe('')
    expect(csvCell(true)).toBe('true')
    expect(csvCell(false)).toBe('false')
  })
})

// The engine's forms write what the JS forms write, on the real engine.
describe('csvCellSql and isoCellSql on the engine', () => {
  const tmp = tempDir('vid-csv-')
  let store: Store
  beforeAll(() => {
    store = createStore({ database: 'default', dataDir: tmp.dir, sessions: 2 })
  })
  afterAll(async () => {
    await store.close()
    tmp.remove()
  })

  const cellOf = async (value: string) => {
    const [row] = await store.query<{ cell: string }>(`SELECT ${csvCellSql('{value:String}')} AS cell`, {
      value,
    })
    return row?.cell
  }

  it('writes the cells of the examples as csvCell does', async () => {
    for (const value of ['plain', 'a,b', 'say "hi"', 'two\r\nlines', '"', '', '=1', '\r=1', '-5', ' =1']) {
      expect(await cellOf(value)).toBe(csvCell(value))
    }
  })

  it('writes any string as csvCell does', async () => {
    const special = fc.constantFrom('=', '+', '-', '@', '\t', '\r', '\n', '"', ',', "'", 'é', '日', '😀', ' ')
    const text = fc.oneof(
      fc.string({ unit: 'binary-ascii', maxLength: 30 }),
      fc.string({ unit: 'grapheme', maxLength: 30 }),
      fc
        .array(fc.oneof(special, fc.string({ maxLength: 3 })), { maxLength: 8 })
        .map((parts) => parts.join('')),
    )
    await fc.assert(
      fc.asyncProperty(text, async (value) => {
        expect(await cellOf(value)).toBe(csvCell(value))
      }),
      { numRuns: 300 },
    )
  })

  it('writes a DateTime64(3) as Date#toISOString does', async () => {
    const dates = fc.date({
      min: new Date('1970-01-01T00:00:00.000Z'),
      max: new Date('2199-12-31T23:59:59.999Z'),
      noInvalidDate: true,
    })
    await fc.assert(
      fc.asyncProperty(dates, async (date) => {
        const [row] = await store.query<{ cell: string }>(
          `SELECT ${isoCellSql("{at:DateTime64(3, 'UTC')}")} AS cell`,
          { at: date.toISOString() },
        )
        expect(row?.cell).toBe(date.toISOString())
      }),
      { numRuns: 100 },
    )
  })
})
