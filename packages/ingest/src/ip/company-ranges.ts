// Company IP ranges (imported with `import company-ips`), held in memory for lookups on the hot
// path and reloaded from ClickHouse when an import finishes (here, or announced by another process:
// imports/applied.ts) and periodically, as a safety net for a lost announcement.
import type { Store } from '@visitor-id/core/store'
import { parseRange } from './address.js'
import { createRangeTable, type RangeTable } from './range-table.js'

export interface CompanyRanges {
  /** The company of the most specific imported range containing the address. */
  readonly table: RangeTable<string>
  /** Reads every range again; the old table serves until the new one is ready. */
  reload(): Promise<number>
}

/**
 * Loads the company IP ranges of the store.
 * @example const ranges = await loadCompanyRanges(store); ranges.table.get(parseIp('1.2.3.4')!)
 */
export async function loadCompanyRanges(store: Store): Promise<CompanyRanges> {
  let table: RangeTable<string> = createRangeTable([])
  const reload = async () => {
    const rows = await store.query<{ cidr: string; company_id: string }>(
      'SELECT cidr, company_id FROM company_ip_ranges FINAL',
    )
    const entries = []
    for (const row of rows) {
      const range = parseRange(row.cidr)
      if (range && row.company_id) entries.push({ range, value: row.company_id })
    }
    table = createRangeTable(entries)
    return table.size
  }
  await reload()
  return {
    get table() {
      return table
    },
    reload,
  }
}
