// User-supplied address lists (VPN ranges, Tor exits, extra hosting ranges): one entry per line,
// a CIDR, an address or `start-end`; `#` starts a comment. Lines in other formats keep their
// first address-like token, so Tor's exit-addresses file ("ExitAddress 1.2.3.4 ...") works as is.
import { readFileSync } from 'node:fs'
import { parseRange } from './address.js'
import { createRangeTable, type RangeTable } from './range-table.js'

export interface CidrListResult {
  table: RangeTable<true>
  entries: number
  /** Lines that held no address (line numbers are 1-based). */
  skipped: number[]
}

/** Reads list files into one membership table. */
export function readCidrLists(files: readonly string[]): CidrListResult {
  const ranges: { range: NonNullable<ReturnType<typeof parseRange>>; value: true }[] = []
  const skipped: number[] = []
  for (const file of files) {
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((raw, index) => {
        const line = raw.replace(/#.*/, '').trim()
        if (!line) return
        const range = line
          .split(/[\s,;]+/)
          .map((token) => parseRange(token))
          .find((parsed) => parsed !== undefined)
        if (range) ranges.push({ range, value: true })
        else skipped.push(index + 1)
      })
  }
  return { table: createRangeTable(ranges), entries: ranges.length, skipped }
}
