import { describe, expect, it } from 'vitest'
import type { ImportProgress } from './index.js'
import { createProgressBar, progressLine } from './progress.js'

const at = (progress: Partial<ImportProgress>): ImportProgress => ({
  bytesRead: 100,
  totalBytes: 100,
  rowsRead: 0,
  accepted: 0,
  rejected: 0,
  ...progress,
})

/** A terminal that records what is written to it. */
function fakeTerminal(isTTY: boolean) {
  const written: string[] = []
  const stream = { isTTY, write: (text: string) => written.push(text) > 0 } as unknown as NodeJS.WriteStream
  return { stream, written }
}

describe('progressLine', () => {
  it('counts rows read, imported and rejected apart', () => {
    expect(progressLine('import companies', at({ rowsRead: 5, accepted: 3, rejected: 2 }), 10)).toBe(
      'import companies [##########] 100% 5 rows read, 3 imported, 2 rejected',
    )
    expect(progressLine('x', at({ bytesRead: 25, rowsRead: 1, accepted: 1 }), 4)).toBe(
      'x [#---]  25% 1 row read, 1 imported, 0 rejected',
    )
    expect(progressLine('x', at({ rowsRead: 12345, accepted: 12000, rejected: 345 }), 1)).toContain(
      '12,345 rows read, 12,000 imported, 345 rejected',
    )
  })
})

describe('createProgressBar', () => {
  it('ends on a terminal with the final counts, whatever was drawn last', () => {
    const { stream, written } = fakeTerminal(true)
    const bar = createProgressBar(stream, 'import companies')
    bar.update(at({ bytesRead: 100, rowsRead: 3, accepted: 3 }))
    // Within 100 ms: not drawn, but remembered.
    bar.update(at({ bytesRead: 100, rowsRead: 5, accepted: 3, rejected: 2 }))
    bar.done()
    expect(written.at(-2)).toContain('100% 5 rows read, 3 imported, 2 rejected')
    expect(written.at(-1)).toBe('\n')
  })

  it('writes nothing when the stream is not a terminal', () => {
    const { stream, written } = fakeTerminal(false)
    const bar = createProgressBar(stream)
    bar.update(at({ rowsRead: 1 }))
    bar.done()
    expect(written).toEqual([])
  })
})
