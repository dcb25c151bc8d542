import { type Readable, Writable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { describe, expect, it } from 'vitest'
import { type CsvColumn, csvCell, encodeCsv } from './csv.js'

const text = async (stream: Readable): Promise<string> => {
  const chunks: Buffer[] = []
  for await (const chunk of stream) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

type Row = { name: string | null | undefined; count: number | undefined; ok: boolean }
const columns: CsvColumn<Row>[] = [
  { header: 'name', value: (row) => row.name },
  { header: 'count', value: (row) => row.count },
  { header: 'ok', value: (row) => row.ok },
]

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

describe('encodeCsv', () => {
  const rows: Row[] = [
    { name: 'Acme, Inc.', count: -3, ok: true },
    { name: null, count: undefined, ok: false },
    { name: '=cmd|/c calc', count: 0, ok: true },
  ]

  it('writes the header row, then a CRLF-ended line per row', async () => {
    expect(await text(encodeCsv(columns, rows))).toBe(
      'name,count,ok\r\n"Acme, Inc.",-3,true\r\n,,false\r\n\'=cmd|/c calc,0,true\r\n',
    )
  })

  it('writes only the header row for no rows, from sync or async iterables', async () => {
    expect(await text(encodeCsv(columns, []))).toBe('name,count,ok\r\n')
    async function* none(): AsyncGenerator<Row> {}
    expect(await text(encodeCsv(columns, none()))).toBe('name,count,ok\r\n')
  })

  it('guards and quotes headers like any cell', async () => {
    const odd: CsvColumn<Row>[] = [{ header: '-a, "b"', value: (row) => row.name }]
    expect(await text(encodeCsv(odd, []))).toBe(`"'-a, ""b"""\r\n`)
  })

  it('starts with a UTF-8 BOM only when asked', async () => {
    const bytes = async (stream: Readable) => Buffer.from(await text(stream), 'utf8')
    const withBom = await bytes(encodeCsv(columns, rows.slice(0, 1), { bom: true }))
    expect([...withBom.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf])
    expect(withBom.subarray(3).toString('utf8')).toBe('name,count,ok\r\n"Acme, Inc.",-3,true\r\n')
    const without = await bytes(encodeCsv(columns, rows.slice(0, 1)))
    expect(without[0]).toBe('n'.charCodeAt(0))
    expect(await text(encodeCsv(columns, [], { bom: false }))).toBe('name,count,ok\r\n')
  })

  it('errors the stream when the rows fail', async () => {
    async function* failing(): AsyncGenerator<Row> {
      yield rows[0]!
      throw new Error('query failed')
    }
    await expect(text(encodeCsv(columns, failing()))).rejects.toThrow('query failed')
  })

  it('pulls rows only when read, and stops pulling when destroyed', async () => {
    let pulled = 0
    let finished = false
    async function* many(): AsyncGenerator<Row> {
      try {
        for (let i = 0; i < 1_000_000; i++) {
          pulled++
          yield { name: `company ${i}`, count: i, ok: true }
        }
      } finally {
        finished = true
      }
    }
    const stream = encodeCsv(columns, many())
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(pulled).toBe(0)
    const iterator = stream[Symbol.asyncIterator]()
    const first = await iterator.next()
    expect(String(first.value)).toMatch(/^name,count,ok\r\ncompany 0,0,true\r\n/)
    await new Promise((resolve) => setTimeout(resolve, 20))
    // A chunk and the stream's buffer: a few thousand rows of a million at most.
    expect(pulled).toBeGreaterThan(0)
    expect(pulled).toBeLessThan(5_000)
    await iterator.return?.()
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(stream.destroyed).toBe(true)
    expect(finished).toBe(true)
    expect(pulled).toBeLessThan(5_000)
  })

  it('streams a million rows to a slow reader with flat memory, never far ahead of it', async () => {
    const total = 1_000_000
    // About 100 bytes a line: 100 MB of CSV, which could not sit in memory under the bound below.
    const filler = 'x'.repeat(70)
    let pulled = 0
    let written = 0
    let maxLead = 0
    let maxMemory = 0
    const memory = () => {
      const usage = process.memoryUsage()
      return usage.heapUsed + usage.arrayBuffers
    }
    const baseline = memory()
    async function* rows(): AsyncGenerator<Row> {
      for (let i = 0; i < total; i++) {
        pulled++
        maxLead = Math.max(maxLead, pulled - written)
        if (i % 20_000 === 0) maxMemory = Math.max(maxMemory, memory())
        yield { name: `company ${i} ${filler}`, count: i, ok: i % 2 === 0 }
      }
    }
    let bytes = 0
    let lines = 0
    const sink = new Writable({
      highWaterMark: 16 * 1024,
      write(chunk: Buffer, _encoding, callback) {
        bytes += chunk.length
        for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines++
        written = Math.max(0, lines - 1)
        // A reader slower than the producer: every chunk waits for the next turn of the loop.
        setImmediate(callback)
      },
    })
    await pipeline(encodeCsv(columns, rows()), sink)
    expect(lines).toBe(total + 1)
    expect(bytes).toBeGreaterThan(90 * 1024 * 1024)
    expect(maxLead).toBeLessThan(2_000)
    expect(maxMemory - baseline).toBeLessThan(50 * 1024 * 1024)
  }, 120_000)
})
