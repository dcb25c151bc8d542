import { type Readable, Writable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { describe, expect, it } from 'vitest'
import { type CsvColumn, csvText, encodeCsv } from './csv.js'

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

describe('csvText', () => {
  async function* chunks(...texts: string[]): AsyncGenerator<string> {
    yield* texts
  }

  it('writes the header row (guarded like any cell), then the lines as given', async () => {
    expect(await text(csvText(['id', '=x'], chunks('1,a\r\n', '2,b\r\n')))).toBe("id,'=x\r\n1,a\r\n2,b\r\n")
    expect(await text(csvText(['id'], chunks()))).toBe('id\r\n')
    const withBom = Buffer.from(await text(csvText(['id'], chunks('1\r\n'), { bom: true })), 'utf8')
    expect([...withBom.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf])
  })

  it('sends the header with the first lines, not alone', async () => {
    const iterator = csvText(['id'], chunks('1\r\n', '2\r\n'))[Symbol.asyncIterator]()
    expect(String((await iterator.next()).value)).toBe('id\r\n1\r\n')
    await iterator.return?.()
  })

  it('errors the stream when the lines fail', async () => {
    async function* failing(): AsyncGenerator<string> {
      yield '1\r\n'
      throw new Error('slice failed')
    }
    await expect(text(csvText(['id'], failing()))).rejects.toThrow('slice failed')
  })
})
